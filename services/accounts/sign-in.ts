import type { AccountRecord } from '../../projections/accounts.ts';
import type { ActionContext } from '../../shared/http/action.ts';
import { issueToken } from '../studios/commands.ts';
import type { LoginMethod } from './account.ts';
import type { AccountsDeps } from './deps.ts';

export interface SignedIn {
  user_token: string;
  account: AccountRecord;
  expires_at: string;
}

/**
 * Issues a user token to an account exactly as an admin's `tokens/apply` does (a TokenIssued event,
 * hash only, in the studio's stream, so authentication and revocation work unchanged), then records
 * the sign-in in the account's stream.
 */
export async function signIn(
  deps: AccountsDeps,
  sign: { accountId: string; method: LoginMethod; provider: string | null; tokenId?: string },
  ctx: ActionContext,
): Promise<SignedIn> {
  const account = deps.accounts().byId.get(sign.accountId)!;
  const expiresAt = new Date(Date.now() + deps.settings().STUDIO_LOGIN_TTL_S * 1000).toISOString();
  const who = account.email ?? account.id;
  const { userToken, tokenId } = await issueToken(
    deps.commands.studio,
    {
      studioId: account.studio_id,
      name: `${who} (${sign.method === 'password' ? 'password' : sign.provider})`.slice(0, 200),
      expiresAt,
      models: null,
      ...(sign.tokenId === undefined ? {} : { tokenId: sign.tokenId }),
    },
    ctx.metadata,
  );
  await deps.commands.account(
    {
      type: 'RecordLogin',
      accountId: account.id,
      tokenId,
      method: sign.method,
      provider: sign.provider,
      expiresAt,
    },
    ctx.metadata,
  );
  return { user_token: userToken, account: deps.accounts().byId.get(account.id)!, expires_at: expiresAt };
}
