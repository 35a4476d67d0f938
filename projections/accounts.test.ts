import { describe, expect, it } from 'vitest';
import type { AccountEvent } from '../services/accounts/account.ts';
import { foldThroughSnapshot } from '../shared/projections/fold.ts';
import { type AccountsState, accountsProjection, emailKey, identityKey } from './accounts.ts';

/** Given these events (one stream per account), the read model is… */
const given = (events: AccountEvent[]): AccountsState =>
  foldThroughSnapshot(
    accountsProjection,
    events,
    (event) => `account-${(event.data as { accountId: string }).accountId}`,
  );

const created = (accountId: string, email: string | null, studioId = 'acme'): AccountEvent => ({
  type: 'AccountCreated',
  data: { accountId, studioId, email, name: null, origin: 'admin' },
});
const linked = (accountId: string, subject: string): AccountEvent => ({
  type: 'OAuthLinked',
  data: { accountId, studioId: 'acme', provider: 'github', subject, email: null },
});
const removed = (accountId: string): AccountEvent => ({
  type: 'AccountRemoved',
  data: { accountId, studioId: 'acme', tokenIds: [] },
});

describe('accounts projection', () => {
  it('indexes live accounts by email (any case, per studio) and by linked identity', () => {
    const state = given([
      created('a1', 'Ada@Example.com'),
      created('a2', 'ada@example.com', 'other'),
      { type: 'PasswordSet', data: { accountId: 'a1', studioId: 'acme', sealedHash: 'v1.x' } },
      linked('a1', '42'),
    ]);
    expect(state.byEmail.get(emailKey('acme', 'ADA@example.COM'))).toBe('a1');
    expect(state.byEmail.get(emailKey('other', 'ada@example.com'))).toBe('a2');
    expect(state.byIdentity.get(identityKey('acme', 'github', '42'))).toBe('a1');
    expect(state.byId.get('a1')).toMatchObject({
      email: 'Ada@Example.com',
      has_password: true,
      identities: [{ provider: 'github', subject: '42', linked_at: '2030-01-01T00:00:03.000Z' }],
      status: 'active',
      last_login_at: null,
    });
    expect(JSON.stringify(accountsProjection.toSnapshot(state))).not.toContain('v1.x');
  });

  it('records the last login', () => {
    const state = given([
      created('a1', 'ada@example.com'),
      {
        type: 'LoggedIn',
        data: {
          accountId: 'a1',
          studioId: 'acme',
          tokenId: 't',
          method: 'password',
          provider: null,
          expiresAt: '2030-02-01T00:00:00.000Z',
        },
      },
    ]);
    expect(state.byId.get('a1')?.last_login_at).toBe('2030-01-01T00:00:01.000Z');
  });

  it('a removed account leaves the indexes (its email can be reused) but stays listed', () => {
    const state = given([
      created('a1', 'ada@example.com'),
      linked('a1', '42'),
      removed('a1'),
      created('a3', 'ADA@example.com'),
    ]);
    expect(state.byId.get('a1')?.status).toBe('removed');
    expect(state.byEmail.get(emailKey('acme', 'ada@example.com'))).toBe('a3');
    expect(state.byIdentity.get(identityKey('acme', 'github', '42'))).toBeUndefined();
  });

  it('an account without an email is indexed by identity only', () => {
    const state = given([created('a1', null), linked('a1', '7')]);
    expect(state.byEmail.size).toBe(0);
    expect(state.byIdentity.get(identityKey('acme', 'github', '7'))).toBe('a1');
  });
});
