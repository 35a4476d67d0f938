import { describe, expect, it } from 'vitest';
import { formatReset, rateLimitHeaders } from './headers.ts';

describe('OpenAI rate-limit headers', () => {
  it.each([
    [0, '0s'],
    [250, '250ms'],
    [999.6, '1s'],
    [1000, '1s'],
    [1500, '1.5s'],
    [6000, '6s'],
    [59_999, '59.999s'],
    [60_000, '1m0s'],
    [61_500, '1m1.5s'],
    [3_600_000, '1h0m0s'],
    [-5, '0s'],
  ])('writes %d ms as %s', (ms, text) => {
    expect(formatReset(ms)).toBe(text);
  });

  it('describes the limit with the least remaining, for requests and tokens apart', () => {
    const headers = rateLimitHeaders(
      [
        { limit: 100, used: 10, resetMs: 40_000 },
        { limit: 10, used: 8, resetMs: 6_000 },
      ],
      [{ limit: 1000, used: 1200, resetMs: 250 }],
    );
    expect(headers).toEqual({
      'x-ratelimit-limit-requests': '10',
      'x-ratelimit-remaining-requests': '2',
      'x-ratelimit-reset-requests': '6s',
      'x-ratelimit-limit-tokens': '1000',
      'x-ratelimit-remaining-tokens': '0',
      'x-ratelimit-reset-tokens': '250ms',
    });
  });

  it('says nothing of a kind no limit is set for', () => {
    expect(rateLimitHeaders([], [])).toEqual({});
    expect(Object.keys(rateLimitHeaders([], [{ limit: 5, used: 0, resetMs: 0 }]))).toEqual([
      'x-ratelimit-limit-tokens',
      'x-ratelimit-remaining-tokens',
      'x-ratelimit-reset-tokens',
    ]);
  });
});
