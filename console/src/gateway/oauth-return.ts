import { gateway } from '../api/gateway.ts';
import { ApiFailure, unwrap } from '../api/http.ts';

/**
 * Back from an OAuth provider: the callback sent the browser to `/console/?status=…&code=…`. The
 * code and the state this tab kept claim the user token once; the URL is cleaned either way.
 * Returns the token, or undefined when this page load is not such a return.
 */
export async function finishOAuthReturn(): Promise<string | undefined> {
  const params = new URLSearchParams(window.location.search);
  const status = params.get('status');
  if (status === null) return undefined;
  const state = sessionStorage.getItem('studio-oauth-state');
  sessionStorage.removeItem('studio-oauth-state');
  window.history.replaceState(null, '', `${window.location.pathname}${window.location.hash}`);
  if (status !== 'completed') {
    throw new ApiFailure(
      401,
      params.get('error') ?? 'oauth_failed',
      'the sign-in with the provider failed',
      undefined,
    );
  }
  const code = params.get('code');
  if (!state || !code)
    throw new ApiFailure(400, 'oauth_failed', 'this sign-in was not started in this tab', undefined);
  const result = unwrap(
    await gateway.GET('/v1/accounts/oauth/result', { params: { query: { state, code } } }),
  ) as {
    user_token?: string;
  };
  if (!result.user_token)
    throw new ApiFailure(401, 'oauth_failed', 'the sign-in did not complete', undefined);
  return result.user_token;
}
