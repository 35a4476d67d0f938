/**
 * Runs tasks with the same key one after the other (in this process); tasks of other keys run
 * alongside. A key is forgotten once nothing waits on it, so keys that come and go do not pile up.
 */
export class KeyedLock {
  readonly #tails = new Map<string, Promise<void>>();

  /**
   * Runs `task` once every task queued before it on `key` has settled (fulfilled or not). With
   * several keys it holds them all, taken in sorted order so two callers cannot wait on each other.
   */
  run<T>(key: string | readonly string[], task: () => Promise<T>): Promise<T> {
    if (typeof key === 'string') return this.#one(key, task);
    const [first, ...rest] = [...new Set(key)].sort();
    if (first === undefined) return task();
    return this.#one(first, () => this.run(rest, task));
  }

  /** Settles once every task queued so far has settled. */
  async idle(): Promise<void> {
    await Promise.all(this.#tails.values());
  }

  /** How many keys have a task queued or running. */
  get size(): number {
    return this.#tails.size;
  }

  #one<T>(key: string, task: () => Promise<T>): Promise<T> {
    const result = (this.#tails.get(key) ?? Promise.resolve()).then(task);
    const tail = result.then(ignore, ignore);
    this.#tails.set(key, tail);
    void tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    return result;
  }
}

const ignore = () => undefined;
