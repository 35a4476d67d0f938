import { describe, expect, it } from 'vitest';
import { newUserToken, sha256Hex } from '../crypto.ts';
import { ApiError } from '../errors.ts';
import { Authenticator, type TokenLookup } from './identity.ts';

const adminKey = 'a'.repeat(40);
const live = newUserToken();
const tokens = new Map<string, ReturnType<TokenLookup['findByHash']>>();
const add = (token: string, patch: Partial<NonNullable<ReturnType<TokenLookup['findByHash']>>> = {}) =>
  tokens.set(sha256Hex(token), {
    tokenId: 't',
    studioId: 's',
    revoked: false,
    expiresAt: null,
    studioStatus: 'active',
    models: null,
    ...patch,
  });
add(live);
const auth = new Authenticator(adminKey, { findByHash: (hash) => tokens.get(hash) });

function failure(header: string) {
  try {
    auth.identify(header);
  } catch (error) {
    if (error instanceof ApiError) return error.code;
    throw error;
  }
  return 'no error';
}

describe('Authenticator', () => {
  it('no header is a guest', () => {
    expect(auth.identify(undefined)).toEqual({ kind: 'guest' });
  });

  it('the admin key is admin', () => {
    expect(auth.identify(`Bearer ${adminKey}`)).toEqual({ kind: 'admin' });
  });

  it('a live token is a user of its studio', () => {
    expect(auth.identify(`Bearer ${live}`)).toEqual({
      kind: 'user',
      tokenId: 't',
      studioId: 's',
      models: null,
    });
  });

  it('a token limited to some models carries them in its identity', () => {
    const limited = newUserToken();
    add(limited, { tokenId: 'l', models: ['dev/*'] });
    expect(auth.identify(`Bearer ${limited}`)).toEqual({
      kind: 'user',
      tokenId: 'l',
      studioId: 's',
      models: ['dev/*'],
    });
  });

  it.each([
    ['a near-miss of the admin key', `Bearer ${adminKey}x`],
    ['an unknown token', `Bearer ${newUserToken()}`],
    ['not a bearer header', `Basic ${adminKey}`],
    ['an empty bearer', 'Bearer '],
  ])('%s is unauthenticated', (_name, header) => {
    expect(failure(header)).toBe('unauthenticated');
  });

  it.each([
    ['revoked', { revoked: true }, 'unauthenticated'],
    ['expired', { expiresAt: new Date(Date.now() - 1000).toISOString() }, 'unauthenticated'],
    ['of a removed studio', { studioStatus: 'removed' }, 'unauthenticated'],
    ['of a paused studio', { studioStatus: 'paused' }, 'studio_paused'],
  ])('a token %s is refused', (_name, patch, code) => {
    const token = newUserToken();
    add(token, patch);
    expect(failure(`Bearer ${token}`)).toBe(code);
  });

  it('a token that expires in the future still works', () => {
    const token = newUserToken();
    add(token, { expiresAt: new Date(Date.now() + 60_000).toISOString() });
    expect(auth.identify(`Bearer ${token}`).kind).toBe('user');
  });
});
