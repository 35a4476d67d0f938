import { describe, it } from 'vitest';
import { deciderSpec } from '../../shared/decider-spec.ts';
import { type AccountCommand, type AccountEvent, accountDecider } from './account.ts';

const spec = deciderSpec(accountDecider);
const accountId = 'acc_1';
const studioId = 'acme';

const create = (
  overrides: Partial<Extract<AccountCommand, { type: 'CreateAccount' }>> = {},
): AccountCommand => ({
  type: 'CreateAccount',
  accountId,
  studioId,
  email: 'Ada@Example.com',
  name: 'Ada',
  origin: 'admin',
  sealedHash: null,
  link: null,
  ...overrides,
});
const created: AccountEvent = {
  type: 'AccountCreated',
  data: { accountId, studioId, email: 'Ada@Example.com', name: 'Ada', origin: 'admin' },
};
const passwordSet: AccountEvent = {
  type: 'PasswordSet',
  data: { accountId, studioId, sealedHash: 'v1.sealed' },
};
const removed = (tokenIds: string[] = []): AccountEvent => ({
  type: 'AccountRemoved',
  data: { accountId, studioId, tokenIds },
});
const loggedIn = (tokenId: string): AccountEvent => ({
  type: 'LoggedIn',
  data: {
    accountId,
    studioId,
    tokenId,
    method: 'password',
    provider: null,
    expiresAt: '2030-01-01T00:00:00.000Z',
  },
});
const linked: AccountEvent = {
  type: 'OAuthLinked',
  data: { accountId, studioId, provider: 'github', subject: '42', email: 'ada@example.com' },
};
const login = (tokenId: string): AccountCommand => ({
  type: 'RecordLogin',
  accountId,
  tokenId,
  method: 'password',
  provider: null,
  expiresAt: '2030-01-01T00:00:00.000Z',
});
const link: AccountCommand = {
  type: 'LinkIdentity',
  accountId,
  provider: 'github',
  subject: '42',
  email: 'ada@example.com',
};

describe('account decider: creation', () => {
  it('creates an account without a password', () => {
    spec.given([]).when(create()).thenEmits([created]);
  });

  it('creates an account with its sealed password hash in the same append', () => {
    spec
      .given([])
      .when(create({ sealedHash: 'v1.sealed' }))
      .thenEmits([created, passwordSet]);
  });

  it('an account created by its first OAuth sign-in is linked to that identity at once', () => {
    spec
      .given([])
      .when(
        create({ origin: 'oauth', email: 'ada@example.com', link: { provider: 'github', subject: '42' } }),
      )
      .thenEmits([
        {
          type: 'AccountCreated',
          data: { accountId, studioId, email: 'ada@example.com', name: 'Ada', origin: 'oauth' },
        },
        linked,
      ]);
  });

  it('refuses to create an account twice, even a removed one', () => {
    spec
      .given([created])
      .when(create())
      .thenFails('conflict', /already exists/);
    spec
      .given([created, removed()])
      .when(create())
      .thenFails('conflict', /already exists/);
  });

  it.each([
    login('tok_1'),
    link,
    { type: 'RemoveAccount', accountId } as const,
    {
      type: 'RecordLoginFailure',
      accountId,
      reason: 'wrong_password',
      emailHash: 'h',
      address: null,
    } as const,
  ])('answers not_found for $type on an unknown account', (command) => {
    spec.given([]).when(command).thenFails('not_found');
  });
});

describe('account decider: sign-ins', () => {
  it('records a login with the token it issued', () => {
    spec
      .given([created, passwordSet])
      .when(login('tok_1'))
      .thenEmits([loggedIn('tok_1')]);
  });

  it('a removed account cannot sign in', () => {
    spec
      .given([created, removed()])
      .when(login('tok_1'))
      .thenFails('conflict', /removed/);
  });

  it('records a failed login, also for a removed account (the audit shows who keeps trying)', () => {
    const failure = {
      type: 'RecordLoginFailure',
      accountId,
      reason: 'wrong_password',
      emailHash: 'h',
      address: '127.0.0.1',
    } as const;
    const failed: AccountEvent = {
      type: 'LoginFailed',
      data: { accountId, studioId, reason: 'wrong_password', emailHash: 'h', address: '127.0.0.1' },
    };
    spec.given([created]).when(failure).thenEmits([failed]);
    spec.given([created, removed()]).when(failure).thenEmits([failed]);
  });
});

describe('account decider: identities', () => {
  it('links an OAuth identity once', () => {
    spec.given([created]).when(link).thenEmits([linked]);
    spec.given([created, linked]).when(link).thenEmits([]);
  });

  it('links a second identity of the same provider', () => {
    spec
      .given([created, linked])
      .when({ ...link, subject: '43' } as AccountCommand)
      .thenEmits([{ type: 'OAuthLinked', data: { ...linked.data, subject: '43' } } as AccountEvent]);
  });

  it('a removed account cannot be linked', () => {
    spec
      .given([created, removed()])
      .when(link)
      .thenFails('conflict', /removed/);
  });
});

describe('account decider: removal', () => {
  it('removes an account and names every token its sign-ins issued', () => {
    spec
      .given([created, loggedIn('tok_1'), loggedIn('tok_2')])
      .when({ type: 'RemoveAccount', accountId })
      .thenEmits([removed(['tok_1', 'tok_2'])]);
  });

  it('removing a removed account succeeds without a new event', () => {
    spec.given([created, removed()]).when({ type: 'RemoveAccount', accountId }).thenEmits([]);
  });
});
