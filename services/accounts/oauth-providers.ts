import { z } from 'zod';
import { defineAction } from '../../shared/http/action.ts';
import type { AccountsDeps } from './deps.ts';
import { PROVIDER_IDS } from './providers/index.ts';

/**
 * `GET /v1/accounts/oauth/providers`: the sign-in providers this gateway can start a flow with now
 * (their env keys set, and `STUDIO_PUBLIC_URL` for the callback), for a sign-in page to offer only
 * those. Open to guests: it names providers, never a key.
 */
export function oauthProvidersAction(deps: AccountsDeps) {
  return defineAction({
    service: 'accounts',
    action: 'oauth/providers',
    method: 'GET',
    identities: [],
    summary: 'The OAuth sign-in providers configured on this gateway (none: OAuth sign-in is off)',
    input: z.strictObject({}),
    handler: () => {
      const callback = deps.env('STUDIO_PUBLIC_URL');
      const ready = PROVIDER_IDS.map((id) => deps.providers.get(id)!).filter(
        (provider) => callback !== undefined && callback !== '' && provider.missing(deps.env).length === 0,
      );
      return { items: ready.map(({ id, name }) => ({ id, name })) };
    },
  });
}
