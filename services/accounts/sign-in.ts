import type { AccountRecord } from '../../projections/accounts.ts';
import { newId, newUserToken, sha256Hex } from '../../shared/crypto.ts';
import type { ActionContext } from '../../shared/http/action.ts';
import { studioDecider, studioStreamId } from '../studios/studio.ts';
import { accountDecider, accountStreamId, type LoginMethod } from './account.ts';
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
  const userToken = newUserToken();
  const tokenId = sign.tokenId ?? newId('tok');
  const expiresAt = new Date(Date.now() + deps.settings().STUDIO_LOGIN_TTL_S * 1000).toISOString();
  const who = account.email ?? account.id;
  await deps.run(
    studioStreamId(account.studio_id),
    studioDecider,
    {
      type: 'IssueToken',
      studioId: account.studio_id,
      tokenId,
      name: `${who} (${sign.method === 'password' ? 'password' : sign.provider})`.slice(0, 200),
      prefix: userToken.slice(0, 8),
      tokenHash: sha256Hex(userToken),
      expiresAt,
      models: null,
    },
    ctx,
  );
  await deps.run(
    accountStreamId(account.id),
    accountDecider,
    {
      type: 'RecordLogin',
      accountId: account.id,
      tokenId,
      method: sign.method,
      provider: sign.provider,
      expiresAt,
    },
    ctx,
  );
  return { user_token: userToken, account: deps.accounts().byId.get(account.id)!, expires_at: expiresAt };
}
