import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../shared/errors.ts';
import type { GatewayContext } from '../../../shared/gateway-context.ts';
import { createLogger } from '../../../shared/logger.ts';
import type { AdmissionStore } from '../../../shared/rate-limit/admissions.ts';
import { type CounterStore, memoryCounters } from '../../../shared/rate-limit/counters.ts';
import { StudioRateLimits } from './rate-limiter.ts';
import { type LimitRecord, type LimitsState, limitsProjection } from './read-model.ts';

const user = { kind: 'user', studioId: 'acme', tokenId: 'tok_a', models: null } as const;

function record(tokenId: string | null, limits: Partial<LimitRecord>): LimitRecord {
  return {
    studio_id: 'acme',
    token_id: tokenId,
    rpm: null,
    tpm: null,
    max_concurrent: null,
    updated_at: '2025-01-01T00:00:00.000Z',
    ...limits,
  };
}

/** The limiter over a read model holding `records` and the given counter store. */
function limiterWith(records: LimitRecord[], counters: CounterStore = memoryCounters(), leaseMs?: number) {
  const state: LimitsState = new Map([['acme', new Map(records.map((r) => [r.token_id ?? '', r]))]]);
  const gw = {
    counters,
    logger: createLogger('silent'),
    projections: {
      state: (projection: unknown) => {
        expect(projection).toBe(limitsProjection);
        return state;
      },
    },
  } as unknown as GatewayContext;
  return new StudioRateLimits(gw, leaseMs);
}

async function refusal(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

describe('StudioRateLimits', () => {
  it('lets the admin key and studios without limits through with no headers', async () => {
    const limits = limiterWith([]);
    expect((await limits.admit({ kind: 'admin' })).headers).toEqual({});
    expect((await limits.admit(user)).headers).toEqual({});
  });

  it("takes a slot of every scope or none: the token's full, the studio's is given back", async () => {
    const limits = limiterWith([record(null, { max_concurrent: 2 }), record('tok_a', { max_concurrent: 1 })]);
    const held = await limits.admit(user);
    const refused = await refusal(limits.admit(user));
    expect(refused.code).toBe('rate_limited');
    expect(refused.message).toContain('token tok_a allows 1 generations at once');
    // Another token of the studio still finds the studio's second slot.
    await limits.admit({ ...user, tokenId: 'tok_b' });
    held.release(0);
    await limits.admit(user);
  });

  it('a generation refused for concurrency does not count against the minute', async () => {
    const limits = limiterWith([record(null, { rpm: 2, max_concurrent: 1 })]);
    const held = await limits.admit(user);
    expect(held.headers['x-ratelimit-remaining-requests']).toBe('1');
    for (let i = 0; i < 3; i++) await refusal(limits.admit(user));
    held.release(0);
    expect((await limits.admit(user)).headers['x-ratelimit-remaining-requests']).toBe('0');
  });

  it('releasing twice gives back one slot and charges the tokens once', async () => {
    const limits = limiterWith([record(null, { tpm: 100, max_concurrent: 1 })]);
    const permit = await limits.admit(user);
    permit.release(30);
    permit.release(30);
    const next = await limits.admit(user);
    expect(next.headers['x-ratelimit-remaining-tokens']).toBe('70');
  });

  it('a counter store that fails is a 503 with Retry-After, never a generation let through unchecked', async () => {
    const counters = memoryCounters();
    const failing: AdmissionStore = {
      admit: () => Promise.reject(new Error('connection refused')),
      settle: () => Promise.resolve(),
      renew: () => Promise.resolve(),
    };
    const limits = limiterWith([record(null, { max_concurrent: 3 })], { ...counters, admissions: failing });
    const error = await refusal(limits.admit(user));
    expect(error.code).toBe('unavailable');
    expect(error.options.headers).toEqual({ 'Retry-After': '1' });
  });

  it('a slot held longer than its lease is renewed while its generation runs, and free once released', async () => {
    const limits = limiterWith(
      [record(null, { max_concurrent: 1 }), record('tok_b', {})],
      memoryCounters(),
      60,
    );
    const first = await limits.admit(user);
    const second = await limits.admit({ ...user, tokenId: 'tok_b' }).catch((e: unknown) => e);
    expect(second).toBeInstanceOf(ApiError);
    await new Promise((resolve) => setTimeout(resolve, 250)); // four leases
    expect((await refusal(limits.admit(user))).code).toBe('rate_limited');
    first.release(0);
    (await limits.admit(user)).release(0);
  });
});
