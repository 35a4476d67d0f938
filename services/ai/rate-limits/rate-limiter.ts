import { randomUUID } from 'node:crypto';
import { ApiError } from '../../../shared/errors.ts';
import type { GatewayContext } from '../../../shared/gateway-context.ts';
import type { Identity } from '../../../shared/http/identity.ts';
import { type LimitReading, rateLimitHeaders } from './headers.ts';
import { type RateLimits, type RatePermit, UNLIMITED } from './rate-limits.ts';
import { type LimitRecord, limitsProjection } from './read-model.ts';

const MINUTE_MS = 60_000;
/** How long a generation holds its slot unless renewed; the holder renews it every third of that. */
export const IN_FLIGHT_LEASE_MS = 60_000;

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
  /** Slots held by generations under way, renewed together by one timer (not one per generation). */
  readonly #holding = new Set<Holding>();
  #renewal: NodeJS.Timeout | undefined;

  constructor(
    private readonly gw: GatewayContext,
    private readonly leaseMs = IN_FLIGHT_LEASE_MS,
  ) {}

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

  /** Every limit of every scope checked, and the generation counted and given its slots, in one call. */
  async #admit(scopes: Scope[]): Promise<RatePermit> {
    const counted = scopes.filter((s) => s.limits.rpm !== null);
    const charged = scopes.filter((s) => s.limits.tpm !== null);
    const slotted = scopes.filter((s) => s.limits.max_concurrent !== null);
    const leaseId = randomUUID();
    const answer = await this.gw.counters.admissions.admit({
      requests: counted.map((s) => ({ key: requestsKey(s), limit: s.limits.rpm! })),
      tokens: charged.map((s) => ({ key: tokensKey(s), limit: s.limits.tpm! })),
      slots: slotted.map((s) => ({ key: slotKey(s), max: s.limits.max_concurrent! })),
      leaseId,
      leaseMs: this.leaseMs,
      windowMs: MINUTE_MS,
    });
    const requests = counted.map((scope, i) => ({ scope, limit: scope.limits.rpm!, ...answer.requests[i]! }));
    const tokens = charged.map((scope, i) => ({ scope, limit: scope.limits.tpm!, ...answer.tokens[i]! }));
    if (answer.admitted)
      return this.#permit(rateLimitHeaders(requests, tokens), tokens, slotted.map(slotKey), leaseId);

    // Refused: the counts are as they stand without this generation.
    const byCount = [
      ...requests
        .filter((r) => r.used >= r.limit)
        .map((r) => ({ reason: `${r.scope.name} allows ${r.limit} requests a minute`, retryMs: r.resetMs })),
      ...tokens
        .filter((t) => t.used >= t.limit)
        .map((t) => ({ reason: `${t.scope.name} allows ${t.limit} tokens a minute`, retryMs: t.resetMs })),
    ];
    const bySlot = slotted
      .filter((_, i) => answer.full[i])
      .map((s) => ({
        reason: `${s.name} allows ${s.limits.max_concurrent} generations at once`,
        retryMs: 1000,
      }));
    const refusals = byCount.length > 0 ? byCount : bySlot;
    const seconds = Math.max(1, ...refusals.map((r) => Math.ceil(r.retryMs / 1000)));
    throw new ApiError(
      'rate_limited',
      `rate limit reached: ${refusals.map((r) => r.reason).join('; ')}; try again in ${seconds} s`,
      { headers: { ...rateLimitHeaders(requests, tokens), 'Retry-After': String(seconds) } },
    );
  }

  #permit(headers: Record<string, string>, tokens: Reading[], held: string[], leaseId: string): RatePermit {
    const holding: Holding = { keys: held, leaseId };
    if (held.length > 0) this.#hold(holding);
    let released = false;
    return {
      headers,
      release: (used) => {
        if (released) return;
        released = true;
        this.#unhold(holding);
        const charge = Math.ceil(used);
        const charges = charge > 0 ? tokens.map((t) => ({ key: tokensKey(t.scope), charge })) : [];
        if (held.length === 0 && charges.length === 0) return;
        this.gw.counters.admissions
          .settle({ slots: held, leaseId, tokens: charges, windowMs: MINUTE_MS })
          .catch((error: unknown) =>
            this.gw.logger.warn({ err: error }, 'rate limits: could not give slots back or count tokens'),
          );
      },
    };
  }

  /**
   * Every third of the lease, each slot held is renewed: a slot is renewed at most a third of a
   * lease after it was taken, and then every third, for as long as its generation runs (a stream
   * may outlast any fixed bound). A process that dies stops renewing: its slots lapse a lease later.
   */
  #hold(holding: Holding): void {
    this.#holding.add(holding);
    if (this.#renewal) return;
    this.#renewal = setInterval(() => {
      for (const h of this.#holding) {
        this.gw.counters.admissions
          .renew(h.keys, h.leaseId, this.leaseMs)
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
}

// Counter keys are `<what>:<scope>`, as the login attempts' are (`login-account:<digest>`).
const requestsKey = (scope: Scope) => `ai-requests:${scope.key}`;
const tokensKey = (scope: Scope) => `ai-tokens:${scope.key}`;
const slotKey = (scope: Scope) => `ai-in-flight:${scope.key}`;
