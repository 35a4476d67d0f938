import { randomUUID } from 'node:crypto';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import { type LimitRecord, limitsProjection } from '../../../projections/limits.ts';
import { ApiError } from '../../../shared/errors.ts';
import type { GatewayContext } from '../../../shared/gateway-context.ts';
import type { Identity } from '../../../shared/http/identity.ts';
import { type LimitReading, rateLimitHeaders } from './rate-limit-headers.ts';
import { type RateLimits, type RatePermit, UNLIMITED } from './rate-limits.ts';

const MINUTE_S = 60;
/** How long a generation holds its slot unless renewed; the holder renews it every third of that. */
export const IN_FLIGHT_LEASE_MS = 60_000;
/** Renewals stop after this: a generation that never ends (a bug) cannot hold a slot for ever. */
const MAX_HOLD_MS = 60 * 60_000;

/** A studio, or one of its tokens, and the limits set on it. */
interface Scope {
  /** `studio:<id>` or `token:<id>`: the key of its counters. */
  key: string;
  /** How a refusal names it. */
  name: string;
  limits: LimitRecord;
}

interface Reading extends LimitReading {
  scope: Scope;
}

/** One reason a generation is refused, and how long until it no longer holds. */
interface Refusal {
  reason: string;
  retryMs: number;
}

/**
 * The rate limits admins set (`studios/limits/set`), enforced before any upstream call, for user
 * tokens only (the admin key is not limited). Per scope (the studio, all its tokens together; and
 * each token alone), every limit set applies:
 *
 * - `rpm`: generations started per fixed minute, counted at admission.
 * - `tpm`: tokens per fixed minute, charged when a generation ends with the tokens it used
 *   (input + output); a generation is refused once its minute's tokens reached the limit. A
 *   generation under way is never cut off, so a minute may end somewhat over.
 * - `max_concurrent`: generations in flight, each holding a lease (`IN_FLIGHT_LEASE_MS`, renewed
 *   while it runs) given back when it ends. Over the limit is a 429 at once, never a queue.
 *
 * Counters live in `gw.counters` (Redis, PostgreSQL or memory), so every gateway sharing them
 * counts against the same numbers. A refused generation counts against nothing.
 */
export class StudioRateLimits implements RateLimits {
  readonly #requests: RateLimiterAbstract;
  readonly #tokens: RateLimiterAbstract;
  /** Slots held by generations under way, renewed together by one timer (not one per generation). */
  readonly #holding = new Set<Holding>();
  #renewal: NodeJS.Timeout | undefined;

  constructor(
    private readonly gw: GatewayContext,
    private readonly leaseMs = IN_FLIGHT_LEASE_MS,
  ) {
    // Each scope's limit is compared here, not by the limiter (its `points` are unused): one
    // limiter serves every limit value, and a changed limit keeps the minute's count.
    const perMinute = (name: string) => gw.counters.limiter({ name, points: 1, durationS: MINUTE_S });
    this.#requests = perMinute('ai-requests');
    this.#tokens = perMinute('ai-tokens');
  }

  async admit(identity: Identity): Promise<RatePermit> {
    if (identity.kind !== 'user') return UNLIMITED;
    const scopes = this.#scopesOf(identity.studioId, identity.tokenId);
    if (scopes.length === 0) return UNLIMITED;
    try {
      return await this.#admit(scopes);
    } catch (error) {
      if (error instanceof ApiError) throw error;
      this.gw.logger.error({ err: error }, 'rate limits could not be checked');
      throw new ApiError('unavailable', 'rate limits cannot be checked now; try again shortly', {
        headers: { 'Retry-After': '1' },
      });
    }
  }

  #scopesOf(studioId: string, tokenId: string): Scope[] {
    const limits = this.gw.projections.state(limitsProjection).get(studioId);
    const studio = limits?.get('');
    const token = limits?.get(tokenId);
    return [
      ...(studio ? [{ key: `studio:${studioId}`, name: `studio ${studioId}`, limits: studio }] : []),
      ...(token ? [{ key: `token:${tokenId}`, name: `token ${tokenId}`, limits: token }] : []),
    ];
  }

  async #admit(scopes: Scope[]): Promise<RatePermit> {
    const [requests, tokens] = await Promise.all([
      Promise.all(scopes.filter((s) => s.limits.rpm !== null).map((s) => this.#countRequest(s))),
      Promise.all(scopes.filter((s) => s.limits.tpm !== null).map((s) => this.#readTokens(s))),
    ]);
    const refusals = [
      ...requests
        .filter((r) => r.used > r.limit)
        .map((r) => ({ reason: `${r.scope.name} allows ${r.limit} requests a minute`, retryMs: r.resetMs })),
      ...tokens
        .filter((t) => t.used >= t.limit)
        .map((t) => ({ reason: `${t.scope.name} allows ${t.limit} tokens a minute`, retryMs: t.resetMs })),
    ];
    if (refusals.length > 0) throw await this.#refuse(refusals, requests, tokens);

    const leaseId = randomUUID();
    const { held, full } = await this.#takeSlots(scopes, leaseId);
    if (full.length > 0) {
      const refused = full.map((s) => ({
        reason: `${s.name} allows ${s.limits.max_concurrent} generations at once`,
        retryMs: 1000,
      }));
      throw await this.#refuse(refused, requests, tokens);
    }
    return this.#permit(rateLimitHeaders(requests, tokens), tokens, held, leaseId);
  }

  /** Counts the generation against the scope's minute (a refused one is given back). */
  async #countRequest(scope: Scope): Promise<Reading> {
    const res = await this.#requests.penalty(scope.key, 1);
    return { scope, limit: scope.limits.rpm!, used: res.consumedPoints, resetMs: res.msBeforeNext };
  }

  async #readTokens(scope: Scope): Promise<Reading> {
    const res = await this.#tokens.get(scope.key);
    const resetMs = res ? res.msBeforeNext : 0;
    return { scope, limit: scope.limits.tpm!, used: res?.consumedPoints ?? 0, resetMs };
  }

  /** A slot of every scope with `max_concurrent`, or none: what was taken is given back when one is full. */
  async #takeSlots(scopes: Scope[], leaseId: string): Promise<{ held: string[]; full: Scope[] }> {
    const limited = scopes.filter((s) => s.limits.max_concurrent !== null);
    const taken = await Promise.allSettled(
      limited.map((s) =>
        this.gw.counters.leases.acquire(slotKey(s), leaseId, s.limits.max_concurrent!, this.leaseMs),
      ),
    );
    const held = limited.filter((_, i) => taken[i]!.status === 'fulfilled' && taken[i]!.value).map(slotKey);
    const full = limited.filter((_, i) => taken[i]!.status === 'fulfilled' && !taken[i]!.value);
    const failed = taken.find((t) => t.status === 'rejected');
    if (failed || full.length > 0)
      await Promise.all(held.map((key) => this.gw.counters.leases.release(key, leaseId)));
    if (failed) throw failed.reason;
    return { held, full };
  }

  /** Gives the refused generation's request back and builds its 429, headers as they stand without it. */
  async #refuse(refusals: Refusal[], requests: Reading[], tokens: Reading[]): Promise<ApiError> {
    await Promise.all(requests.map((r) => this.#requests.reward(r.scope.key, 1)));
    const uncounted = requests.map((r) => ({ ...r, used: r.used - 1 }));
    const seconds = Math.max(1, ...refusals.map((r) => Math.ceil(r.retryMs / 1000)));
    return new ApiError(
      'rate_limited',
      `rate limit reached: ${refusals.map((r) => r.reason).join('; ')}; try again in ${seconds} s`,
      { headers: { ...rateLimitHeaders(uncounted, tokens), 'Retry-After': String(seconds) } },
    );
  }

  #permit(headers: Record<string, string>, tokens: Reading[], held: string[], leaseId: string): RatePermit {
    const failed = (what: string) => (error: unknown) =>
      this.gw.logger.warn({ err: error }, `rate limits: could not ${what}`);
    const leases = this.gw.counters.leases;
    const holding: Holding = { keys: held, leaseId, since: Date.now() };
    if (held.length > 0) this.#hold(holding);
    let released = false;
    return {
      headers,
      release: (used) => {
        if (released) return;
        released = true;
        this.#unhold(holding);
        for (const key of held) leases.release(key, leaseId).catch(failed('give a slot back'));
        const charge = Math.ceil(used);
        if (charge > 0)
          for (const t of tokens) this.#tokens.penalty(t.scope.key, charge).catch(failed('count tokens'));
      },
    };
  }

  /**
   * Every third of the lease, each slot held is renewed: a slot is renewed at most a third of a
   * lease after it was taken, and then every third. Renewals stop after `MAX_HOLD_MS`.
   */
  #hold(holding: Holding): void {
    this.#holding.add(holding);
    if (this.#renewal) return;
    this.#renewal = setInterval(() => {
      const now = Date.now();
      for (const h of this.#holding) {
        if (now - h.since > MAX_HOLD_MS) {
          this.#unhold(h);
          continue;
        }
        for (const key of h.keys)
          this.gw.counters.leases
            .renew(key, h.leaseId, this.leaseMs)
            .catch((error: unknown) =>
              this.gw.logger.warn({ err: error }, 'rate limits: could not renew a slot'),
            );
      }
    }, this.leaseMs / 3).unref();
  }

  #unhold(holding: Holding): void {
    this.#holding.delete(holding);
    if (this.#holding.size > 0 || !this.#renewal) return;
    clearInterval(this.#renewal);
    this.#renewal = undefined;
  }
}

/** The slots one generation holds, under one lease id. */
interface Holding {
  keys: readonly string[];
  leaseId: string;
  since: number;
}

const slotKey = (scope: Scope) => `ai-in-flight:${scope.key}`;
