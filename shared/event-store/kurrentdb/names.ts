import { type Filter, type RecordedEvent, streamNameFilter } from '@kurrent/kurrentdb-client';

/** Marks the id reservation streams (after the prefix); no Studio stream may start with it. */
export const RESERVATION_MARK = 'studio-event-id-';
export const RESERVATION_TYPE = 'StudioEventIdReserved';

export function isSystemType(type: string): boolean {
  return type.startsWith('$');
}

/** Escapes a literal for a regular expression, read the same by .NET (the server) and JavaScript. */
export function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Which KurrentDB streams are a store's: `prefix + streamId`, never a system stream (`$…`) nor an id
 * reservation stream. With a prefix, every stream outside it belongs to someone else.
 */
export class StreamNames {
  /** Server-side filter for "our" streams: ours by prefix, no system or reservation stream. */
  readonly ourStreams: Filter;

  constructor(readonly prefix: string) {
    if (prefix.startsWith('$')) throw new Error(`streamPrefix may not start with "$" (got "${prefix}")`);
    this.ourStreams = streamNameFilter({
      regex: `^(?!\\$)${escapeRegex(prefix)}(?!${escapeRegex(RESERVATION_MARK)})`,
    });
  }

  name(streamId: string): string {
    return `${this.prefix}${streamId}`;
  }

  reservationName(id: string): string {
    return `${this.prefix}${RESERVATION_MARK}${id}`;
  }

  /** Whether `streamId` can be a Studio stream: not a system stream, not a reservation stream. */
  isStudioStream(streamId: string): boolean {
    return !this.name(streamId).startsWith('$') && !streamId.startsWith(RESERVATION_MARK);
  }

  writableName(streamId: string): string {
    if (streamId === '' || !this.isStudioStream(streamId)) {
      throw new Error(`"${streamId}" cannot be a stream id on KurrentDB (system or reserved name)`);
    }
    return this.name(streamId);
  }

  /**
   * Client-side twin of the server filter: a user event of one of our streams. The type check also
   * hides the reservations of stores with another prefix from a store without one.
   */
  isOurs(event: RecordedEvent): boolean {
    const name = event.streamId;
    return (
      !isSystemType(event.type) &&
      event.type !== RESERVATION_TYPE &&
      !name.startsWith('$') &&
      name.startsWith(this.prefix) &&
      !name.startsWith(RESERVATION_MARK, this.prefix.length)
    );
  }
}
