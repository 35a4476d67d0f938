import type { AccountsEnvSchema } from '../../shared/config.ts';
import type { GatewayContext } from '../../shared/gateway-context.ts';
import { defineService, type EnvRequirement } from '../../shared/http/action.ts';
import { adminActions } from './admin.ts';
import { accountsDeps } from './deps.ts';
import { loginAction } from './login.ts';
import { oauthCallbackAction } from './oauth-callback.ts';
import { oauthProvidersAction } from './oauth-providers.ts';
import { oauthResultAction } from './oauth-result.ts';
import { oauthStartAction } from './oauth-start.ts';

const SETTINGS: Record<keyof typeof AccountsEnvSchema.shape, string> = {
  STUDIO_PUBLIC_URL:
    'Public URL of the gateway; OAuth callbacks go to <it>/v1/accounts/oauth/callback (required for OAuth sign-in)',
  STUDIO_OAUTH_REDIRECT_ALLOWLIST:
    'Origins (comma-separated) that oauth/start redirect_to may send the browser back to',
  STUDIO_OAUTH_SIGNUP:
    'Whether a first OAuth sign-in creates an account: closed (default), open, or email domains',
  STUDIO_LOGIN_TTL_S: 'Lifetime in seconds of the user token a sign-in issues (default 30 days)',
  STUDIO_OAUTH_STATE_TTL_S:
    'Seconds an OAuth sign-in may take, and its result then waits to be claimed (default 600)',
};

/** The `accounts` service: admin account management, password login, OAuth sign-in. */
export function accountsService(gw: GatewayContext) {
  const deps = accountsDeps(gw);
  const env: EnvRequirement[] = [
    ...Object.entries(SETTINGS).map(([key, description]) => ({ key, description, required: false })),
    ...[...deps.providers.values()].flatMap((p) => p.env),
  ];
  return defineService({
    id: 'accounts',
    name: 'Accounts',
    env,
    actions: [
      ...adminActions(deps),
      loginAction(deps),
      oauthStartAction(deps),
      oauthProvidersAction(deps),
      oauthCallbackAction(deps),
      oauthResultAction(deps),
    ],
  });
}
