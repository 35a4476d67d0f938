import { randomUUID } from 'node:crypto';
import type { EventStore } from '../../../shared/event-store/types.ts';
import { GroupCommit } from '../../../shared/group-commit.ts';
import type { Logger } from '../../../shared/logger.ts';
import { FREE, type Price } from '../prices/price.ts';
import type { PriceSource } from '../prices/price-book.ts';
import { type UsageEvent, usageStreamId } from './events.ts';

const RETRY_AFTER_MS = 1_000;

/**
 * Records generations in their studio's usage stream. `record` resolves once the event is durable,
 * so a caller can hold the end of its answer until then; concurrent generations of a studio share
 * one append (group commit). An append that fails rejects its callers and is retried in the
 * background with the same event ids, so the generation is recorded once, whatever happens.
 */
export class UsageRecorder {
  readonly #commits: GroupCommit<UsageEvent & { id: string }, undefined>;
  readonly #retrying = new Set<Promise<void>>();
  #closed = false;

  constructor(
    private readonly store: EventStore,
    private readonly logger?: Logger,
    private readonly prices?: PriceSource,
  ) {
    this.#commits = new GroupCommit((studioId, events) => this.#append(studioId, events));
  }

  /** The price a generation starting now is charged at. */
  priceOf(model: string): Price {
    return this.prices?.priceOf(model) ?? FREE;
  }

  async record(event: UsageEvent): Promise<void> {
    const withId = { ...event, id: randomUUID() };
    return this.#commits.submit(event.data.studioId, withId).catch((error: unknown) => {
      this.#retryLater(event.data.studioId, withId);
      throw error;
    });
  }

  async #append(studioId: string, events: (UsageEvent & { id: string })[]): Promise<undefined[]> {
    // One append carries many requests: the metadata names the gateway; each event its token and request.
    await this.store.append(usageStreamId(studioId), events, { metadata: { actor: 'gateway' } });
    return events.map(() => undefined);
  }

  #retryLater(studioId: string, event: UsageEvent & { id: string }): void {
    this.logger?.warn({ studioId, requestId: event.data.requestId }, 'could not append usage; retrying');
    const retry = (async () => {
      while (!this.#closed) {
        await new Promise((resolve) => setTimeout(resolve, RETRY_AFTER_MS).unref());
        if (this.#closed) break;
        try {
          await this.#commits.submit(studioId, event);
          return;
        } catch {
          // still failing: the next round retries
        }
      }
    })();
    this.#retrying.add(retry);
    void retry.finally(() => this.#retrying.delete(retry));
  }

  /** How many events wait for a retry after a failed append. */
  get retrying(): number {
    return this.#retrying.size;
  }

  /** Waits (at most `deadlineMs`) for events that failed to append to be retried. */
  async close(deadlineMs = 5_000): Promise<void> {
    if (this.#retrying.size > 0) {
      await Promise.race([
        Promise.all(this.#retrying),
        new Promise((resolve) => setTimeout(resolve, deadlineMs).unref()),
      ]);
    }
    this.#closed = true;
    if (this.#retrying.size > 0)
      this.logger?.error({ events: this.#retrying.size }, 'usage events left unrecorded at shutdown');
  }
}
