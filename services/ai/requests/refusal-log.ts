import type { EventStore } from '../../../shared/event-store/types.ts';
import type { Logger } from '../../../shared/logger.ts';
import { type RefusalData, type RefusalEvent, refusalsStreamId } from './events.ts';

export interface RefusalLogOptions {
  /** Refusals of one token and code a minute recorded one by one; the rest are counted in one event. */
  perMinute: number;
  now?: () => number;
}

export const DEFAULT_REFUSALS_PER_MINUTE = 20;

/**
 * Puts refused generation requests on record, bounded: a flood of refusals cannot grow the log
 * faster than `perMinute` events per token and code, plus one event counting the rest. Appended
 * after the refusal is answered (a refusal costs the client nothing to repeat, and must not cost
 * the gateway a durable write before it can say no); `close` waits for what is under way.
 */
export class RefusalLog {
  readonly #now: () => number;
  #minute = '';
  /** `studio token code` → refusals this minute, and what the counting event says of them. */
  #counts = new Map<string, { count: number; data: RefusalData }>();
  readonly #pending = new Set<Promise<unknown>>();
  readonly #timer: NodeJS.Timeout;

  constructor(
    private readonly events: EventStore,
    private readonly logger: Logger,
    private readonly options: RefusalLogOptions = { perMinute: DEFAULT_REFUSALS_PER_MINUTE },
  ) {
    this.#now = options.now ?? Date.now;
    // The minute's counts are written once it is over, even when no refusal follows.
    this.#timer = setInterval(() => this.#rollOver(), 10_000).unref();
  }

  refused(data: RefusalData): void {
    this.#rollOver();
    const key = JSON.stringify([data.studioId, data.tokenId, data.errorCode]);
    const seen = this.#counts.get(key) ?? { count: 0, data };
    seen.count++;
    this.#counts.set(key, seen);
    if (seen.count <= this.options.perMinute)
      this.#append(data.studioId, { type: 'GenerationRefused', data });
  }

  /** Writes the counts of the minute that is over, if it is. */
  #rollOver(): void {
    const minute = new Date(this.#now()).toISOString().slice(0, 16);
    if (minute === this.#minute) return;
    this.#flush();
    this.#minute = minute;
  }

  #flush(): void {
    for (const { count, data } of this.#counts.values()) {
      if (count <= this.options.perMinute) continue;
      const { studioId, tokenId, errorCode, modality } = data;
      this.#append(studioId, {
        type: 'GenerationRefusalsCounted',
        data: {
          studioId,
          tokenId,
          errorCode,
          modality,
          count: count - this.options.perMinute,
          minute: this.#minute,
        },
      });
    }
    this.#counts = new Map();
  }

  #append(studioId: string, event: RefusalEvent): void {
    const appending = this.events
      .append(refusalsStreamId(studioId), [event], { expected: 'any', metadata: { actor: 'gateway' } })
      .catch((error: unknown) =>
        this.logger.warn({ err: error, studioId, type: event.type }, 'a refusal could not be recorded'),
      );
    this.#pending.add(appending);
    void appending.finally(() => this.#pending.delete(appending));
  }

  /** Writes this minute's counts and waits for every append under way. */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    this.#flush();
    await Promise.allSettled([...this.#pending]);
  }
}
