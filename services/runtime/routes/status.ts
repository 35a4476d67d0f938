import { defineRoute, noInput } from '../../../shared/http/action.ts';
import type { RuntimeRouteDeps } from './deps.ts';

/** GET /health and GET /api/status: plain bodies, without the `{success: true}` of the other routes. */
export function statusRoutes(deps: Pick<RuntimeRouteDeps, 'health' | 'status'>) {
  return [
    defineRoute({
      method: 'GET',
      path: '/health',
      input: noInput,
      handler: () => deps.health(),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/status',
      input: noInput,
      handler: () => ({
        name: 'studio-runtime',
        status: 'running',
        timestamp: new Date().toISOString(),
        ...deps.status(),
      }),
    }),
  ];
}
