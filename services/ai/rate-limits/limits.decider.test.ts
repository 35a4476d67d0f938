import { describe, expect, it } from 'vitest';
import { deciderSpec } from '../../../shared/decider-spec.ts';
import { type LimitsEvent, limitsDecider, type RateLimitValues } from './limits.ts';

const spec = deciderSpec(limitsDecider);
const studioId = 'acme';
const none: RateLimitValues = { rpm: null, tpm: null, maxConcurrent: null };
const set = (tokenId: string | null, limits: Partial<RateLimitValues>): LimitsEvent => ({
  type: 'LimitsSet',
  data: { studioId, tokenId, ...none, ...limits },
});
const removed = (tokenId: string | null): LimitsEvent => ({
  type: 'LimitsRemoved',
  data: { studioId, tokenId },
});

describe('limits decider', () => {
  it("sets a studio's limits", () => {
    spec
      .given([])
      .when({ type: 'SetLimits', studioId, tokenId: null, limits: { ...none, rpm: 10 } })
      .thenEmits([set(null, { rpm: 10 })]);
  });

  it("sets a token's limits beside the studio's", () => {
    spec
      .given([set(null, { rpm: 10 })])
      .when({ type: 'SetLimits', studioId, tokenId: 'tok_a', limits: { ...none, maxConcurrent: 3 } })
      .thenEmits([set('tok_a', { maxConcurrent: 3 })]);
  });

  it('a set replaces the whole of that scope: a limit left out is no longer set', () => {
    spec
      .given([set(null, { rpm: 10, tpm: 1000 })])
      .when({ type: 'SetLimits', studioId, tokenId: null, limits: { ...none, tpm: 500 } })
      .thenEmits([set(null, { tpm: 500 })]);
  });

  it('setting the limits already set records nothing', () => {
    spec
      .given([set('tok_a', { rpm: 10, tpm: 1000 })])
      .when({
        type: 'SetLimits',
        studioId,
        tokenId: 'tok_a',
        limits: { rpm: 10, tpm: 1000, maxConcurrent: null },
      })
      .thenEmits([]);
  });

  it('refuses a set without any limit', () => {
    const state = limitsDecider.initialState();
    expect(() =>
      limitsDecider.decide({ type: 'SetLimits', studioId, tokenId: null, limits: none }, state),
    ).toThrow(/at least one limit/);
  });

  it("removes a token's limits, leaving the studio's", () => {
    spec
      .given([set(null, { rpm: 10 }), set('tok_a', { rpm: 5 })])
      .when({ type: 'RemoveLimits', studioId, tokenId: 'tok_a' })
      .thenEmits([removed('tok_a')]);
  });

  it('answers not_found for a scope without limits', () => {
    spec.given([]).when({ type: 'RemoveLimits', studioId, tokenId: null }).thenFails('not_found');
    spec
      .given([set('tok_a', { rpm: 5 })])
      .when({ type: 'RemoveLimits', studioId, tokenId: null })
      .thenFails('not_found', /studio acme has no rate limits/);
    spec
      .given([set('tok_a', { rpm: 5 }), removed('tok_a')])
      .when({ type: 'RemoveLimits', studioId, tokenId: 'tok_a' })
      .thenFails('not_found', /token tok_a of studio acme/);
  });

  it('limits removed can be set again', () => {
    spec
      .given([set(null, { rpm: 10 }), removed(null)])
      .when({ type: 'SetLimits', studioId, tokenId: null, limits: { ...none, rpm: 10 } })
      .thenEmits([set(null, { rpm: 10 })]);
  });
});
