import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../shared/errors.ts';
import type { Identity } from '../../../shared/http/identity.ts';
import { cachePolicy, parseCacheHeader } from './policy.ts';

const user: Identity = { kind: 'user', studioId: 'acme', tokenId: 'tok_1', models: null };
const ttlOf = (ttl: number) => () => ttl;

describe('cache policy', () => {
  it("follows the studio's setting when the request says nothing", () => {
    expect(cachePolicy(user, undefined, ttlOf(0))).toEqual({ use: false });
    expect(cachePolicy(user, undefined, ttlOf(300))).toEqual({ use: true, studioId: 'acme', ttlS: 300 });
  });

  it('ttl=N turns it on for the request, over the setting; no-store turns it off', () => {
    expect(cachePolicy(user, 'ttl=60', ttlOf(0))).toEqual({ use: true, studioId: 'acme', ttlS: 60 });
    expect(cachePolicy(user, ' TTL = 5 ', ttlOf(300))).toEqual({ use: true, studioId: 'acme', ttlS: 5 });
    expect(cachePolicy(user, 'no-store', ttlOf(300))).toEqual({ use: false });
  });

  it('the admin key has no studio: never cached', () => {
    expect(cachePolicy({ kind: 'admin' }, 'ttl=60', ttlOf(300))).toEqual({ use: false });
  });

  it.each([
    '',
    'ttl=0',
    'ttl=-1',
    'ttl=1.5',
    'ttl=2592001',
    'ttl=999999999',
    'max-age=5',
    'no-cache',
    'ttl=5, no-store',
  ])('refuses %j with a 400 naming the header', (header) => {
    try {
      parseCacheHeader(header);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).code).toBe('validation_failed');
      expect((error as ApiError).options.param).toBe('x-studio-cache');
    }
  });
});
