import { v7 } from 'uuid';

/**
 * A new event id: a UUIDv7, ordered by time, so the log's index of ids grows at its end instead of
 * touching a random page for every event.
 */
export const newEventId = (): string => v7();
