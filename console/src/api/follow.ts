import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { failureOf } from './failure.ts';
import { consoleFetch } from './http.ts';

/** Where a follow stands: reading what is stored, live, waiting to reconnect, or refused for good. */
export type FollowState = 'connecting' | 'live' | 'reconnecting' | 'refused';

export interface FollowHandlers {
  onEvent(event: EventSourceMessage): void;
  onState(state: FollowState, error?: unknown): void;
}

const RETRY_MS = [500, 1_000, 2_000, 5_000, 10_000] as const;

const pause = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });

/**
 * Follows `GET /v1/audit/events/follow` until `signal` aborts: `fetch` (the console's header, which
 * `EventSource` cannot send) read with `eventsource-parser`. After a drop it reconnects with the last
 * id it saw as `Last-Event-ID`, so nothing is missed or repeated; a refusal (4xx but 429) ends it.
 */
export async function followLog(
  query: Record<string, string>,
  handlers: FollowHandlers,
  signal: AbortSignal,
): Promise<void> {
  let lastId: string | undefined;
  let failures = 0;
  const url = `/v1/audit/events/follow?${new URLSearchParams(query)}`;
  while (!signal.aborted) {
    handlers.onState(failures === 0 ? 'connecting' : 'reconnecting');
    try {
      const response = await consoleFetch(url, {
        headers: lastId === undefined ? {} : { 'last-event-id': lastId },
        signal,
      });
      if (!response.ok) {
        const failure = failureOf(response, await response.json().catch(() => undefined));
        if (response.status >= 400 && response.status < 500 && response.status !== 429) {
          handlers.onState('refused', failure);
          return;
        }
        throw failure;
      }
      const parser = createParser({
        onEvent: (event) => {
          if (event.id !== undefined) lastId = event.id;
          if (event.event === 'caught_up') {
            failures = 0;
            handlers.onState('live');
          } else handlers.onEvent(event);
        },
      });
      const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        parser.feed(value);
      }
      if (signal.aborted) return;
      failures++;
      handlers.onState('reconnecting');
    } catch (error) {
      if (signal.aborted) return;
      failures++;
      handlers.onState('reconnecting', error);
    }
    await pause(RETRY_MS[Math.min(failures, RETRY_MS.length) - 1] ?? 500, signal);
  }
}
