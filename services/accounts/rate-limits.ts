import { ApiError } from '../../shared/errors.ts';
import type { AdmissionStore } from '../../shared/rate-limit/admissions.ts';
import type { CounterStore } from '../../shared/rate-limit/counters.ts';

/**
 * Counts attempts (logins, OAuth starts) per key in a fixed window; the key is refused once it has
 * `limit`. Counted in the same store and by the same counts as generations' rate limits (memory,
 * PostgreSQL or Redis: shared by every gateway on it). Keys are passed through `keyOf` (a keyed
 * digest) before they reach the store, so a table of counters shows no email and stays within the
 * store's key length.
 */
export class AttemptLimit {
  readonly #store: AdmissionStore;
  readonly #windowMs: number;

  constructor(
    counters: CounterStore,
    readonly limit: number,
    windowS: number,
    private readonly name: string,
    private readonly keyOf: (key: string) => string,
  ) {
    this.#store = counters.admissions;
    this.#windowMs = windowS * 1000;
  }

  /**
   * Takes one from the key's attempts in one atomic step, before the work it pays for: 0 when it
   * was taken, else the milliseconds until the key may try again. Checking first and counting after
   * would let every request that arrives before the first is counted through.
   */
  async reserve(key: string): Promise<number> {
    const answer = await this.#store.admit({
      ...this.#nothingElse(),
      requests: [{ key: this.#key(key), limit: this.limit }],
    });
    return answer.admitted ? 0 : Math.max(answer.requests[0]!.resetMs, 1);
  }

  /** Gives back one reserved (the attempt turned out not to count). */
  async refund(key: string): Promise<void> {
    await this.#charge(key, -1);
  }

  /** Milliseconds until the key may try again, or 0 when it may now. */
  async waitMs(key: string): Promise<number> {
    const { used, resetMs } = await this.#read(key);
    return used >= this.limit ? Math.max(resetMs, 1) : 0;
  }

  /** Counts one against the key (never refused: a spent key is seen by the next `waitMs`). */
  async spend(key: string): Promise<void> {
    await this.#charge(key, 1);
  }

  /** The key's count back to none (a right password clears the wrong ones before it). */
  async reset(key: string): Promise<void> {
    const { used } = await this.#read(key);
    if (used > 0) await this.#charge(key, -used);
  }

  #key(key: string): string {
    return `${this.name}:${this.keyOf(key)}`;
  }

  /** The count, read without counting: asked as a charge of nothing against a limit of none. */
  async #read(key: string) {
    const answer = await this.#store.admit({
      ...this.#nothingElse(),
      tokens: [{ key: this.#key(key), limit: Number.MAX_SAFE_INTEGER }],
    });
    return answer.tokens[0]!;
  }

  #charge(key: string, charge: number): Promise<void> {
    return this.#store.settle({
      slots: [],
      leaseId: '',
      tokens: [{ key: this.#key(key), charge }],
      windowMs: this.#windowMs,
    });
  }

  #nothingElse() {
    return { requests: [], tokens: [], slots: [], leaseId: '', leaseMs: 0, windowMs: this.#windowMs };
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
 * The attempt limits of the accounts service: login attempts per account and per client address
 * (reserved before the password is checked, given back when it was right), OAuth starts and
 * rejected callbacks per address (each writes an event, and guests may call them).
 */
export function accountAttemptLimits(counters: CounterStore, keyOf: (key: string) => string) {
  const limit = (max: number, windowS: number, name: string) =>
    new AttemptLimit(counters, max, windowS, name, keyOf);
  return {
    loginAttemptsPerAccount: limit(5, 15 * 60, 'login-account'),
    loginAttemptsPerAddress: limit(20, 15 * 60, 'login-address'),
    oauthStartsPerAddress: limit(60, 60, 'oauth-start'),
    oauthRejectionsPerAddress: limit(30, 15 * 60, 'oauth-rejected'),
  };
}

export type AccountAttemptLimits = ReturnType<typeof accountAttemptLimits>;
