import type { SecretBox } from './crypto.ts';
import { type CommandResult, type Decider, type DomainEvent, handleCommand } from './decider.ts';
import type { EventMetadata, EventStore } from './event-store/types.ts';
import type { Leadership, SingletonTask } from './leadership.ts';
import type { Logger } from './logger.ts';
import type { StudioMetrics } from './observability/metrics.ts';
import type { CheckpointStore } from './projections/checkpoints.ts';
import type { ProjectionRunner } from './projections/runner.ts';
import type { CounterStore } from './rate-limit/counters.ts';

/** What the gateway's services share: the log, the read models kept in memory, the secret box. */
export interface GatewayContext {
  events: EventStore;
  checkpoints: CheckpointStore;
  projections: ProjectionRunner;
  secrets: SecretBox;
  /** Rate-limit counters: in PostgreSQL when the log is there (shared by every gateway), else memory. */
  counters: CounterStore;
  logger: Logger;
  /** This gateway's metrics registry (GET /metrics); services add their own metrics to it. */
  metrics: StudioMetrics;
  /** Environment of the process, for env variables not set in the store. */
  processEnv: NodeJS.ProcessEnv;
  /** Runs work that must happen in one process only (alone, or as the leader among processes). */
  singleton(name: string, task: SingletonTask): Leadership;
}

/** How long a command waits for local read models to show its own write. */
export const READ_YOUR_WRITES_MS = 2_000;

/**
 * Makes the next read reflect a command's write: waits until local projections have passed it, and
 * answers 503 `unavailable` when they do not (rather than a reply built from a state without it).
 */
export async function awaitReadModels(ctx: GatewayContext, position: number | undefined): Promise<void> {
  if (position !== undefined) await ctx.projections.awaitReadModels(position, READ_YOUR_WRITES_MS);
}

/** Runs a command on its stream (`handleCommand`), then waits until the local read models show it. */
export async function runCommand<Command, Event extends DomainEvent, State>(
  ctx: GatewayContext,
  streamId: string,
  decider: Decider<Command, Event, State>,
  command: Command,
  metadata: EventMetadata,
): Promise<CommandResult<Event, State>> {
  const result = await handleCommand(ctx.events, streamId, decider, command, metadata);
  await awaitReadModels(ctx, result.position);
  return result;
}
