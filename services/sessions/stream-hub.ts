import type { EventStore, StoredEvent } from '../../shared/event-store/types.ts';
import { isCaughtUp } from '../../shared/event-store/types.ts';
import type { Logger } from '../../shared/logger.ts';

type Listener = (event: StoredEvent) => void;

interface Tail {
  listeners: Set<Listener>;
  controller: AbortController;
}

/**
 * One subscription per stream, however many clients follow it: the store's `subscribe` is read once
 * per change, and each event is handed to every listener. A tail stops when its last listener leaves.
 */
export class StreamHub {
  #tails = new Map<string, Tail>();

  constructor(
    private readonly events: EventStore,
    private readonly logger: Logger,
  ) {}

  /** Calls `listener` with each event of `streamId` after `afterRevision` (or after the tail's start). */
  listen(streamId: string, afterRevision: number, listener: Listener): () => void {
    let tail = this.#tails.get(streamId);
    if (!tail) {
      const created: Tail = { listeners: new Set(), controller: new AbortController() };
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
        if (this.#tails.get(streamId) === current) this.#tails.delete(streamId);
      }
    };
  }

  async #follow(streamId: string, after: number, tail: Tail): Promise<void> {
    try {
      for await (const item of this.events.subscribe({ streamId, after, signal: tail.controller.signal })) {
        if (isCaughtUp(item)) continue;
        for (const listener of tail.listeners) listener(item);
      }
    } catch (error) {
      this.logger.warn({ err: error, streamId }, 'stream tail stopped');
      if (this.#tails.get(streamId) === tail) this.#tails.delete(streamId);
    }
  }

  close(): void {
    for (const tail of this.#tails.values()) tail.controller.abort();
    this.#tails.clear();
  }
}
