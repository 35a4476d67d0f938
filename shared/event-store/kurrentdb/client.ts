import type {
  AllStreamResolvedEvent,
  AppendToStreamOptions,
  EventData,
  AppendResult as KurrentAppendResult,
  ReadAllOptions as KurrentReadAllOptions,
  ReadStreamOptions as KurrentReadStreamOptions,
  RecordedEvent,
  ResolvedEvent,
  SubscribeToAllOptions,
} from '@kurrent/kurrentdb-client';
import { NO_STREAM } from '../types.ts';

/** The live subscription's handle: the client's `AllStreamSubscription` fits it. */
export interface LiveSubscription {
  on(event: string, listener: (...args: unknown[]) => void): unknown;
  unsubscribe(): Promise<void>;
}

/** What the adapter uses of `KurrentDBClient`; the real client fits it, a test may pass a fake. */
export interface KurrentClient {
  appendToStream(
    streamName: string,
    events: EventData[],
    options?: AppendToStreamOptions,
  ): Promise<KurrentAppendResult>;
  readStream(streamName: string, options?: KurrentReadStreamOptions): AsyncIterable<ResolvedEvent>;
  readAll(options?: KurrentReadAllOptions): AsyncIterable<AllStreamResolvedEvent>;
  subscribeToAll(options?: SubscribeToAllOptions): LiveSubscription;
  dispose(): Promise<void>;
}

/** A stream's events as the client reads them; a stream that does not exist reads as none. */
export async function readStreamRaw(
  client: KurrentClient,
  stream: string,
  options: KurrentReadStreamOptions,
): Promise<RecordedEvent[]> {
  const events: RecordedEvent[] = [];
  try {
    for await (const resolved of client.readStream(stream, options)) {
      if (resolved.event) events.push(resolved.event);
    }
  } catch (error) {
    if (isStreamNotFound(error)) return [];
    throw error;
  }
  return events;
}

function errorType(error: unknown): unknown {
  return typeof error === 'object' && error !== null && 'type' in error ? error.type : undefined;
}

export function isWrongExpectedVersion(error: unknown): error is { actualState: bigint | string } {
  return errorType(error) === 'wrong-expected-version';
}

function isStreamNotFound(error: unknown): boolean {
  return errorType(error) === 'stream-not-found';
}

/** The stream's last revision a WrongExpectedVersionError reports (-1 when it does not exist). */
export function actualRevision(error: { actualState: bigint | string }): number {
  return typeof error.actualState === 'bigint' ? Number(error.actualState) : NO_STREAM;
}
