import { commandHandler, type ReadYourWrites } from '../../../shared/command-handler.ts';
import type { GatewayContext } from '../../../shared/gateway-context.ts';
import { type JobCommand, jobDecider, jobStreamId } from './job.ts';

/**
 * The job aggregate's command handler: the API waits until the read models show its write (it
 * answers from them); the worker only until they reach it or a short wait passes (it reads its own
 * state back, and a late view only delays it).
 */
export const jobCommands = (gw: GatewayContext, readYourWrites: ReadYourWrites = 'required') =>
  commandHandler(jobDecider, {
    events: gw.events,
    streamOf: (command: JobCommand) => jobStreamId(command.jobId),
    readModels: gw.projections,
    readYourWrites,
  });
