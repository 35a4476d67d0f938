import type { GatewayContext } from '../../../shared/gateway-context.ts';
import type { Leadership } from '../../../shared/leadership.ts';
import { captureProjection } from './read-model.ts';
import type { StudioKeys } from './studio-keys.ts';

const SWEEP_EVERY_MS = 60 * 60_000;
const DAY_MS = 86_400_000;

/**
 * Destroys each studio's payload keys of days older than its retention, in one process (the
 * leader), at start and every hour; each destruction is recorded with `record`.
 */
export function keepPayloadRetention(
  gw: GatewayContext,
  keys: StudioKeys,
  record: (studioId: string, keyIds: string[]) => Promise<unknown>,
  now: () => number = Date.now,
): Leadership {
  const sweep = async () => {
    for (const [studioId, settings] of gw.projections.state(captureProjection)) {
      const firstKept = new Date(now() - (settings.retentionDays - 1) * DAY_MS).toISOString().slice(0, 10);
      const destroyed = await keys.destroy(studioId, firstKept);
      if (destroyed.length > 0) await record(studioId, destroyed);
    }
  };
  return gw.singleton('payload-retention', {
    async run(signal) {
      while (!signal.aborted) {
        await sweep().catch((error: unknown) =>
          gw.logger.warn({ err: error }, 'payload retention could not run; it runs again within the hour'),
        );
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, SWEEP_EVERY_MS);
          signal.addEventListener(
            'abort',
            () => {
              clearTimeout(timer);
              resolve();
            },
            { once: true },
          );
        });
      }
    },
  });
}
