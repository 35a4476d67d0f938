/**
 * Group commit for a store: independent items (appends to different streams) submitted in one
 * turn of the event loop are committed together, as one batch. Unlike `GroupCommit` (one batch at a
 * time per key), several batches may be in flight at once, up to `maxInFlight`: one slow batch
 * (say, a transaction waiting for a stream lock held elsewhere) never holds back the others. While
 * all slots are busy, items wait, and the next free slot takes everything waiting.
 *
 * A batch is cut at `maxWeight` (the sum of the items' weights) and `maxItems`; an item heavier than
 * `maxWeight` alone goes in a batch of its own.
 */
export class AppendBatcher<Item, Result> {
  #waiting: Waiting<Item, Result>[] = [];
  #inFlight = 0;
  #scheduled = false;

  constructor(
    /** Answers one result per item, in order; a throw fails every item of its batch. */
    private readonly commit: (items: Item[]) => Promise<Result[]>,
    private readonly options: {
      maxInFlight: number;
      maxItems: number;
      maxWeight: number;
      weight: (item: Item) => number;
    },
  ) {}

  submit(item: Item): Promise<Result> {
    return new Promise<Result>((resolve, reject) => {
      this.#waiting.push({ item, resolve, reject });
      this.#schedule();
    });
  }

  /** Starts batches at the end of this turn: whatever else is submitted meanwhile goes along. */
  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      this.#startBatches();
    });
  }

  /** Batches being committed now. */
  get inFlight(): number {
    return this.#inFlight;
  }

  #startBatches(): void {
    while (this.#waiting.length > 0 && this.#inFlight < this.options.maxInFlight) {
      void this.#run(this.#take());
    }
  }

  #take(): Waiting<Item, Result>[] {
    const { maxItems, maxWeight, weight } = this.options;
    let count = 0;
    let total = 0;
    for (const w of this.#waiting) {
      const next = total + weight(w.item);
      if (count > 0 && (count >= maxItems || next > maxWeight)) break;
      total = next;
      count++;
    }
    return this.#waiting.splice(0, count);
  }

  async #run(batch: Waiting<Item, Result>[]): Promise<void> {
    this.#inFlight++;
    try {
      const results = await this.commit(batch.map((w) => w.item));
      for (const [i, w] of batch.entries()) w.resolve(results[i] as Result);
    } catch (error) {
      for (const w of batch) w.reject(error);
    } finally {
      this.#inFlight--;
      // Not at once: the callers just answered may append again in this turn, and join.
      if (this.#waiting.length > 0) this.#schedule();
    }
  }
}

interface Waiting<Item, Result> {
  item: Item;
  resolve: (result: Result) => void;
  reject: (error: unknown) => void;
}
