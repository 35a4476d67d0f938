import type { StoredEvent } from '../../shared/event-store/types.ts';

/**
 * The bounded FIFO between the log subscription and the sender: the subscription waits while it is
 * full (a broker that is down must not make memory grow), the sender waits while it is empty.
 */
export class EventQueue {
  #items: StoredEvent[] = [];
  #head = 0;
  #changed = signalOnce();

  constructor(readonly capacity: number) {}

  get length(): number {
    return this.#items.length - this.#head;
  }

  push(event: StoredEvent): void {
    this.#items.push(event);
    this.#notify();
  }

  /** The first `max` events, left in the queue until `drop`. */
  peek(max: number): StoredEvent[] {
    return this.#items.slice(this.#head, this.#head + max);
  }

  drop(count: number): void {
    this.#head += Math.min(count, this.length);
    if (this.#head > 4_096 && this.#head * 2 > this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    this.#notify();
  }

  /** Resolves once something is queued, or when `signal` aborts. */
  async untilNotEmpty(signal: AbortSignal): Promise<void> {
    while (this.length === 0 && !signal.aborted) await this.#nextChange(signal);
  }

  /** Resolves once there is room for one more, or when `signal` aborts. */
  async untilRoom(signal: AbortSignal): Promise<void> {
    while (this.length >= this.capacity && !signal.aborted) await this.#nextChange(signal);
  }

  #notify(): void {
    this.#changed.resolve();
    this.#changed = signalOnce();
  }

  #nextChange(signal: AbortSignal): Promise<void> {
    return untilAborted(this.#changed.promise, signal);
  }
}

/** A promise and its resolver (Node 20 has no `Promise.withResolvers`). */
function signalOnce(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** `promise`, or earlier when `signal` aborts (the abort listener is removed either way). */
function untilAborted(promise: Promise<void>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const onAbort = () => resolve();
    signal.addEventListener('abort', onAbort, { once: true });
    void promise.finally(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    });
  });
}
