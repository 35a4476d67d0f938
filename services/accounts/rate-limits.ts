import { type RateLimiterAbstract, RateLimiterRes } from 'rate-limiter-flexible';
import { ApiError } from '../../shared/errors.ts';
import type { CounterStore } from '../../shared/rate-limit/counters.ts';

/**
 * Counts events (attempts, starts) per key in a fixed window; the key is refused once it has
 * `limit`. Keys are passed through `keyOf` (a keyed digest) before they reach the store, so a
 * table of counters shows no email and stays within the store's key length.
 */
export class Budget {
  readonly #limiter: RateLimiterAbstract;

  constructor(
    counters: CounterStore,
    readonly limit: number,
    windowS: number,
    name: string,
    private readonly keyOf: (key: string) => string,
  ) {
    this.#limiter = counters.limiter({ name, points: limit, durationS: windowS });
  }

  /**
   * Takes one from the key's budget in one atomic step, before the work it pays for: 0 when it was
   * taken, else the milliseconds until the key may try again. Checking first and counting after
   * would let every request that arrives before the first is counted through.
   */
  async reserve(key: string): Promise<number> {
    try {
      await this.#limiter.consume(this.keyOf(key), 1);
      return 0;
    } catch (error) {
      if (error instanceof RateLimiterRes) return Math.max(error.msBeforeNext, 1);
      throw error;
    }
  }

  /** Gives back one reserved (the attempt turned out not to count). */
  async refund(key: string): Promise<void> {
    await this.#limiter.reward(this.keyOf(key), 1);
  }

  /** Milliseconds until the key may try again, or 0 when it may now. */
  async waitMs(key: string): Promise<number> {
    const used = await this.#limiter.get(this.keyOf(key));
    return used !== null && used.consumedPoints >= this.limit ? Math.max(used.msBeforeNext, 1) : 0;
  }

  /** Counts one against the key (never throws: a spent budget is seen by the next `waitMs`). */
  async spend(key: string): Promise<void> {
    await this.#limiter.penalty(this.keyOf(key), 1);
  }

  async reset(key: string): Promise<void> {
    await this.#limiter.delete(this.keyOf(key));
  }
}

/** 429 `rate_limited` with `Retry-After` in whole seconds. */
export function rateLimited(waitMs: number, message: string): ApiError {
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  return new ApiError('rate_limited', `${message}; try again in ${seconds} s`, {
    headers: { 'Retry-After': String(seconds) },
  });
}

/**
 * The budgets of the accounts service, counted in `counters` (PostgreSQL: shared by every gateway
 * on the database): login attempts per account and per client address (reserved before the
 * password is checked, given back when it was right), OAuth starts and rejected callbacks per
 * address (each writes an event, and guests may call them).
 */
export function accountBudgets(counters: CounterStore, keyOf: (key: string) => string) {
  const budget = (limit: number, windowS: number, name: string) =>
    new Budget(counters, limit, windowS, name, keyOf);
  return {
    loginAttemptsPerAccount: budget(5, 15 * 60, 'login-account'),
    loginAttemptsPerAddress: budget(20, 15 * 60, 'login-address'),
    oauthStartsPerAddress: budget(60, 60, 'oauth-start'),
    oauthRejectionsPerAddress: budget(30, 15 * 60, 'oauth-rejected'),
  };
}

export type AccountBudgets = ReturnType<typeof accountBudgets>;
