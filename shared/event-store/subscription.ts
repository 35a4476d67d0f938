import type { ChangeNotifier } from './change-notifier.ts';
import type { StoredEvent, SubscribeOptions, SubscriptionItem } from './types.ts';

export type BatchReader = (after: number, limit: number) => Promise<StoredEvent[]>;

/**
 * The one subscription loop every adapter shares: read batches after a cursor until a short batch,
 * say `$caught_up` once, then sleep until the adapter's notifier says something changed.
 */
export async function* catchUpThenLive(
  options: SubscribeOptions,
  read: BatchReader,
  changes: ChangeNotifier,
): AsyncGenerator<SubscriptionItem> {
  const { signal } = options;
  const batchSize = options.batchSize ?? 500;
  const cursorOf =
    options.streamId === undefined ? (e: StoredEvent) => e.position : (e: StoredEvent) => e.revision;
  let cursor = options.after ?? (options.streamId === undefined ? 0 : -1);
  let caughtUp = false;

  while (!signal.aborted) {
    const seen = changes.version;
    let batch: StoredEvent[];
    try {
      batch = await read(cursor, batchSize);
    } catch (error) {
      if (signal.aborted) return;
      throw error;
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
    await changes.waitForChange(seen, signal);
  }
}
