import type { ChangeNotifier } from './change-notifier.ts';
import type { EventStore, StoredEvent, SubscribeOptions, SubscriptionItem } from './types.ts';

export type BatchReader = (after: number, limit: number) => Promise<StoredEvent[]>;
/** Whether events after the cursor are committed but not readable yet (held back by an older transaction). */
export type HiddenProbe = (after: number) => Promise<boolean>;

/** Re-read delays while events are held back by a transaction that may end without a notification. */
const HIDDEN_RETRY_MIN_MS = 5;
const HIDDEN_RETRY_MAX_MS = 1_000;

/**
 * The one subscription loop every adapter shares: read batches after a cursor until a short batch,
 * say `$caught_up` once, then sleep until the adapter's notifier says something changed.
 */
export async function* catchUpThenLive(
  options: SubscribeOptions,
  read: BatchReader,
  changes: ChangeNotifier,
  hidden?: HiddenProbe,
): AsyncGenerator<SubscriptionItem> {
  const { signal } = options;
  const batchSize = options.batchSize ?? 500;
  const cursorOf =
    options.streamId === undefined ? (e: StoredEvent) => e.position : (e: StoredEvent) => e.revision;
  let cursor = options.after ?? (options.streamId === undefined ? 0 : -1);
  let caughtUp = false;
  let retryMs = HIDDEN_RETRY_MIN_MS;

  // While a full batch is being handed on, the next one is already being read: the database
  // produces it while this process decodes and folds the current one.
  let next: { seen: number; batch: Promise<StoredEvent[]> } | undefined;
  while (!signal.aborted) {
    const pending = next ?? { seen: changes.version, batch: read(cursor, batchSize) };
    next = undefined;
    const seen = pending.seen;
    let batch: StoredEvent[];
    try {
      batch = await pending.batch;
    } catch (error) {
      if (signal.aborted) return;
      throw error;
    }
    const last = batch.at(-1);
    if (batch.length === batchSize && last !== undefined) {
      next = { seen: changes.version, batch: read(cursorOf(last), batchSize) };
      // Handled when awaited; a consumer that stops first leaves it unobserved.
      next.batch.catch(() => undefined);
    }
    for (const event of batch) {
      if (signal.aborted) return;
      yield event;
      cursor = cursorOf(event);
    }
    if (batch.length === batchSize) continue;
    if (!caughtUp) {
      caughtUp = true;
      yield { type: '$caught_up', position: cursor };
    }
    let held: boolean;
    try {
      held = hidden !== undefined && (await hidden(cursor));
    } catch (error) {
      if (signal.aborted) return;
      throw error;
    }
    if (held) {
      // Wake on a notification, or re-read after a growing delay: no notification may ever come.
      await changes.waitForChange(seen, signal, retryMs);
      retryMs = Math.min(retryMs * 2, HIDDEN_RETRY_MAX_MS);
    } else {
      retryMs = HIDDEN_RETRY_MIN_MS;
      await changes.waitForChange(seen, signal);
    }
  }
}

/**
 * `subscribe` through a store's own reads: the whole log in positions (`readAll`), or one stream in
 * revisions (`readStream`).
 */
export function subscribeThroughReads(
  store: Pick<EventStore, 'readAll' | 'readStream'>,
  changes: ChangeNotifier,
  options: SubscribeOptions,
  hidden?: HiddenProbe,
): AsyncGenerator<SubscriptionItem> {
  const { streamId } = options;
  const read: BatchReader =
    streamId === undefined
      ? (after, limit) => store.readAll({ after, limit })
      : (after, limit) => store.readStream(streamId, { after, limit });
  return catchUpThenLive(options, read, changes, hidden);
}
