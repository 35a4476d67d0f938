import type { Router } from 'express';
import type { AnyPathEndpoint } from '../../../shared/http/action.ts';
import { mountRoutes } from '../../../shared/http/serve.ts';
import { runtimeAuth } from './auth.ts';
import { dashboardRoutes } from './dashboard.ts';
import type { RuntimeRouteDeps } from './deps.ts';
import { executeRoutes } from './execute.ts';
import { pluginApiRoutes } from './plugin-api.ts';
import { pluginRoutes } from './plugins.ts';
import { statusRoutes } from './status.ts';

export type { RuntimeRouteDeps } from './deps.ts';

/** Who may call a runtime route: whoever got past its token (`runtimeAuth`); it has no identities of its own. */
export const RUNTIME_POLICY = { identities: [] } as const;

/** The runtime's answers: `{success: true, …}` around each route's body. */
const SUCCESS_POLICY = {
  ...RUNTIME_POLICY,
  shape: (body: unknown) => ({ success: true, ...(body as object) }),
};

/** Mounts the runtime's routes; answers them, for whoever lists what the runtime serves. */
export function mountRuntimeRoutes(app: Router, deps: RuntimeRouteDeps): AnyPathEndpoint[] {
  app.use('/api', runtimeAuth(deps.runtimeToken));
  const status = statusRoutes(deps);
  mountRoutes(app, status, RUNTIME_POLICY);
  const wrapped = [
    ...executeRoutes(deps),
    ...dashboardRoutes(deps),
    ...pluginRoutes(deps.plugins),
    ...pluginApiRoutes(deps.plugins),
  ];
  mountRoutes(app, wrapped, SUCCESS_POLICY);
  return [...status, ...wrapped];
}
