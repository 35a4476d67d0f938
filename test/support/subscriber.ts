import { subscribe } from '../../shared/event-store/subscription.ts';
import {
  type CaughtUp,
  type EventStore,
  isCaughtUp,
  type StoredEvent,
  type SubscribeOptions,
  type SubscriptionItem,
} from '../../shared/event-store/types.ts';

interface Waiter {
  check: () => boolean;
  resolve: () => void;
  reject: (error: Error) => void;
  what: string;
}

/**
 * Runs `store.subscribe` in the background and records every item, so a test can wait for a
 * condition (never for a duration) and then assert on what was delivered. A wait fails at once when
 * the subscription ends or throws before the condition holds, instead of hanging until the timeout.
 */
export class Subscriber {
  readonly items: SubscriptionItem[] = [];
  /** Resolves when the for-await loop returns; rejects with the error the subscription threw. */
  readonly done: Promise<void>;
  #controller = new AbortController();
  #waiters = new Set<Waiter>();
  #ended: { error?: unknown } | undefined;
  #ids = new Set<string>();
  #markerCount = 0;

  constructor(store: EventStore, options: Omit<SubscribeOptions, 'signal'> & { signal?: AbortSignal } = {}) {
    const signal = options.signal ?? this.#controller.signal;
    this.done = (async () => {
      try {
        for await (const item of subscribe(store, { ...options, signal })) {
          this.items.push(item);
          if (isCaughtUp(item)) this.#markerCount++;
          else this.#ids.add(item.id);
          this.#check();
        }
        this.#end({});
      } catch (error) {
        this.#end({ error });
        throw error;
      }
    })();
    // The error stays observable through `done`; this only avoids an unhandled rejection.
    this.done.catch(() => undefined);
  }

  get events(): StoredEvent[] {
    return this.items.filter((item): item is StoredEvent => !isCaughtUp(item));
  }

  get markers(): CaughtUp[] {
    return this.items.filter(isCaughtUp);
  }

  get ended(): boolean {
    return this.#ended !== undefined;
  }

  /** Resolves once `predicate(items)` holds. */
  waitFor(predicate: (items: SubscriptionItem[]) => boolean, what = 'condition'): Promise<void> {
    if (predicate(this.items)) return Promise.resolve();
    if (this.#ended) return Promise.reject(this.#endedError(what));
    return new Promise((resolve, reject) => {
      this.#waiters.add({ check: () => predicate(this.items), resolve, reject, what });
    });
  }

  waitForCaughtUp(): Promise<void> {
    return this.waitFor(() => this.#markerCount > 0, '$caught_up');
  }

  waitForEvents(ids: readonly string[]): Promise<void> {
    return this.waitFor(() => ids.every((id) => this.#ids.has(id)), `events ${ids.join(', ')}`);
  }

  /** Aborts the subscription and waits for its loop to return. */
  async stop(): Promise<void> {
    this.#controller.abort();
    await this.done;
  }

  #check(): void {
    for (const waiter of [...this.#waiters]) {
      if (waiter.check()) {
        this.#waiters.delete(waiter);
        waiter.resolve();
      }
    }
  }

  #end(outcome: { error?: unknown }): void {
    this.#ended = outcome;
    for (const waiter of this.#waiters) waiter.reject(this.#endedError(waiter.what));
    this.#waiters.clear();
  }

  #endedError(what: string): Error {
    const error = this.#ended?.error;
    return new Error(
      `subscription ended before ${what} (${error === undefined ? 'returned' : `threw: ${String(error)}`}); got ${this.items.length} items`,
      { cause: error },
    );
  }
}
