import { describe, expect, it } from 'vitest';
import { ApiError } from '../errors.ts';
import { OpenStreamLimit } from './open-streams.ts';

describe('OpenStreamLimit', () => {
  it('refuses the stream past the bound with 429 and Retry-After, and counts releases once', () => {
    const limit = new OpenStreamLimit(2);
    const first = limit.acquire('a');
    limit.acquire('a');
    const refused = (() => {
      try {
        limit.acquire('a');
      } catch (error) {
        return error;
      }
    })();
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).status).toBe(429);
    expect((refused as ApiError).options.headers?.['Retry-After']).toBe('1');
    expect(() => limit.acquire('b')).not.toThrow();
    first();
    first();
    expect(limit.openBy('a')).toBe(1);
    expect(() => limit.acquire('a')).not.toThrow();
  });
});
