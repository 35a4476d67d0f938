import type { EventStore } from '../../../shared/event-store/types.ts';
import type { Logger } from '../../../shared/logger.ts';
import { FREE, type Price } from '../prices/price.ts';
import type { PriceSource } from '../prices/price-book.ts';
import { type UsageEvent, usageStreamId } from './events.ts';

const FLUSH_EVERY_MS = 100;
const FLUSH_AT = 500;
const MAX_BUFFERED = 100_000;

/**
 * Records generations off the hot path: `record` only buffers; a timer appends the buffer in one
 * append per studio stream. A failed append keeps its events for the next flush.
 */
export class UsageRecorder {
  #buffer: UsageEvent[] = [];
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> | undefined;
  #dropped = 0;

  constructor(
    private readonly store: EventStore,
    private readonly logger?: Logger,
    private readonly prices?: PriceSource,
  ) {}

  /** The price a generation starting now is charged at. */
  priceOf(model: string): Price {
    return this.prices?.priceOf(model) ?? FREE;
  }

  record(event: UsageEvent): void {
    if (this.#buffer.length >= MAX_BUFFERED) {
      this.#dropped++;
      if (this.#dropped % 1000 === 1)
        this.logger?.error({ dropped: this.#dropped }, 'usage buffer full: the log is not accepting appends');
      return;
    }
    this.#buffer.push(event);
    if (this.#buffer.length >= FLUSH_AT) void this.flush();
    else if (!this.#timer) {
      this.#timer = setTimeout(() => void this.flush(), FLUSH_EVERY_MS);
      this.#timer.unref();
    }
  }

  /** Appends everything buffered so far; resolves when it is in the log (or kept for a retry). */
  async flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    while (this.#flushing) await this.#flushing;
    if (this.#buffer.length === 0) return;
    const batch = this.#buffer;
    this.#buffer = [];
    this.#flushing = this.#append(batch).finally(() => {
      this.#flushing = undefined;
    });
    await this.#flushing;
  }

  async #append(batch: UsageEvent[]): Promise<void> {
    const byStudio = new Map<string, typeof batch>();
    for (const item of batch) {
      const list = byStudio.get(item.data.studioId) ?? [];
      list.push(item);
      byStudio.set(item.data.studioId, list);
    }
    await Promise.all(
      [...byStudio].map(async ([studioId, items]) => {
        try {
          // One append carries many requests: the metadata names the gateway; each event its token and request.
          await this.store.append(usageStreamId(studioId), items, { metadata: { actor: 'gateway' } });
        } catch (error) {
          this.logger?.warn(
            { err: error, studioId, events: items.length },
            'could not append usage; retrying later',
          );
          this.#buffer.unshift(...items);
          if (!this.#timer) {
            this.#timer = setTimeout(() => void this.flush(), 1_000);
            this.#timer.unref();
          }
        }
      }),
    );
  }

  async close(): Promise<void> {
    await this.flush();
    clearTimeout(this.#timer);
  }
}
