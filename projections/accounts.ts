import type { AccountEvent } from '../services/accounts/account.ts';
import { defineProjection } from '../shared/projections/projection.ts';
import { type Entries, entriesOf, mapOf } from '../shared/projections/snapshot.ts';

/** An account as admins (and the account itself, at sign-in) see it. No password, no hash. */
export interface AccountRecord {
  id: string;
  studio_id: string;
  email: string | null;
  name: string | null;
  status: 'active' | 'removed';
  has_password: boolean;
  identities: { provider: string; subject: string; linked_at: string }[];
  created_at: string;
  updated_at: string;
  last_login_at: string | null;
}

export interface AccountsState {
  byId: Map<string, AccountRecord>;
  /** `emailKey(studio, email)` → id of the live account with that email. */
  byEmail: Map<string, string>;
  /** `identityKey(studio, provider, subject)` → id of the live account linked to that identity. */
  byIdentity: Map<string, string>;
}

/** Emails are unique per studio, compared without case. */
export const emailKey = (studioId: string, email: string) => `${studioId}\n${email.trim().toLowerCase()}`;
export const identityKey = (studioId: string, provider: string, subject: string) =>
  `${studioId}\n${provider}\n${subject}`;

export const accountsProjection = defineProjection<AccountsState, AccountEvent>({
  name: 'accounts',
  schemaVersion: 2,
  handles: ['AccountCreated', 'PasswordSet', 'LoggedIn', 'OAuthLinked', 'AccountRemoved'],
  initialState: () => ({ byId: new Map(), byEmail: new Map(), byIdentity: new Map() }),
  toSnapshot: (state) => ({
    byId: entriesOf(state.byId),
    byEmail: entriesOf(state.byEmail),
    byIdentity: entriesOf(state.byIdentity),
  }),
  fromSnapshot(snapshot) {
    const { byId, byEmail, byIdentity } = snapshot as {
      byId: Entries<AccountRecord>;
      byEmail: Entries<string>;
      byIdentity: Entries<string>;
    };
    return {
      byId: mapOf(byId, 'accounts'),
      byEmail: mapOf(byEmail, 'accounts'),
      byIdentity: mapOf(byIdentity, 'accounts'),
    };
  },
  apply(state, event) {
    if (event.type === 'LoginFailed') return;
    const { accountId } = event.data;
    if (event.type === 'AccountCreated') {
      const { studioId, email, name } = event.data;
      state.byId.set(accountId, {
        id: accountId,
        studio_id: studioId,
        email,
        name,
        status: 'active',
        has_password: false,
        identities: [],
        created_at: event.createdAt,
        updated_at: event.createdAt,
        last_login_at: null,
      });
      if (email !== null) state.byEmail.set(emailKey(studioId, email), accountId);
      return;
    }
    const account = state.byId.get(accountId);
    if (!account) return;
    switch (event.type) {
      case 'PasswordSet':
        account.has_password = true;
        account.updated_at = event.createdAt;
        return;
      case 'LoggedIn':
        account.last_login_at = event.createdAt;
        return;
      case 'OAuthLinked': {
        const { provider, subject } = event.data;
        account.identities.push({ provider, subject, linked_at: event.createdAt });
        account.updated_at = event.createdAt;
        state.byIdentity.set(identityKey(account.studio_id, provider, subject), accountId);
        return;
      }
      case 'AccountRemoved': {
        account.status = 'removed';
        account.updated_at = event.createdAt;
        const byEmail = account.email === null ? undefined : emailKey(account.studio_id, account.email);
        if (byEmail !== undefined && state.byEmail.get(byEmail) === accountId) state.byEmail.delete(byEmail);
        for (const { provider, subject } of account.identities) {
          const key = identityKey(account.studio_id, provider, subject);
          if (state.byIdentity.get(key) === accountId) state.byIdentity.delete(key);
        }
        return;
      }
      default:
        return;
    }
  },
});
