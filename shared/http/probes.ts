import type { ReadModelsHealth } from '../projections/read-models-health.ts';
import { defineEndpoint, noInput, withStatus } from './action.ts';
import { DRAIN_RETRY_AFTER_S } from './drain.ts';

/** The answer of GET /ready: whether to send this process traffic, and the body that says why not. */
export interface Readiness {
  ready: boolean;
  body: Record<string, unknown>;
}

/** GET /ready: 200 when ready, else 503 with `Retry-After` (for load balancers: no traffic here now). */
export function readyRoute(ready: () => Promise<Readiness>) {
  return defineEndpoint({
    method: 'GET',
    path: '/ready',
    identities: [],
    input: noInput,
    handler: async (_input, { res }) => {
      const answer = await ready();
      if (!answer.ready) res.setHeader('Retry-After', String(DRAIN_RETRY_AFTER_S));
      return withStatus(answer.ready ? 200 : 503, answer.body);
    },
  });
}

/**
 * Ready when the process is not draining, the log answers and every read model is live (it read up
 * to the head since its last failed read and follows it); `not_ready` lists what is missing.
 */
export function readinessOf(health: ReadModelsHealth, draining: boolean): Readiness {
  const missing: string[] = [];
  if (draining) missing.push('draining: this process is stopping, send new requests to another one');
  if (!health.event_store.reachable) missing.push('event_store: the log cannot be read');
  if (health.read_models.state !== 'live')
    missing.push(`read_models: ${health.read_models.state.replace('_', ' ')}, not live`);
  const ready = missing.length === 0;
  return {
    ready,
    body: {
      status: ready ? 'ready' : draining ? 'draining' : 'not_ready',
      ...(ready ? {} : { not_ready: missing }),
      timestamp: new Date().toISOString(),
      event_store: health.event_store,
      read_models: health.read_models,
      projections: health.projections,
    },
  };
}
