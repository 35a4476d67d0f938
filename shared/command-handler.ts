import {
  type AggregateCache,
  type CommandResult,
  type Decider,
  type DomainEvent,
  handleCommand,
} from './decider.ts';
import type { EventMetadata, EventStore } from './event-store/types.ts';
import type { KeyedLock } from './keyed-lock.ts';
import type { ProjectionRunner } from './projections/runner.ts';

/**
 * What a command's caller may count on seeing in this process's read models once it returns:
 * - `required`: its own write, or the command answers 503 `unavailable` (stored, but this process's
 *   view of it is late): what an HTTP answer built from the read models needs;
 * - `best-effort`: its own write if the read models reach it within the wait, else it returns anyway
 *   (workers that read their own state back, where a late view only delays them);
 * - `none`: nothing waited for.
 */
export type ReadYourWrites = 'required' | 'best-effort' | 'none';

export interface CommandHandlerOptions<Command, State> {
  events: EventStore;
  /** The stream a command is decided on and appended to. */
  streamOf: (command: Command) => string;
  /** The read models a write is waited for in (see `readYourWrites`); none: nothing is waited for. */
  readModels?: Pick<ProjectionRunner, 'awaitReadModels' | 'waitFor'>;
  readYourWrites?: ReadYourWrites;
  /** Folded aggregates kept between commands, so a long stream is not re-read from its start. */
  cache?: AggregateCache<State>;
  /** Commands on one stream taken one at a time in this process, instead of retried on conflict. */
  lock?: KeyedLock;
}

export type CommandHandler<Command, Event extends DomainEvent, State> = (
  command: Command,
  metadata: EventMetadata,
) => Promise<CommandResult<Event, State>>;

/**
 * One aggregate's command handler, the one way a command is run: its stream is loaded and folded,
 * the decider decides, the events are appended at the revision read (decided again on a concurrent
 * write), then the read models are waited for as `readYourWrites` says.
 */
export function commandHandler<Command, Event extends DomainEvent, State>(
  decider: Decider<Command, Event, State>,
  options: CommandHandlerOptions<Command, State>,
): CommandHandler<Command, Event, State> {
  const { events, streamOf, readModels, cache, lock } = options;
  const readYourWrites = readModels ? (options.readYourWrites ?? 'required') : 'none';
  const decideAndAppend = (streamId: string, command: Command, metadata: EventMetadata) =>
    handleCommand(events, streamId, decider, command, metadata, cache);
  return async (command, metadata) => {
    const streamId = streamOf(command);
    const result = await (lock
      ? lock.run(streamId, () => decideAndAppend(streamId, command, metadata))
      : decideAndAppend(streamId, command, metadata));
    if (result.position !== undefined && readModels) {
      if (readYourWrites === 'required') await readModels.awaitReadModels(result.position);
      else if (readYourWrites === 'best-effort') await readModels.waitFor(result.position);
    }
    return result;
  };
}
