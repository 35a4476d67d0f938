import { commandHandler } from '../../../shared/command-handler.ts';
import type { GatewayContext } from '../../../shared/gateway-context.ts';
import { type LimitsCommand, limitsDecider, limitsStreamId } from './limits.ts';

/** The rate limits aggregate's command handler: it answers once the gateway's read models show its write. */
export const limitCommands = (gw: GatewayContext) =>
  commandHandler(limitsDecider, {
    events: gw.events,
    streamOf: (command: LimitsCommand) => limitsStreamId(command.studioId),
    readModels: gw.projections,
  });
