/** Thrown by `BoundedSemaphore.run` when every slot is taken and the queue is full. */
export class SemaphoreFull extends Error {
  override readonly name = 'SemaphoreFull';
}

/**
 * Runs at most `slots` tasks at once; up to `maxQueued` more wait their turn, in order, and any
 * beyond that are refused at once (SemaphoreFull) rather than piling up.
 */
export class BoundedSemaphore {
  #running = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(
    readonly slots: number,
    readonly maxQueued: number,
  ) {}

  get running(): number {
    return this.#running;
  }

  get queued(): number {
    return this.#waiting.length;
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.#running >= this.slots) {
      if (this.#waiting.length >= this.maxQueued) throw new SemaphoreFull('every slot is busy');
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    } else {
      this.#running++;
    }
    try {
      return await task();
    } finally {
      const next = this.#waiting.shift();
      // The slot passes straight to the next waiter, so a newcomer cannot slip in between.
      if (next) next();
      else this.#running--;
    }
  }
}
