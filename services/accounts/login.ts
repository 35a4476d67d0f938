import { z } from 'zod';
import { emailKey } from '../../projections/accounts.ts';
import { loadAggregate } from '../../shared/decider.ts';
import { ApiError } from '../../shared/errors.ts';
import { type ActionContext, defineAction } from '../../shared/http/action.ts';
import { studioId } from '../studios/studio-id.ts';
import {
  type AccountState,
  accountDecider,
  accountStreamId,
  LOGIN_FAILURES_STREAM,
  type LoginFailedData,
  type LoginFailureReason,
} from './account.ts';
import { type AccountsDeps, clientAddress, clientLimitKey } from './deps.ts';
import { MAX_PASSWORD_LENGTH } from './passwords.ts';
import { rateLimited } from './rate-limits.ts';
import { signIn } from './sign-in.ts';

/** One answer for every wrong credential: it must not tell an unknown email from a wrong password. */
const BAD_CREDENTIALS = 'wrong email or password';

/** A stream no account has: read when the email names none, so both paths read one stream. */
const NO_ACCOUNT_STREAM = accountStreamId('acc_none');

/** The purpose of the keyed digest of emails in LoginFailed (see SecretBox.mac). */
export const LOGIN_EMAIL_MAC = 'login-failure-email';

/**
 * `POST /v1/accounts/login`: email and password → a user token of the account's studio. Guests may
 * call it. Every "no" looks the same and does the same work (one stream read, one decryption, one
 * Argon2 verification, one event appended and shown by the read models). An attempt is taken from
 * the account's and the address's attempt limits before the password is checked, and given back to the
 * address when it was right, so parallel requests cannot all be checked before the first failure
 * is counted.
 */
export function loginAction(deps: AccountsDeps) {
  const { attemptLimits } = deps;

  async function recordFailure(data: LoginFailedData, account: AccountState | undefined, ctx: ActionContext) {
    const metadata = ctx.metadata;
    const appended =
      account && data.accountId !== null
        ? await deps.gw.events.append(
            accountStreamId(data.accountId),
            accountDecider.decide(
              { type: 'RecordLoginFailure', ...data, accountId: data.accountId },
              account,
            ),
            { expected: 'any', metadata },
          )
        : await deps.gw.events.append(LOGIN_FAILURES_STREAM, [{ type: 'LoginFailed', data }], {
            expected: 'any',
            metadata,
          });
    await deps.gw.projections.awaitReadModels(appended.position);
  }

  /** Takes one attempt from both limits, or throws 429 (taking none). */
  async function reserveAttempt(accountKey: string, address: string): Promise<void> {
    const addressWait = await attemptLimits.loginAttemptsPerAddress.reserve(address);
    if (addressWait > 0) throw rateLimited(addressWait, 'too many failed sign-ins');
    const accountWait = await attemptLimits.loginAttemptsPerAccount.reserve(accountKey);
    if (accountWait > 0) {
      await attemptLimits.loginAttemptsPerAddress.refund(address);
      throw rateLimited(accountWait, 'too many failed sign-ins');
    }
  }

  async function refundAttempt(accountKey: string, address: string): Promise<void> {
    await Promise.all([
      attemptLimits.loginAttemptsPerAccount.refund(accountKey),
      attemptLimits.loginAttemptsPerAddress.refund(address),
    ]);
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
      const limitKey = clientLimitKey(ctx);
      const accountKey = emailKey(studio_id, email);
      await reserveAttempt(accountKey, limitKey);

      let matches: boolean;
      let account: AccountState | undefined;
      let accountId: string | undefined;
      const studio = deps.studio(studio_id);
      const studioOpen = studio !== undefined && studio.status !== 'removed';
      try {
        accountId = studioOpen ? deps.accounts().byEmail.get(accountKey) : undefined;
        const stream = accountId === undefined ? NO_ACCOUNT_STREAM : accountStreamId(accountId);
        const loaded = (await loadAggregate(deps.gw.events, stream, accountDecider)).state;
        account = accountId !== undefined && loaded.status === 'active' ? loaded : undefined;
        matches = await deps.passwords.verify(account?.sealedHash ?? null, password);
      } catch (error) {
        // Not checked (busy, or the store failed): not an attempt.
        await refundAttempt(accountKey, limitKey);
        throw error;
      }

      const failure = (reason: LoginFailureReason): LoginFailedData => ({
        accountId: account ? accountId! : null,
        studioId: studio_id,
        reason,
        emailHash: deps.gw.secrets.mac(LOGIN_EMAIL_MAC, email.trim().toLowerCase()),
        address: clientAddress(ctx),
      });
      if (!matches) {
        const reason: LoginFailureReason = !studioOpen
          ? 'studio_unavailable'
          : !account
            ? 'unknown_account'
            : account.sealedHash === null
              ? 'no_password'
              : 'wrong_password';
        await recordFailure(failure(reason), account, ctx);
        throw new ApiError('unauthenticated', BAD_CREDENTIALS);
      }
      await Promise.all([
        attemptLimits.loginAttemptsPerAccount.reset(accountKey),
        attemptLimits.loginAttemptsPerAddress.refund(limitKey),
      ]);
      // Only someone who knows the password learns that the studio is paused.
      if (studio?.status === 'paused') {
        await recordFailure(failure('studio_paused'), account, ctx);
        throw new ApiError('studio_paused', `studio ${studio_id} is paused: nobody can sign in to it now`);
      }
      return signIn(deps, { accountId: accountId!, method: 'password', provider: null }, ctx);
    },
  });
}
