import {
  ANY,
  type AppendStreamState,
  NO_STREAM as KURRENT_NO_STREAM,
  type RecordedEvent,
  STREAM_EXISTS,
} from '@kurrent/kurrentdb-client';
import { type EventMetadata, type ExpectedRevision, NO_STREAM, type StoredEvent } from '../types.ts';
import { positionOf } from './positions.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** One of our events as the port hands it out: stream id without the prefix, JSON data and metadata. */
export function toStored(event: RecordedEvent, prefix: string): StoredEvent {
  return {
    id: event.id,
    streamId: event.streamId.slice(prefix.length),
    revision: Number(event.revision),
    position: positionOf(event),
    type: event.type,
    data: decodeData(event),
    metadata: decodeMetadata(event.metadata),
    createdAt: event.created.toISOString(),
  };
}

/** The client's stream state for an expected revision; undefined for one no stream can have. */
export function toStreamState(expected: ExpectedRevision): AppendStreamState | undefined {
  switch (expected) {
    case 'any':
      return ANY;
    case 'no_stream':
      return KURRENT_NO_STREAM;
    case 'stream_exists':
      return STREAM_EXISTS;
    default:
      if (expected === NO_STREAM) return KURRENT_NO_STREAM;
      // Not a revision any stream can have: the caller gets WrongExpectedRevision, as elsewhere.
      return Number.isSafeInteger(expected) && expected >= 0 ? BigInt(expected) : undefined;
  }
}

/** Event ids are UUIDs, lower-cased. */
export function normalizeId(id: string): string {
  if (!UUID.test(id))
    throw new TypeError(`event id ${JSON.stringify(id)} is not a UUID (KurrentDB needs one)`);
  return id.toLowerCase();
}

function decodeData(event: RecordedEvent): unknown {
  // JSON events arrive parsed (a string when the payload was not valid JSON).
  if (event.isJson) return event.data;
  const text = Buffer.from(event.data as Uint8Array).toString('utf8');
  try {
    return JSON.parse(text);
  } catch {
    return Buffer.from(event.data as Uint8Array).toString('base64');
  }
}

function decodeMetadata(metadata: unknown): EventMetadata {
  // Whatever Studio wrote, as the SQL stores keep it.
  if (isRecord(metadata) && typeof metadata.actor === 'string')
    return { ...metadata } as unknown as EventMetadata;
  // Not written by Studio: no actor to name.
  return { actor: 'system' };
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return (
    typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array)
  );
}
