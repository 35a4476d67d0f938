/**
 * Group commit, keyed: items submitted under one key are committed in batches, one batch at a time
 * per key. The first item of an idle key is committed at the end of this turn of the event loop
 * (`setImmediate`), with whatever else was submitted in the same turn; whatever arrives while a
 * batch is being committed waits and goes, all together, in the next batch. Concurrent callers thus
 * share one round trip instead of queueing for one each, and no item waits on a timer.
 *
 * Why not commit the first item at once: a commit that blocks the thread (the embedded store
 * commits on it) lets no other item be submitted while it runs, and its promise settles before the
 * next I/O callback, so each item would find the key idle again and go alone: one commit, and one
 * sync, per item.
 */
export class GroupCommit<Item, Result> {
  readonly #queues = new Map<string, Waiting<Item, Result>[]>();

  /** `commit` answers one result per item, in order; a throw fails every item of its batch. */
  constructor(
    private readonly commit: (key: string, items: Item[]) => Promise<Result[]>,
    private readonly maxBatch = 1_000,
    /** Told the size of each batch as it goes (metrics). */
    private readonly onBatch?: (size: number) => void,
  ) {}

  submit(key: string, item: Item): Promise<Result> {
    return new Promise<Result>((resolve, reject) => {
      const queue = this.#queues.get(key);
      if (queue) {
        queue.push({ item, resolve, reject });
        return;
      }
      this.#queues.set(key, [{ item, resolve, reject }]);
      setImmediate(() => void this.#drain(key));
    });
  }

  /** How many keys have a batch being committed. */
  get busyKeys(): number {
    return this.#queues.size;
  }

  async #drain(key: string): Promise<void> {
    let batch = this.#queues.get(key)?.splice(0, this.maxBatch) ?? [];
    while (batch.length > 0) {
      this.onBatch?.(batch.length);
      try {
        const results = await this.commit(
          key,
          batch.map((w) => w.item),
        );
        for (const [i, w] of batch.entries()) w.resolve(results[i] as Result);
      } catch (error) {
        for (const w of batch) w.reject(error);
      }
      const queue = this.#queues.get(key) ?? [];
      batch = queue.splice(0, this.maxBatch);
    }
    this.#queues.delete(key);
  }
}

interface Waiting<Item, Result> {
  item: Item;
  resolve: (result: Result) => void;
  reject: (error: unknown) => void;
}
