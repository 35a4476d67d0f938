import { type Consumption, costMicroUsd, FREE, type Price } from '../../ai/prices/price.ts';

/** Where the prices come from: the gateway's `GET /v1/ai/prices`, read with the runtime's token. */
export interface PriceReader {
  prices(signal?: AbortSignal): Promise<ReadonlyMap<string, Price>>;
}

export interface TurnPricerOptions {
  /** How long a price list read is used before it is read again. Default 30 s. */
  ttlMs?: number;
  /** How long a read may take before the cost is left out. Default 5 s. */
  timeoutMs?: number;
  now?: () => number;
}

/**
 * What a model call of a turn cost, at the gateway's price of its model and with the gateway's own
 * arithmetic (`costMicroUsd`), so the transcript says what the gateway charged. Prices are read
 * briefly cached: a price changed by an admin reaches the turns that start a little later.
 */
export class TurnPricer {
  readonly #ttlMs: number;
  readonly #timeoutMs: number;
  readonly #now: () => number;
  #cached: { at: number; prices: Promise<ReadonlyMap<string, Price> | undefined> } | undefined;

  constructor(
    private readonly reader: PriceReader,
    options: TurnPricerOptions = {},
  ) {
    this.#ttlMs = options.ttlMs ?? 30_000;
    this.#timeoutMs = options.timeoutMs ?? 5_000;
    this.#now = options.now ?? Date.now;
  }

  /**
   * The cost in USD of `used` at the price of the first of `models` the gateway prices (the model
   * that answered, then the one asked for); 0 when it prices none of them, as the gateway charges
   * a model without a price nothing. Undefined when the prices could not be read.
   */
  async costUsd(models: readonly string[], used: Consumption): Promise<number | undefined> {
    const prices = await this.#prices();
    if (!prices) return undefined;
    const price = models.map((model) => prices.get(model)).find((p) => p !== undefined) ?? FREE;
    return costMicroUsd(price, used) / 1_000_000;
  }

  async #prices(): Promise<ReadonlyMap<string, Price> | undefined> {
    const now = this.#now();
    if (!this.#cached || now - this.#cached.at >= this.#ttlMs) {
      const prices = this.reader.prices(AbortSignal.timeout(this.#timeoutMs)).catch(() => undefined);
      const entry = { at: now, prices };
      this.#cached = entry;
      // A failed read is not kept: the next call asks again.
      void prices.then((read) => {
        if (!read && this.#cached === entry) this.#cached = undefined;
      });
    }
    return this.#cached.prices;
  }
}
