import { z } from 'zod';
import { loadAggregate } from '../../shared/decider.ts';
import { DomainError } from '../../shared/errors.ts';
import { type ActionContext, defineAction } from '../../shared/http/action.ts';
import { type AccountsDeps, clientLimitKey } from './deps.ts';
import {
  callbackProblem,
  type OAuthFailureReason,
  type OAuthState,
  oauthDecider,
  oauthFlowId,
  oauthStreamId,
} from './oauth.ts';
import { sendPage, sendRedirect, signedInPage } from './page.ts';
import type { ProviderId } from './providers/types.ts';
import { ProviderError } from './providers/types.ts';
import { resolveAccount } from './resolve.ts';
import { newSignInCode, signInCodeHash } from './sign-in-code.ts';

/** The HTTP status and what the person reads, for each way a sign-in can fail. */
const FAILURES: Record<OAuthFailureReason, { status: number; text: string }> = {
  unknown_state: { status: 400, text: 'This sign-in link was not started here. Start signing in again.' },
  state_replayed: { status: 400, text: 'This sign-in link has already been used. Start signing in again.' },
  state_expired: { status: 400, text: 'This sign-in took too long and has expired. Start signing in again.' },
  provider_error: { status: 400, text: 'The sign-in provider did not sign you in.' },
  studio_paused: { status: 403, text: 'This studio is paused: nobody can sign in to it now.' },
  studio_unavailable: { status: 403, text: 'This studio does not accept sign-ins.' },
  code_rejected: { status: 400, text: 'The sign-in provider refused this sign-in. Start signing in again.' },
  exchange_failed: {
    status: 502,
    text: 'The sign-in provider could not be reached or refused this gateway.',
  },
  signup_closed: { status: 403, text: '' },
  claim_refused: { status: 400, text: 'This sign-in has ended. Start signing in again.' },
  internal_error: { status: 500, text: 'Something went wrong on our side. Start signing in again.' },
};

class FlowFailure extends Error {
  constructor(
    readonly reason: OAuthFailureReason,
    message: string,
    readonly providerError: string | null = null,
  ) {
    super(message);
  }
}

/** The query as the provider sent it; a repeated name counts as absent (OAuth sends each once). */
const query = z.record(z.string(), z.unknown());

/**
 * `GET /v1/accounts/oauth/callback`: where the provider sends the browser back. Exchanges the code
 * (PKCE; OpenID: nonce and ID token checked), finds or creates the account, records the outcome,
 * and answers the browser with a page (or a redirect to the flow's allow-listed `redirect_to`).
 * A completed sign-in shows this browser a one-time code (the page, or `code=` on the redirect):
 * `oauth/result` hands the token only to whoever presents it with the state. Every failure is an
 * OAuthFailed event and a page saying what happened; none is a 500.
 */
export function oauthCallbackAction(deps: AccountsDeps) {
  const { gw } = deps;

  async function complete(
    flowId: string,
    flow: OAuthState,
    params: Record<string, unknown>,
    ctx: ActionContext,
  ): Promise<string> {
    const now = new Date();
    const one = (name: string) => (typeof params[name] === 'string' ? (params[name] as string) : undefined);

    const error = one('error');
    if (error !== undefined) {
      const description = one('error_description')?.slice(0, 300);
      throw new FlowFailure(
        'provider_error',
        `the provider answered ${error.slice(0, 100)}${description ? `: ${description}` : ''}`,
        error.slice(0, 100),
      );
    }
    if (one('code') === undefined) throw new FlowFailure('provider_error', 'the provider sent no code');

    const provider = deps.providers.get(flow.provider as ProviderId);
    if (!provider || provider.missing(deps.env).length > 0)
      throw new FlowFailure('exchange_failed', `sign-in with ${flow.provider} is no longer configured`);

    const { codeVerifier, nonce } = JSON.parse(gw.secrets.decrypt(flow.sealedSecrets)) as {
      codeVerifier: string;
      nonce: string;
    };
    const callbackUrl = new URL(flow.redirectUri);
    callbackUrl.search = new URL(ctx.req.url, 'http://callback.invalid').search;
    let profile: Awaited<ReturnType<typeof provider.exchange>>;
    try {
      profile = await provider.exchange(deps.env, {
        callbackUrl,
        state: one('state')!,
        codeVerifier,
        nonce,
      });
    } catch (error) {
      if (!(error instanceof ProviderError)) throw error;
      throw new FlowFailure(
        error.kind === 'code_rejected' ? 'code_rejected' : 'exchange_failed',
        error.message,
        error.providerError,
      );
    }

    // Only once the provider has vouched for the person: a studio's state is not for anyone who asks.
    const studio = deps.studio(flow.studioId);
    if (studio?.status === 'paused')
      throw new FlowFailure('studio_paused', `studio ${flow.studioId} is paused`);
    if (studio === undefined || studio.status === 'removed')
      throw new FlowFailure('studio_unavailable', `studio ${flow.studioId} does not exist or was removed`);

    const resolution = await resolveAccount(deps, flow, profile, ctx);
    if (resolution.kind === 'refused') throw new FlowFailure('signup_closed', resolution.message);
    const claimableUntil = new Date(now.getTime() + deps.settings().STUDIO_OAUTH_STATE_TTL_S * 1000);
    const code = newSignInCode();
    try {
      await deps.commands.oauth(
        {
          type: 'CompleteFlow',
          flowId,
          accountId: resolution.accountId,
          subject: profile.subject,
          accountCreated: resolution.kind === 'created',
          receivedAt: now.toISOString(),
          claimableUntil: claimableUntil.toISOString(),
          codeHash: signInCodeHash(gw.secrets, flowId, code),
        },
        ctx.metadata,
      );
      return code;
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      // Refused: another callback of this flow ended it meanwhile, or it expired during the exchange.
      const { state: latest } = await loadAggregate(gw.events, oauthStreamId(flowId), oauthDecider);
      throw new FlowFailure(latest.status === 'started' ? 'state_expired' : 'state_replayed', error.message);
    }
  }

  return defineAction({
    service: 'accounts',
    action: 'oauth/callback',
    method: 'GET',
    identities: [],
    summary: 'Where the OAuth provider sends the browser back; answers with a page',
    produces: ['text/html'],
    input: query,
    handler: async (params, ctx) => {
      const { res } = ctx;
      const state = typeof params.state === 'string' && params.state !== '' ? params.state : undefined;
      if (state === undefined) {
        sendPage(res, 400, {
          title: 'Sign-in failed',
          message: 'This page is reached from a sign-in provider, with the state of a sign-in started here.',
          ok: false,
        });
        return;
      }
      const address = clientLimitKey(ctx);
      const wait = await deps.attemptLimits.oauthRejectionsPerAddress.waitMs(address);
      if (wait > 0) {
        res.setHeader('Retry-After', String(Math.ceil(wait / 1000)));
        sendPage(res, 429, {
          title: 'Too many failed sign-ins',
          message: 'Too many sign-ins failed from this address. Wait a while, then start signing in again.',
          ok: false,
        });
        return;
      }

      const flowId = oauthFlowId(state);
      const { state: flow } = await loadAggregate(gw.events, oauthStreamId(flowId), oauthDecider);
      let code: string;
      try {
        const problem = callbackProblem(flow, new Date().toISOString());
        if (problem !== null) throw new FlowFailure(problem, FAILURES[problem].text);
        code = await complete(flowId, flow, params, ctx);
      } catch (error) {
        let failure: FlowFailure;
        if (error instanceof FlowFailure) failure = error;
        else {
          gw.logger.error({ err: error, requestId: ctx.requestId }, 'OAuth callback failed');
          failure = new FlowFailure('internal_error', 'unexpected error');
        }
        await deps.attemptLimits.oauthRejectionsPerAddress.spend(address);
        await deps.commands.oauth(
          {
            type: 'FailFlow',
            flowId,
            reason: failure.reason,
            message: failure.message,
            providerError: failure.providerError,
          },
          ctx.metadata,
        );
        // Only a flow this callback ended goes back to its redirect_to; a replay never redirects.
        if (flow.redirectTo !== null && flow.status === 'started' && failure.reason !== 'state_replayed') {
          sendRedirect(res, withParams(flow.redirectTo, { status: 'failed', error: failure.reason }));
          return;
        }
        const { status, text } = FAILURES[failure.reason];
        sendPage(res, status, {
          title: 'Sign-in failed',
          message:
            failure.reason === 'signup_closed' || failure.reason === 'provider_error'
              ? failure.message
              : text,
          ok: false,
        });
        return;
      }
      if (flow.redirectTo !== null)
        sendRedirect(res, withParams(flow.redirectTo, { status: 'completed', code }));
      else sendPage(res, 200, signedInPage(code));
    },
  });
}

function withParams(url: string, params: Record<string, string>): string {
  const target = new URL(url);
  for (const [name, value] of Object.entries(params)) target.searchParams.set(name, value);
  return target.href;
}
