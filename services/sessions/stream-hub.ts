import { logReadFailures, resubscribing } from '../../shared/event-store/resubscribe.ts';
import type { EventStore, StoredEvent } from '../../shared/event-store/types.ts';
import { isCaughtUp } from '../../shared/event-store/types.ts';
import type { Logger } from '../../shared/logger.ts';
import type { BackoffOptions } from '../../shared/retry.ts';

/** Receives the events of one tick of the event loop, in order; the array is shared by every listener. */
export type BatchListener = (events: readonly StoredEvent[]) => void;

/**
 * Events handed to the listeners in one tick of the event loop. Between ticks the socket writes go
 * out and other requests are served; within a tick, a client gets everything pending in one write.
 */
export const MAX_EVENTS_PER_TICK = 100;

interface Tail {
  listeners: Set<BatchListener>;
  controller: AbortController;
  pending: StoredEvent[];
  deliveryScheduled: boolean;
  /** Resolves the reader when the listeners have taken what was pending (back-pressure). */
  drained: (() => void) | undefined;
  /** When its reads started failing (ms since epoch); undefined while it follows the stream. */
  failingSince: number | undefined;
}

export interface StreamHubHealth {
  /** Streams followed now. */
  tails: number;
  /** Tails whose reads fail (each retries with backoff and resumes where it stopped). */
  stalled: number;
  /** When the oldest of those started failing (ISO 8601), or null. */
  stalled_since: string | null;
}

/**
 * One subscription per stream, however many clients follow it: the store is read once per change.
 * A reader queues what the subscription yields; a delivery step, once per tick of the event loop,
 * hands everything queued to every listener as one batch, so a burst costs each client one write
 * instead of one per event. A tail stops when its last listener leaves.
 */
export class StreamHub {
  #tails = new Map<string, Tail>();

  constructor(
    private readonly events: EventStore,
    private readonly logger: Logger,
    /** Backoff between a failed read and the next try. Default 100 ms doubling to 5 s. */
    private readonly retry?: BackoffOptions,
  ) {}

  /** Calls `listener` with the events of `streamId` after `afterRevision` (or after the tail's start). */
  listen(streamId: string, afterRevision: number, listener: BatchListener): () => void {
    let tail = this.#tails.get(streamId);
    if (!tail) {
      const created: Tail = {
        listeners: new Set(),
        controller: new AbortController(),
        pending: [],
        deliveryScheduled: false,
        drained: undefined,
        failingSince: undefined,
      };
      this.#tails.set(streamId, created);
      void this.#follow(streamId, afterRevision, created);
      tail = created;
    }
    tail.listeners.add(listener);
    const current = tail;
    return () => {
      current.listeners.delete(listener);
      if (current.listeners.size === 0) {
        current.controller.abort();
        current.drained?.();
        if (this.#tails.get(streamId) === current) this.#tails.delete(streamId);
      }
    };
  }

  /**
   * Reads the stream into `pending` until the last listener leaves. A failed read is retried (with
   * backoff) after the last revision queued, so listeners get every event once across the outage.
   */
  async #follow(streamId: string, after: number, tail: Tail): Promise<void> {
    const logFailure = logReadFailures(this.logger, 'stream tail cannot read; retrying', { streamId });
    const items = resubscribing(this.events, {
      streamId,
      after,
      signal: tail.controller.signal,
      retry: this.retry,
      onFailure: (failure) => {
        tail.failingSince ??= Date.now();
        logFailure(failure);
      },
    });
    for await (const item of items) {
      if (tail.failingSince !== undefined) {
        this.logger.info({ streamId }, 'stream tail reads again');
        tail.failingSince = undefined;
      }
      if (isCaughtUp(item)) continue;
      tail.pending.push(item);
      this.#scheduleDelivery(tail);
      if (tail.pending.length >= MAX_EVENTS_PER_TICK) {
        await new Promise<void>((resolve) => {
          tail.drained = resolve;
        });
      }
    }
  }

  health(): StreamHubHealth {
    const failing = [...this.#tails.values()].flatMap((t) =>
      t.failingSince === undefined ? [] : [t.failingSince],
    );
    return {
      tails: this.#tails.size,
      stalled: failing.length,
      stalled_since: failing.length === 0 ? null : new Date(Math.min(...failing)).toISOString(),
    };
  }

  #scheduleDelivery(tail: Tail): void {
    if (tail.deliveryScheduled) return;
    tail.deliveryScheduled = true;
    setImmediate(() => this.#deliver(tail));
  }

  #deliver(tail: Tail): void {
    tail.deliveryScheduled = false;
    const batch = tail.pending.splice(0, MAX_EVENTS_PER_TICK);
    const resume = tail.drained;
    tail.drained = undefined;
    if (!tail.controller.signal.aborted) {
      for (const listener of tail.listeners) listener(batch);
      if (tail.pending.length > 0) this.#scheduleDelivery(tail);
    }
    resume?.();
  }

  close(): void {
    for (const tail of this.#tails.values()) {
      tail.controller.abort();
      tail.drained?.();
    }
    this.#tails.clear();
  }
}
