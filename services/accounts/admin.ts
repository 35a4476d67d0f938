import { z } from 'zod';
import { type AccountRecord, emailKey } from '../../projections/accounts.ts';
import { newId } from '../../shared/crypto.ts';
import { ApiError, DomainError } from '../../shared/errors.ts';
import { type AnyAction, defineAction } from '../../shared/http/action.ts';
import { studioId } from '../studios/studio-id.ts';
import type { AccountsDeps } from './deps.ts';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from './passwords.ts';

const admin = ['admin'] as const;

/** Admins create, list and remove the accounts of a studio. */
export function adminActions(deps: AccountsDeps): AnyAction[] {
  const record = (id: string): AccountRecord => {
    const found = deps.accounts().byId.get(id);
    if (!found) throw new ApiError('not_found', `account ${id} does not exist`);
    return found;
  };
  const studioOf = (id: string) => {
    const studio = deps.studio(id);
    if (!studio) throw new ApiError('not_found', `studio ${id} does not exist`, { param: 'studio_id' });
    return studio;
  };

  return [
    defineAction({
      service: 'accounts',
      action: 'create',
      method: 'POST',
      identities: admin,
      status: 201,
      summary: 'Create an account in a studio (email unique per studio, any case); the password is optional',
      input: z.strictObject({
        studio_id: studioId,
        email: z.email().max(320),
        password: z.string().min(MIN_PASSWORD_LENGTH).max(MAX_PASSWORD_LENGTH).optional(),
        name: z.string().trim().min(1).max(200).optional(),
      }),
      handler: async ({ studio_id, email, password, name }, ctx) => {
        if (studioOf(studio_id).status === 'removed')
          throw new ApiError('conflict', `studio ${studio_id} is removed`, { param: 'studio_id' });
        const key = emailKey(studio_id, email);
        const sealedHash = password === undefined ? null : await deps.passwords.hashAndEncrypt(password);
        return deps.lock.run([key], async () => {
          if (deps.accounts().byEmail.has(key)) {
            throw new ApiError('conflict', `studio ${studio_id} already has an account with this email`, {
              param: 'email',
            });
          }
          const accountId = newId('acc');
          await deps.commands.account(
            {
              type: 'CreateAccount',
              accountId,
              studioId: studio_id,
              email: email.trim(),
              name: name ?? null,
              origin: 'admin',
              sealedHash,
              link: null,
            },
            ctx.metadata,
          );
          return record(accountId);
        });
      },
    }),
    defineAction({
      service: 'accounts',
      action: 'list',
      method: 'GET',
      identities: admin,
      summary: "List a studio's accounts (never their passwords)",
      input: z.strictObject({ studio_id: studioId, status: z.enum(['active', 'removed']).optional() }),
      handler: ({ studio_id, status }) => {
        studioOf(studio_id);
        const items = [...deps.accounts().byId.values()]
          .filter((a) => a.studio_id === studio_id && (status === undefined || a.status === status))
          .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
        return { items };
      },
    }),
    defineAction({
      service: 'accounts',
      action: 'remove',
      method: 'POST',
      identities: admin,
      summary: 'Remove an account for good; the tokens its sign-ins issued are revoked',
      input: z.strictObject({ account_id: z.string().min(1).max(100) }),
      handler: async ({ account_id }, ctx) => {
        const account = record(account_id);
        const { state } = await deps.commands.account(
          { type: 'RemoveAccount', accountId: account_id },
          ctx.metadata,
        );
        // Every time, not only when AccountRemoved was just appended: a retry finishes a removal cut short.
        for (const tokenId of state.tokens) {
          try {
            await deps.commands.studio(
              { type: 'RevokeToken', studioId: account.studio_id, tokenId },
              ctx.metadata,
            );
          } catch (error) {
            if (!(error instanceof DomainError)) throw error;
          }
        }
        return record(account_id);
      },
    }),
  ];
}
