import { firstIndexAfter } from './positions.ts';
import type { StoredEvent } from './types.ts';

export interface WrittenTailLimits {
  /** Events kept at least (while under `bytes`); twice as many at most, then the older ones go. */
  events: number;
  /** The same bound on the events' JSON text, so large events are not held in memory for long. */
  bytes: number;
}

const DEFAULT_LIMITS: WrittenTailLimits = { events: 4_096, bytes: 8 * 1024 * 1024 };

/**
 * The newest events a store's sole writer appended, in position order, complete after `from`: every
 * event after that position is here, until let go. Whole-log reads after `from` (the read models and
 * the sealer following the log) are answered from it instead of reading back and decoding what this
 * process just wrote.
 */
export class WrittenTail {
  #events: StoredEvent[] = [];
  #sizes: number[] = [];
  #bytes = 0;
  #from: number;

  constructor(
    from: number,
    private readonly limits: WrittenTailLimits = DEFAULT_LIMITS,
  ) {
    this.#from = from;
  }

  /** An event just committed, after every event added before (positions only grow); `size` in bytes. */
  add(event: StoredEvent, size: number): void {
    this.#events.push(event);
    this.#sizes.push(size);
    this.#bytes += size;
    const { events, bytes } = this.limits;
    if (this.#events.length < 2 * events && this.#bytes < 2 * bytes) return;
    let drop = 0;
    while (drop < this.#events.length && (this.#events.length - drop > events || this.#bytes > bytes)) {
      this.#bytes -= this.#sizes[drop]!;
      drop++;
    }
    this.#from = this.#events[drop - 1]!.position;
    this.#events.splice(0, drop);
    this.#sizes.splice(0, drop);
  }

  /** The events after `after` (at most `limit`), or undefined when some of them may not be here. */
  read(after: number, limit?: number): StoredEvent[] | undefined {
    if (after < this.#from) return undefined;
    const first = firstIndexAfter(this.#events, after);
    return this.#events.slice(first, limit === undefined ? undefined : first + limit);
  }
}
