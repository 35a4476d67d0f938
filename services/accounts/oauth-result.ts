import { z } from 'zod';
import { newId } from '../../shared/crypto.ts';
import { loadAggregate } from '../../shared/decider.ts';
import { ApiError, DomainError } from '../../shared/errors.ts';
import { defineAction } from '../../shared/http/action.ts';
import type { AccountsDeps } from './deps.ts';
import { oauthDecider, oauthFlowId, oauthStreamId, resultOf } from './oauth.ts';
import { signIn } from './sign-in.ts';

/**
 * `GET /v1/accounts/oauth/result?state=`: how a sign-in went. The first poll after it completed
 * claims it (an OAuthResultClaimed event, appended against the flow's revision, so two pollers
 * cannot both win) and only then is the token issued and handed out: no token, not even a sealed
 * one, waits in the log for a poll that may never come.
 */
export function oauthResultAction(deps: AccountsDeps) {
  return defineAction({
    service: 'accounts',
    action: 'oauth/result',
    method: 'GET',
    identities: [],
    summary: 'Poll an OAuth sign-in: pending, completed (the token, handed out once), failed or expired',
    input: z.strictObject({ state: z.string().min(1).max(512) }),
    handler: async ({ state }, ctx) => {
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
      const account = deps.accounts().byId.get(flow.accountId!);
      if (!result.claimable) return { ...base, account, claimed: true };

      const studio = deps.studio(flow.studioId);
      if (studio?.status === 'paused')
        throw new ApiError(
          'studio_paused',
          `studio ${flow.studioId} is paused: nobody can sign in to it now`,
        );
      if (studio === undefined || studio.status === 'removed')
        throw new ApiError('forbidden', `studio ${flow.studioId} was removed`);
      if (account === undefined || account.status !== 'active')
        throw new ApiError('forbidden', 'the account of this sign-in was removed');

      const tokenId = newId('tok');
      try {
        await deps.run(stream, oauthDecider, { type: 'ClaimResult', flowId, tokenId, now }, ctx);
      } catch (error) {
        // A concurrent poll claimed it first.
        if (error instanceof DomainError && error.kind === 'conflict')
          return { ...base, account, claimed: true };
        throw error;
      }
      const signed = await signIn(
        deps,
        { accountId: account.id, method: 'oauth', provider: flow.provider, tokenId },
        ctx,
      );
      return { ...base, ...signed };
    },
  });
}
