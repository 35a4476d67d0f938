import type { ProjectionRunner } from '../../shared/projections/runner.ts';
import type { StreamHub } from '../sessions/stream-hub.ts';

/**
 * GET /health of the runtime: `degraded` while its read models or a session stream tail cannot
 * read the log (each retries on its own); 200 either way, as on the gateway.
 */
export function runtimeHealth(runner: ProjectionRunner, hub: StreamHub | undefined): Record<string, unknown> {
  const readModels = runner.liveness.report();
  const tails = hub?.health();
  const healthy = readModels.state === 'live' && (tails === undefined || tails.stalled === 0);
  return {
    status: healthy ? 'ok' : 'degraded',
    timestamp: new Date().toISOString(),
    read_models: readModels,
    ...(tails === undefined ? {} : { stream_tails: tails }),
  };
}
