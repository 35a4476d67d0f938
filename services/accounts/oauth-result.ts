import { z } from 'zod';
import type { AccountRecord } from '../../projections/accounts.ts';
import { newId } from '../../shared/crypto.ts';
import { loadAggregate } from '../../shared/decider.ts';
import { ApiError, DomainError } from '../../shared/errors.ts';
import { WrongExpectedRevision } from '../../shared/event-store/types.ts';
import { defineAction } from '../../shared/http/action.ts';
import type { AccountsDeps } from './deps.ts';
import { MAX_CODE_FAILURES, oauthDecider, oauthFlowId, oauthStreamId, resultOf } from './oauth.ts';
import { signIn } from './sign-in.ts';
import { signInCodeHash } from './sign-in-code.ts';

/**
 * `GET /v1/accounts/oauth/result?state=&code=`: how a sign-in went. The state alone tells the
 * status; the result of a completed sign-in needs the one-time code the callback showed the
 * browser that signed in, so whoever started the flow (and so knows the state) gets nothing from a
 * sign-in done in someone else's browser. The first poll with the right code claims it (an
 * OAuthResultClaimed event, appended against the flow's revision, so two pollers cannot both win)
 * and only then is the token issued and handed out: no token, not even an encrypted one, waits in the
 * log for a poll that may never come. Every code is compared inside the flow's decider, after the
 * guesses before it were counted: the `MAX_CODE_FAILURES`-th wrong one ends the flow.
 */
export function oauthResultAction(deps: AccountsDeps) {
  return defineAction({
    service: 'accounts',
    action: 'oauth/result',
    method: 'GET',
    identities: [],
    summary: 'Poll an OAuth sign-in: pending, completed (the token, handed out once), failed or expired',
    input: z.strictObject({ state: z.string().min(1).max(512), code: z.string().min(1).max(64).optional() }),
    handler: async ({ state, code }, ctx) => {
      const flowId = oauthFlowId(state);
      const stream = oauthStreamId(flowId);
      const { state: flow } = await loadAggregate(deps.gw.events, stream, oauthDecider);
      const now = new Date().toISOString();
      const result = resultOf(flow, now);
      if (!result)
        throw new ApiError('not_found', 'no sign-in was started with this state', { param: 'state' });
      const base = { status: result.status, provider: flow.provider, studio_id: flow.studioId };

      switch (result.status) {
        case 'pending':
          return { ...base, expires_at: flow.expiresAt };
        case 'expired':
          return base;
        case 'failed':
          return { ...base, error: { code: flow.failure!.reason, message: flow.failure!.message } };
        case 'completed':
          break;
      }
      if (code === undefined) return { ...base, code_required: true };
      const account = deps.accounts().byId.get(flow.accountId!);

      if (!flow.claimed) refuseWhenClosed(deps, flow.studioId, account);

      const tokenId = newId('tok');
      const codeHash = signInCodeHash(deps.gw.secrets, flowId, code);
      try {
        const { events, state: after } = await deps.commands.oauth(
          { type: 'ClaimResult', flowId, tokenId, now, codeHash },
          ctx.metadata,
        );
        if (events[0]?.type === 'OAuthClaimRefused') {
          const left = MAX_CODE_FAILURES - after.codeFailures;
          throw new ApiError(
            'forbidden',
            left > 0
              ? `wrong sign-in code (${left} more tries, then this sign-in ends)`
              : 'wrong sign-in code: this sign-in has ended, start again',
            { param: 'code' },
          );
        }
      } catch (error) {
        if (error instanceof WrongExpectedRevision)
          throw new ApiError('conflict', 'too many polls of this sign-in at once; poll again');
        if (!(error instanceof DomainError && error.kind === 'conflict')) throw error;
        // The right code, and claimed before (by an earlier poll, or a concurrent one).
        const { state: latest } = await loadAggregate(deps.gw.events, stream, oauthDecider);
        if (latest.claimed) return { ...base, account, claimed: true };
        throw new ApiError('conflict', 'this sign-in has no result to claim now; poll again');
      }
      const signed = await signIn(
        deps,
        { accountId: flow.accountId!, method: 'oauth', provider: flow.provider, tokenId },
        ctx,
      );
      return { ...base, ...signed };
    },
  });
}

/** No token for a paused or removed studio, or a removed account. */
function refuseWhenClosed(deps: AccountsDeps, studioId: string, account: AccountRecord | undefined): void {
  const studio = deps.studio(studioId);
  if (studio?.status === 'paused')
    throw new ApiError('studio_paused', `studio ${studioId} is paused: nobody can sign in to it now`);
  if (studio === undefined || studio.status === 'removed')
    throw new ApiError('forbidden', `studio ${studioId} was removed`);
  if (account === undefined || account.status !== 'active')
    throw new ApiError('forbidden', 'the account of this sign-in was removed');
}
