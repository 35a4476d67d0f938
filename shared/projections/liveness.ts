import { ApiError } from '../errors.ts';

/** While reads keep failing, at most one warning per this many ms (the rest at debug). */
const WARN_EVERY_MS = 60_000;
export const DEFAULT_STALE_AFTER_MS = 5_000;

/** `live`: follows the log. `catching_up`: reading what it has not applied yet. `stalled`: its reads fail. */
export type LivenessState = 'live' | 'catching_up' | 'stalled';

export interface LivenessReport {
  state: LivenessState;
  /** When reads started failing (ISO 8601); null unless an outage is under way or being caught up. */
  stalled_since: string | null;
  /** Failed reads since `stalled_since`. */
  failed_reads: number;
  /** Class and code of the last failure (never its message: drivers put values and hosts there). */
  last_error: string | null;
}

/**
 * Whether read models kept from the log can be trusted right now. An outage starts at the first
 * failed read and ends only once a resubscription has caught up with the log again: until then the
 * state may miss events (a revoked token, a paused studio), and past `staleAfterMs` it is stale.
 */
export class ReadModelLiveness {
  #live = false;
  #failingSince: number | undefined;
  #failures = 0;
  #readingAgain = false;
  #lastError: string | null = null;
  #lastWarnAt = 0;

  constructor(readonly staleAfterMs = DEFAULT_STALE_AFTER_MS) {}

  /** A read failed; `warn` says whether this one deserves a warning in the log. */
  failed(error: unknown, now = Date.now()): { warn: boolean } {
    this.#live = false;
    this.#failingSince ??= now;
    this.#failures++;
    this.#readingAgain = false;
    this.#lastError = describeError(error);
    const warn = this.#failures === 1 || now - this.#lastWarnAt >= WARN_EVERY_MS;
    if (warn) this.#lastWarnAt = now;
    return { warn };
  }

  /** A read delivered an event. */
  readSucceeded(): void {
    this.#readingAgain = true;
  }

  /** The subscription reached the head; returns the outage this ends, if any. */
  caughtUp(): { since: string; failures: number } | undefined {
    const ended =
      this.#failingSince === undefined
        ? undefined
        : { since: new Date(this.#failingSince).toISOString(), failures: this.#failures };
    this.#live = true;
    this.#failingSince = undefined;
    this.#failures = 0;
    this.#readingAgain = false;
    this.#lastError = null;
    return ended;
  }

  get state(): LivenessState {
    if (this.#failingSince !== undefined && !this.#readingAgain) return 'stalled';
    return this.#live ? 'live' : 'catching_up';
  }

  /** Whether reads have been failing (or catching up after failing) for longer than the bound. */
  isStale(now = Date.now()): boolean {
    return this.#failingSince !== undefined && now - this.#failingSince >= this.staleAfterMs;
  }

  report(): LivenessReport {
    return {
      state: this.state,
      stalled_since: this.#failingSince === undefined ? null : new Date(this.#failingSince).toISOString(),
      failed_reads: this.#failures,
      last_error: this.#lastError,
    };
  }

  /** Fail closed: refuses (503 `unavailable`) to answer from read models that are stale. */
  assertFresh(what: string, now = Date.now()): void {
    if (!this.isStale(now)) return;
    throw new ApiError(
      'unavailable',
      `${what} cannot be answered right now: the read models have not been able to follow the log since ${new Date(this.#failingSince!).toISOString()}; try again shortly`,
      { headers: { 'Retry-After': String(Math.max(1, Math.ceil(this.staleAfterMs / 1000))) } },
    );
  }
}

function describeError(error: unknown): string {
  if (!(error instanceof Error)) return typeof error;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' || typeof code === 'number' ? `${error.name} (${code})` : error.name;
}
