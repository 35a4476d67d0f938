import { backoffDelay } from '../retry.ts';
import { takeTurn } from '../turns.ts';
import type { ChangeNotifier } from './change-notifier.ts';
import {
  type EventStore,
  isCaughtUp,
  type StoredEvent,
  type SubscribeOptions,
  type SubscriptionItem,
  type SubscriptionPage,
  streamCategory,
} from './types.ts';

export type BatchReader = (after: number, limit: number) => Promise<StoredEvent[]>;

/**
 * A read of the events of some stream categories after a position: `through` is the position up to
 * which the log was read (every event of those categories up to it is in `events`), `more` whether
 * the read stopped at its limit.
 */
export type CategoryReader = (
  after: number,
  limit: number,
  categories: ReadonlySet<string>,
) => Promise<{ events: StoredEvent[]; through: number; more: boolean }>;
/** Whether events after the cursor are committed but not readable yet (held back by an older transaction). */
export type HiddenProbe = (after: number) => Promise<boolean>;

/**
 * While a catching-up subscription hands on a batch and the next one is being read, it hands it on
 * in pages of this many events and gives the event loop back between two, so the next batch's rows
 * are received as the database sends them: otherwise the socket fills, the database waits, and the
 * rest of the batch arrives only once this one is consumed (a cold replay from PostgreSQL spent
 * about a twelfth of its time so idle).
 */
const PAGE_EVENTS = 250;
/** Re-read delays while events are held back by a transaction that may end without a notification. */
const HIDDEN_RETRY_MIN_MS = 5;
const HIDDEN_RETRY_MAX_MS = 1_000;

/**
 * How long a caught-up loop may sleep before it reads again: until the next notification, or, while
 * events after its cursor are held back, a growing delay (no notification may ever come for them).
 */
function heldBackRetry(hidden: HiddenProbe | undefined, signal: AbortSignal) {
  let rounds = 0;
  return async (cursor: number): Promise<number | undefined | 'aborted'> => {
    let held: boolean;
    try {
      held = hidden !== undefined && (await hidden(cursor));
    } catch (error) {
      if (signal.aborted) return 'aborted';
      throw error;
    }
    if (!held) {
      rounds = 0;
      return undefined;
    }
    rounds++;
    return backoffDelay(rounds, { initialMs: HIDDEN_RETRY_MIN_MS, maxMs: HIDDEN_RETRY_MAX_MS });
  };
}

/**
 * The one subscription loop every adapter shares: read batches after a cursor until a short batch,
 * say `$caught_up` once, then sleep until the adapter's notifier says something changed.
 */
export async function* catchUpThenLive(
  options: SubscribeOptions,
  read: BatchReader,
  changes: ChangeNotifier,
  hidden?: HiddenProbe,
): AsyncGenerator<SubscriptionPage> {
  const { signal } = options;
  const batchSize = options.batchSize ?? 500;
  const cursorOf =
    options.streamId === undefined ? (e: StoredEvent) => e.position : (e: StoredEvent) => e.revision;
  let cursor = options.after ?? (options.streamId === undefined ? 0 : -1);
  let caughtUp = false;
  const retryAfter = heldBackRetry(hidden, signal);

  // While a full batch is being handed on, the next one is already being read: the database
  // produces it while this process decodes and folds the current one, taking turns with it.
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
    const pageEvents = next === undefined ? batchSize : PAGE_EVENTS;
    for (let start = 0; start < batch.length; start += pageEvents) {
      if (signal.aborted) return;
      const events = batch.length <= pageEvents ? batch : batch.slice(start, start + pageEvents);
      yield { type: '$page', events };
      cursor = cursorOf(events.at(-1)!);
      if (next !== undefined) await takeTurn();
    }
    if (batch.length === batchSize) continue;
    if (!caughtUp) {
      caughtUp = true;
      yield { type: '$caught_up', position: cursor };
    }
    const retryMs = await retryAfter(cursor);
    if (retryMs === 'aborted') return;
    await changes.waitForChange(seen, signal, retryMs);
  }
}

/**
 * `subscribePages` through a store's own reads: the whole log in positions (`readAll`), or one
 * stream in revisions (`readStream`). With `categories`, through `readCategories` where the store
 * can filter in its reads and tell how far it read, else through `readAll` filtered here.
 */
export function subscribeThroughReads(
  store: Pick<EventStore, 'readAll' | 'readStream'>,
  changes: ChangeNotifier,
  options: SubscribeOptions,
  reads: { hidden?: HiddenProbe; readCategories?: CategoryReader } = {},
): AsyncGenerator<SubscriptionPage> {
  const { streamId, categories } = options;
  if (streamId === undefined && categories !== undefined) {
    const readCategories =
      reads.readCategories ?? filteredHere((after, limit) => store.readAll({ after, limit }));
    return catchUpThenLiveIn(options, categories, readCategories, changes, reads.hidden);
  }
  const read: BatchReader =
    streamId === undefined
      ? (after, limit) => store.readAll({ after, limit })
      : (after, limit) => store.readStream(streamId, { after, limit });
  return catchUpThenLive(options, read, changes, reads.hidden);
}

/** A subscription an event at a time: `store.subscribePages` with each page handed on event by event. */
export function subscribe(
  store: Pick<EventStore, 'subscribePages'>,
  options: SubscribeOptions,
): AsyncGenerator<SubscriptionItem> {
  return eventsOf(store.subscribePages(options), options.signal);
}

/** A subscription's pages an event at a time, until `signal` aborts. */
export async function* eventsOf(
  pages: AsyncIterable<SubscriptionPage>,
  signal: AbortSignal,
): AsyncGenerator<SubscriptionItem> {
  for await (const page of pages) {
    if (isCaughtUp(page)) {
      yield page;
      continue;
    }
    for (const event of page.events) {
      if (signal.aborted) return;
      yield event;
    }
  }
}

/** A `CategoryReader` for a store that cannot filter by category: it reads everything and drops the rest. */
function filteredHere(read: BatchReader): CategoryReader {
  return async (after, limit, categories) => {
    const batch = await read(after, limit);
    return {
      events: batch.filter((event) => categories.has(streamCategory(event.streamId))),
      through: batch.at(-1)?.position ?? after,
      more: batch.length === limit,
    };
  };
}

/**
 * The loop of a subscription to some categories: like `catchUpThenLive`, but its cursor moves over
 * what it skips, and each time it has caught up it says through where (`$caught_up`), then sleeps
 * until its categories are committed to, other commits have settled, or held-back events may show.
 */
async function* catchUpThenLiveIn(
  options: SubscribeOptions,
  categories: readonly string[],
  read: CategoryReader,
  changes: ChangeNotifier,
  hidden?: HiddenProbe,
): AsyncGenerator<SubscriptionPage> {
  const { signal } = options;
  const batchSize = options.batchSize ?? 500;
  const wanted = new Set(categories);
  let cursor = options.after ?? 0;
  let told: number | undefined;
  const retryAfter = heldBackRetry(hidden, signal);
  while (!signal.aborted) {
    const seen = changes.versionFor(categories);
    const seenAll = changes.version;
    let batch: Awaited<ReturnType<CategoryReader>>;
    try {
      batch = await read(cursor, batchSize, wanted);
    } catch (error) {
      if (signal.aborted) return;
      throw error;
    }
    if (signal.aborted) return;
    if (batch.events.length > 0) yield { type: '$page', events: batch.events };
    cursor = Math.max(cursor, batch.through);
    if (batch.more) continue;
    if (told !== cursor) {
      told = cursor;
      yield { type: '$caught_up', position: cursor };
    }
    const retryMs = await retryAfter(cursor);
    if (retryMs === 'aborted') return;
    await changes.waitForChange(seen, signal, retryMs, { categories, seenAll });
  }
}
