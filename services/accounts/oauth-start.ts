import * as client from 'openid-client';
import { z } from 'zod';
import type { AccountsEnv } from '../../shared/config.ts';
import { ApiError } from '../../shared/errors.ts';
import { defineAction } from '../../shared/http/action.ts';
import { studioId } from '../studios/studio-id.ts';
import { type AccountsDeps, clientLimitKey } from './deps.ts';
import { oauthFlowId } from './oauth.ts';
import { PROVIDER_IDS } from './providers/index.ts';
import { ProviderError } from './providers/types.ts';
import { rateLimited } from './rate-limits.ts';

export const CALLBACK_PATH = '/v1/accounts/oauth/callback';

/**
 * `STUDIO_PUBLIC_URL` + the callback path. Never the request's Host: a client could name any host
 * there, and the provider would send the code to it (if the provider accepts that redirect URI).
 * Without it OAuth is refused with a 503 naming the variable.
 */
export function callbackUrl(settings: AccountsEnv): string {
  const base = settings.STUDIO_PUBLIC_URL;
  if (base === undefined)
    throw new ApiError(
      'unavailable',
      'OAuth sign-in needs STUDIO_PUBLIC_URL (the public URL of this gateway, where providers send the browser back); an admin must set it',
    );
  return `${base.replace(/\/+$/, '')}${CALLBACK_PATH}`;
}

/**
 * `POST /v1/accounts/oauth/start`: a new sign-in flow (state, PKCE S256, and a nonce for OpenID
 * providers) → the URL to open in a browser. The state is returned once, to the caller; with the
 * one-time code the callback shows the browser that signs in, it is the way to the flow's result.
 * The log keeps its hash and the encrypted verifier and nonce.
 */
export function oauthStartAction(deps: AccountsDeps) {
  return defineAction({
    service: 'accounts',
    action: 'oauth/start',
    method: 'POST',
    identities: [],
    summary: 'Start an OAuth sign-in: the provider URL to open, and the state to poll the result with',
    input: z.strictObject({
      provider: z.enum(PROVIDER_IDS),
      studio_id: studioId,
      redirect_to: z
        .url({ protocol: /^https?$/ })
        .max(2000)
        .optional(),
    }),
    handler: async ({ provider: providerId, studio_id, redirect_to }, ctx) => {
      const provider = deps.providers.get(providerId)!;
      const missing = provider.missing(deps.env);
      if (missing.length > 0) {
        throw new ApiError(
          'not_found',
          `sign-in with ${provider.name} is not configured on this gateway (set ${missing.join(', ')})`,
          { param: 'provider' },
        );
      }
      const settings = deps.settings();
      const redirectUri = callbackUrl(settings);
      if (
        redirect_to !== undefined &&
        !settings.STUDIO_OAUTH_REDIRECT_ALLOWLIST.includes(new URL(redirect_to).origin)
      ) {
        throw new ApiError(
          'validation_failed',
          'redirect_to must be on an allowed origin (STUDIO_OAUTH_REDIRECT_ALLOWLIST)',
          { param: 'redirect_to' },
        );
      }
      const wait = await deps.attemptLimits.oauthStartsPerAddress.reserve(clientLimitKey(ctx));
      if (wait > 0) throw rateLimited(wait, 'too many sign-ins started from this address');

      const state = client.randomState();
      const codeVerifier = client.randomPKCECodeVerifier();
      const nonce = client.randomNonce();
      let authorizationUrl: URL;
      try {
        authorizationUrl = await provider.authorizationUrl(deps.env, {
          redirectUri,
          state,
          codeChallenge: await client.calculatePKCECodeChallenge(codeVerifier),
          nonce,
        });
      } catch (error) {
        if (error instanceof ProviderError) throw new ApiError('upstream_error', error.message);
        throw error;
      }
      const expiresAt = new Date(Date.now() + settings.STUDIO_OAUTH_STATE_TTL_S * 1000).toISOString();
      const flowId = oauthFlowId(state);
      await deps.commands.oauth(
        {
          type: 'StartFlow',
          flowId,
          provider: providerId,
          studioId: studio_id,
          redirectUri,
          redirectTo: redirect_to ?? null,
          sealedSecrets: deps.gw.secrets.encrypt(JSON.stringify({ codeVerifier, nonce })),
          expiresAt,
        },
        ctx.metadata,
      );
      return { authorization_url: authorizationUrl.href, state, expires_at: expiresAt };
    },
  });
}
