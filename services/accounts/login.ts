import { z } from 'zod';
import { emailKey } from '../../projections/accounts.ts';
import { sha256Hex } from '../../shared/crypto.ts';
import { loadAggregate } from '../../shared/decider.ts';
import { ApiError } from '../../shared/errors.ts';
import { type ActionContext, defineAction } from '../../shared/http/action.ts';
import {
  type AccountState,
  accountDecider,
  accountStreamId,
  LOGIN_FAILURES_STREAM,
  type LoginFailedData,
  type LoginFailureReason,
} from './account.ts';
import { studioId } from './admin.ts';
import { type AccountsDeps, clientAddress } from './deps.ts';
import { MAX_PASSWORD_LENGTH } from './passwords.ts';
import { rateLimited } from './rate-limits.ts';
import { signIn } from './sign-in.ts';

/** One answer for every wrong credential: it must not tell an unknown email from a wrong password. */
const BAD_CREDENTIALS = 'wrong email or password';

/**
 * `POST /v1/accounts/login`: email and password → a user token of the account's studio. Guests may
 * call it. Every "no" looks and takes the same (a dummy hash is verified when there is no account),
 * and failures are counted per account and per address.
 */
export function loginAction(deps: AccountsDeps) {
  const { budgets } = deps;

  async function recordFailure(
    data: LoginFailedData,
    account: AccountState | undefined,
    ctx: ActionContext,
  ): Promise<void> {
    if (account && data.accountId !== null) {
      const { accountId, reason, emailHash, address } = data;
      await deps.run(
        accountStreamId(accountId),
        accountDecider,
        { type: 'RecordLoginFailure', accountId, reason, emailHash, address },
        ctx,
      );
      return;
    }
    await deps.gw.events.append(LOGIN_FAILURES_STREAM, [{ type: 'LoginFailed', data }], {
      expected: 'any',
      metadata: ctx.metadata,
    });
  }

  return defineAction({
    service: 'accounts',
    action: 'login',
    method: 'POST',
    identities: [],
    summary: 'Sign in with email and password: a user token of the studio (guests allowed)',
    input: z.strictObject({
      studio_id: studioId,
      email: z.string().trim().min(1).max(320),
      password: z.string().min(1).max(MAX_PASSWORD_LENGTH),
    }),
    handler: async ({ studio_id, email, password }, ctx) => {
      const address = clientAddress(ctx);
      const accountKey = emailKey(studio_id, email);
      const wait = Math.max(
        await budgets.loginFailuresPerAccount.waitMs(accountKey),
        await budgets.loginFailuresPerAddress.waitMs(address),
      );
      if (wait > 0) throw rateLimited(wait, 'too many failed sign-ins');

      const studio = deps.studio(studio_id);
      const studioOpen = studio !== undefined && studio.status !== 'removed';
      const accountId = studioOpen ? deps.accounts().byEmail.get(accountKey) : undefined;
      const loaded =
        accountId === undefined
          ? undefined
          : (await loadAggregate(deps.gw.events, accountStreamId(accountId), accountDecider)).state;
      const account = loaded?.status === 'active' ? loaded : undefined;
      const matches = await deps.passwords.verify(account?.sealedHash ?? null, password);

      const failure = (reason: LoginFailureReason): LoginFailedData => ({
        accountId: account ? accountId! : null,
        studioId: studio_id,
        reason,
        emailHash: sha256Hex(email.trim().toLowerCase()),
        address,
      });
      if (!matches) {
        const reason: LoginFailureReason = !studioOpen
          ? 'studio_unavailable'
          : !account
            ? 'unknown_account'
            : account.sealedHash === null
              ? 'no_password'
              : 'wrong_password';
        await Promise.all([
          budgets.loginFailuresPerAccount.spend(accountKey),
          budgets.loginFailuresPerAddress.spend(address),
        ]);
        await recordFailure(failure(reason), account, ctx);
        throw new ApiError('unauthenticated', BAD_CREDENTIALS);
      }
      // Only someone who knows the password learns that the studio is paused.
      if (studio?.status === 'paused') {
        await recordFailure(failure('studio_paused'), account, ctx);
        throw new ApiError('studio_paused', `studio ${studio_id} is paused: nobody can sign in to it now`);
      }
      await budgets.loginFailuresPerAccount.reset(accountKey);
      return signIn(deps, { accountId: accountId!, method: 'password', provider: null }, ctx);
    },
  });
}
