/**
 * Group commit, keyed: items submitted under one key are committed in batches, one batch at a time
 * per key. The first item of an idle key is committed at once; whatever arrives while a batch is
 * being committed waits and goes, all together, in the next batch. Concurrent callers thus share
 * one round trip instead of queueing for one each, and no item waits on a timer.
 */
export class GroupCommit<Item, Result> {
  readonly #queues = new Map<string, Waiting<Item, Result>[]>();

  /** `commit` answers one result per item, in order; a throw fails every item of its batch. */
  constructor(
    private readonly commit: (key: string, items: Item[]) => Promise<Result[]>,
    private readonly maxBatch = 1_000,
  ) {}

  submit(key: string, item: Item): Promise<Result> {
    return new Promise<Result>((resolve, reject) => {
      const queue = this.#queues.get(key);
      if (queue) {
        queue.push({ item, resolve, reject });
        return;
      }
      this.#queues.set(key, []);
      void this.#drain(key, [{ item, resolve, reject }]);
    });
  }

  /** How many keys have a batch being committed. */
  get busyKeys(): number {
    return this.#queues.size;
  }

  async #drain(key: string, first: Waiting<Item, Result>[]): Promise<void> {
    let batch = first;
    while (batch.length > 0) {
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
