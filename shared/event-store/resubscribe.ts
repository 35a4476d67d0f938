import type { Logger } from '../logger.ts';
import { type BackoffOptions, backoffDelay, pause } from '../retry.ts';
import { eventsOf } from './subscription.ts';
import {
  type EventStore,
  isCaughtUp,
  type StoredEvent,
  type SubscribeOptions,
  type SubscriptionItem,
  type SubscriptionPage,
} from './types.ts';

export interface ResubscribeOptions extends SubscribeOptions {
  /** Backoff between a failed read and the next subscription. Default 100 ms doubling to 5 s. */
  retry?: BackoffOptions;
  /**
   * Called when the subscription failed (a read threw, or it ended without being stopped), before
   * waiting `retryInMs`; `failures` counts failures since the last item delivered.
   */
  onFailure?: (failure: { error: unknown; failures: number; retryInMs: number; after: number }) => void;
}

/**
 * `store.subscribePages` that outlives read failures: when a read fails (a connection reset), it
 * waits out a jittered backoff and subscribes again after the last event it handed on, so its
 * consumer sees every event exactly once, in order, with a new `$caught_up` after each
 * resubscription. Ends only when the signal aborts. Every long-lived reader of the log follows it
 * through this, or through `resubscribing`.
 */
export async function* resubscribingPages(
  store: EventStore,
  options: ResubscribeOptions,
): AsyncGenerator<SubscriptionPage> {
  const { retry, onFailure, ...subscribe } = options;
  const { signal } = subscribe;
  const cursorOf = (event: StoredEvent) =>
    subscribe.streamId === undefined ? event.position : event.revision;
  let cursor = subscribe.after ?? (subscribe.streamId === undefined ? 0 : -1);
  let failures = 0;
  while (!signal.aborted) {
    try {
      for await (const page of store.subscribePages({ ...subscribe, after: cursor })) {
        failures = 0;
        if (isCaughtUp(page)) {
          // Read through there: a new subscription need not read the other streams again.
          if (subscribe.categories !== undefined) cursor = Math.max(cursor, page.position);
          yield page;
          continue;
        }
        // An adapter that re-delivers what it already gave must not reach the consumer twice. Events
        // come in order: when the first is new, so is the page.
        const first = page.events[0];
        if (first === undefined) continue;
        const events =
          cursorOf(first) > cursor ? page.events : page.events.filter((event) => cursorOf(event) > cursor);
        const last = events.at(-1);
        if (last === undefined) continue;
        cursor = cursorOf(last);
        yield events === page.events ? page : { type: '$page', events };
      }
      if (signal.aborted) return;
      throw new Error('the subscription ended while it was still wanted');
    } catch (error) {
      if (signal.aborted) return;
      failures++;
      const retryInMs = backoffDelay(failures, retry);
      onFailure?.({ error, failures, retryInMs, after: cursor });
      await pause(retryInMs, signal);
    }
  }
}

/** `resubscribingPages`, an event at a time. */
export function resubscribing(
  store: EventStore,
  options: ResubscribeOptions,
): AsyncGenerator<SubscriptionItem> {
  return eventsOf(resubscribingPages(store, options), options.signal);
}

/** An `onFailure` that logs the first failure of an outage as a warning and the retries at debug. */
export function logReadFailures(
  logger: Logger,
  message: string,
  context: Record<string, unknown> = {},
): NonNullable<ResubscribeOptions['onFailure']> {
  return ({ error, failures, retryInMs, after }) => {
    const fields = { ...context, err: error, after, failed_reads: failures, retry_in_ms: retryInMs };
    if (failures === 1) logger.warn(fields, message);
    else logger.debug(fields, message);
  };
}
