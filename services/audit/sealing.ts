import type { GatewayContext } from '../../shared/gateway-context.ts';
import type { Leadership } from '../../shared/leadership.ts';
import { LogSealer, type LogSealerOptions } from './sealer.ts';

/** How often the gateway seals its log (tests shorten it). */
export type SealingOptions = Pick<LogSealerOptions, 'sealEvery' | 'sealAfterMs'>;

/** Name of the sealer's singleton: one sealer per log, whichever gateway leads. */
export const SEALER_SINGLETON = 'log-sealer';

/** The gateway's log sealer, run as a singleton (alone, or as the leader among processes on PostgreSQL). */
export function gatewaySealer(ctx: GatewayContext, options: SealingOptions = {}) {
  const sealer = new LogSealer({
    events: ctx.events,
    logger: ctx.logger.child({ component: SEALER_SINGLETON }),
    ...options,
  });
  let leadership: Leadership | undefined;
  return {
    start() {
      leadership ??= ctx.singleton(SEALER_SINGLETON, sealer);
    },
    async stop() {
      await leadership?.stop();
    },
  };
}
