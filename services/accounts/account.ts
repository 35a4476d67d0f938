import { type Decider, unknownCase } from '../../shared/decider.ts';
import { DomainError } from '../../shared/errors.ts';

/** One stream per account (`account-<id>`): its creation, password, sign-ins, linked identities, removal. */
export const accountStreamId = (accountId: string) => `account-${accountId}`;

/** Failed logins that name no account (unknown email, unknown or removed studio) are kept here. */
export const LOGIN_FAILURES_STREAM = 'login-failures';

export type LoginMethod = 'password' | 'oauth';

export type LoginFailureReason =
  | 'wrong_password'
  /** The account has no password (it signs in with OAuth only). */
  | 'no_password'
  | 'unknown_account'
  | 'studio_unavailable'
  /** The credentials were right, but the studio is paused. */
  | 'studio_paused';

export interface LoginFailedData {
  accountId: string | null;
  studioId: string;
  reason: LoginFailureReason;
  /**
   * HMAC-SHA256 of the email as typed, lower-cased, under a key derived from the master key: failures
   * of one email can be told apart, but the email is not readable (people type passwords into email
   * fields), and no dictionary of emails finds it without the key.
   */
  emailHash: string;
  /** The client's address, for the audit of repeated failures. */
  address: string | null;
}

export type AccountEvent =
  | {
      type: 'AccountCreated';
      data: {
        accountId: string;
        studioId: string;
        email: string | null;
        name: string | null;
        origin: 'admin' | 'oauth';
      };
    }
  | {
      type: 'PasswordSet';
      /** The Argon2id PHC string, encrypted with the master key: not even the hash is readable in the log. */
      data: { accountId: string; studioId: string; sealedHash: string };
    }
  | {
      type: 'LoggedIn';
      data: {
        accountId: string;
        studioId: string;
        /** The token issued (its TokenIssued event, in the studio's stream, holds only its hash). */
        tokenId: string;
        method: LoginMethod;
        provider: string | null;
        expiresAt: string;
      };
    }
  | { type: 'LoginFailed'; data: LoginFailedData }
  | {
      type: 'OAuthLinked';
      data: { accountId: string; studioId: string; provider: string; subject: string; email: string | null };
    }
  | {
      type: 'AccountRemoved';
      /** `tokenIds`: every token issued to the account, revoked with it. */
      data: { accountId: string; studioId: string; tokenIds: string[] };
    };

export type AccountCommand =
  | {
      type: 'CreateAccount';
      accountId: string;
      studioId: string;
      email: string | null;
      name: string | null;
      origin: 'admin' | 'oauth';
      sealedHash: string | null;
      /** An identity to link at once (an account created by its first OAuth sign-in). */
      link: { provider: string; subject: string } | null;
    }
  | {
      type: 'RecordLogin';
      accountId: string;
      tokenId: string;
      method: LoginMethod;
      provider: string | null;
      expiresAt: string;
    }
  | {
      type: 'RecordLoginFailure';
      accountId: string;
      reason: LoginFailureReason;
      emailHash: string;
      address: string | null;
    }
  | { type: 'LinkIdentity'; accountId: string; provider: string; subject: string; email: string | null }
  | { type: 'RemoveAccount'; accountId: string };

export interface AccountState {
  status: 'none' | 'active' | 'removed';
  studioId: string;
  email: string | null;
  sealedHash: string | null;
  /** `<provider>:<subject>` of every linked identity. */
  links: string[];
  /** Every token issued to the account by a login. */
  tokens: string[];
}

export const ACCOUNT_EVENT_TYPES = [
  'AccountCreated',
  'PasswordSet',
  'LoggedIn',
  'LoginFailed',
  'OAuthLinked',
  'AccountRemoved',
] as const satisfies readonly AccountEvent['type'][];

const linkOf = (provider: string, subject: string) => `${provider}:${subject}`;

function decide(command: AccountCommand, state: AccountState): AccountEvent[] {
  const { accountId } = command;
  if (command.type === 'CreateAccount') {
    if (state.status !== 'none') throw new DomainError('conflict', `account ${accountId} already exists`);
    const { studioId, email, name, origin, sealedHash, link } = command;
    return [
      { type: 'AccountCreated', data: { accountId, studioId, email, name, origin } },
      ...(sealedHash === null
        ? []
        : [{ type: 'PasswordSet', data: { accountId, studioId, sealedHash } } satisfies AccountEvent]),
      ...(link === null
        ? []
        : [{ type: 'OAuthLinked', data: { accountId, studioId, ...link, email } } satisfies AccountEvent]),
    ];
  }
  if (state.status === 'none') throw new DomainError('not_found', `account ${accountId} does not exist`);
  const { studioId } = state;
  const removed = state.status === 'removed';

  switch (command.type) {
    case 'RecordLogin': {
      if (removed) throw new DomainError('conflict', `account ${accountId} is removed`);
      const { tokenId, method, provider, expiresAt } = command;
      return [{ type: 'LoggedIn', data: { accountId, studioId, tokenId, method, provider, expiresAt } }];
    }
    case 'RecordLoginFailure': {
      const { reason, emailHash, address } = command;
      return [{ type: 'LoginFailed', data: { accountId, studioId, reason, emailHash, address } }];
    }
    case 'LinkIdentity': {
      if (removed) throw new DomainError('conflict', `account ${accountId} is removed`);
      const { provider, subject, email } = command;
      if (state.links.includes(linkOf(provider, subject))) return [];
      return [{ type: 'OAuthLinked', data: { accountId, studioId, provider, subject, email } }];
    }
    case 'RemoveAccount':
      if (removed) return [];
      return [{ type: 'AccountRemoved', data: { accountId, studioId, tokenIds: state.tokens } }];
    default:
      return unknownCase('command', command);
  }
}

function evolve(state: AccountState, event: AccountEvent): AccountState {
  switch (event.type) {
    case 'AccountCreated':
      return { ...state, status: 'active', studioId: event.data.studioId, email: event.data.email };
    case 'PasswordSet':
      return { ...state, sealedHash: event.data.sealedHash };
    case 'LoggedIn':
      return { ...state, tokens: [...state.tokens, event.data.tokenId] };
    case 'LoginFailed':
      return state;
    case 'OAuthLinked':
      return { ...state, links: [...state.links, linkOf(event.data.provider, event.data.subject)] };
    case 'AccountRemoved':
      return { ...state, status: 'removed' };
    default:
      return unknownCase('event', event);
  }
}

export const accountDecider: Decider<AccountCommand, AccountEvent, AccountState> = {
  initialState: () => ({
    status: 'none',
    studioId: '',
    email: null,
    sealedHash: null,
    links: [],
    tokens: [],
  }),
  decide,
  evolve,
};
