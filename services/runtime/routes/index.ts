import type { EndpointTable } from '../../../shared/http/endpoint-table.ts';
import { dashboardRoutes } from './dashboard.ts';
import type { RuntimeRouteDeps } from './deps.ts';
import { executeRoutes } from './execute.ts';
import { mcpRoutes } from './mcp.ts';
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

/** Adds the runtime's routes to its endpoint table. */
export function addRuntimeRoutes(table: EndpointTable, deps: RuntimeRouteDeps): void {
  table.add([...statusRoutes(deps), ...mcpRoutes(deps.mcp)], RUNTIME_POLICY);
  table.add(
    [
      ...executeRoutes(deps),
      ...dashboardRoutes(deps),
      ...pluginRoutes(deps.plugins),
      ...pluginApiRoutes(deps.plugins),
    ],
    SUCCESS_POLICY,
  );
}
