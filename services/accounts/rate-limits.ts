import { RateLimiterMemory } from 'rate-limiter-flexible';
import { ApiError } from '../../shared/errors.ts';

/** Counts events (failures, starts) per key in a fixed window; the key is refused once it has `limit`. */
export class Budget {
  readonly #limiter: RateLimiterMemory;

  constructor(
    readonly limit: number,
    windowS: number,
    name: string,
  ) {
    this.#limiter = new RateLimiterMemory({ keyPrefix: name, points: limit, duration: windowS });
  }

  /** Milliseconds until the key may try again, or 0 when it may now. */
  async waitMs(key: string): Promise<number> {
    const used = await this.#limiter.get(key);
    return used !== null && used.consumedPoints >= this.limit ? Math.max(used.msBeforeNext, 1) : 0;
  }

  /** Counts one against the key (never throws: a spent budget is seen by the next `waitMs`). */
  async spend(key: string): Promise<void> {
    await this.#limiter.penalty(key, 1);
  }

  async reset(key: string): Promise<void> {
    await this.#limiter.delete(key);
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
 * The budgets of the accounts service, per process (a deployment of N gateways allows N times as
 * many before every one refuses): failed logins per account and per client address, OAuth starts
 * and rejected callbacks per address (each writes an event, and guests may call them).
 */
export function accountBudgets() {
  return {
    loginFailuresPerAccount: new Budget(5, 15 * 60, 'login-account'),
    loginFailuresPerAddress: new Budget(20, 15 * 60, 'login-address'),
    oauthStartsPerAddress: new Budget(60, 60, 'oauth-start'),
    oauthRejectionsPerAddress: new Budget(30, 15 * 60, 'oauth-rejected'),
  };
}

export type AccountBudgets = ReturnType<typeof accountBudgets>;
