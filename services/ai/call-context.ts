import type { ActionContext } from '../../shared/http/action.ts';
import type { Identity } from '../../shared/http/identity.ts';
import type { CallContext, EnvLookup } from './providers/types.ts';

/** Whom a generation is for: the token's studio, or `admin` for the admin key. */
export const tenantOf = (identity: Identity): string =>
  identity.kind === 'user' ? identity.studioId : 'admin';

/** What a provider call needs from a request: env, the client's abort signal, the tenant. */
export const callContext = (env: EnvLookup, ctx: ActionContext): CallContext => ({
  env,
  signal: ctx.signal,
  tenant: tenantOf(ctx.identity),
});
