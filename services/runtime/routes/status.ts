import { defineEndpoint, noInput } from '../../../shared/http/action.ts';
import { readyRoute } from '../../../shared/http/probes.ts';
import type { RuntimeRouteDeps } from './deps.ts';

/** GET /health, GET /ready and GET /api/status: plain bodies, without the `{success: true}` of the other routes. */
export function statusRoutes(deps: Pick<RuntimeRouteDeps, 'health' | 'ready' | 'status'>) {
  return [
    readyRoute(deps.ready),
    defineEndpoint({
      method: 'GET',
      path: '/health',
      input: noInput,
      handler: () => deps.health(),
    }),
    defineEndpoint({
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
