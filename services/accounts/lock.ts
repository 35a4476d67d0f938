/**
 * Runs tasks with the same key one after the other (in this process). Account creation holds the
 * key of the email (and of the identity) so that "is it taken?" and "take it" are one step.
 */
export class KeyedLock {
  #tails = new Map<string, Promise<unknown>>();

  async run<T>(keys: readonly string[], task: () => Promise<T>): Promise<T> {
    const sorted = [...new Set(keys)].sort();
    if (sorted.length === 0) return task();
    const [first, ...rest] = sorted as [string, ...string[]];
    return this.#one(first, () => this.run(rest, task));
  }

  async #one<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    const result = previous.then(task, task);
    const tail = result.catch(() => undefined);
    this.#tails.set(key, tail);
    try {
      return await result;
    } finally {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    }
  }
}
