import type { EventMetadata, EventStore, NewEvent, StoredEvent } from './event-store/types.ts';
import { WrongExpectedRevision } from './event-store/types.ts';

/** An event as a decider sees it: a type and its data, no storage details. */
export interface DomainEvent<Type extends string = string, Data = unknown> {
  type: Type;
  data: Data;
}

/**
 * One aggregate's rules: `decide` turns a command into events given the current state; `evolve`
 * folds an event into the state. Both are pure: time, ids and secrets arrive inside the command.
 */
export interface Decider<Command, Event extends DomainEvent, State> {
  initialState: () => State;
  decide: (command: Command, state: State) => Event[];
  evolve: (state: State, event: Event) => State;
}

export interface CommandResult<Event extends DomainEvent, State> {
  state: State;
  events: Event[];
  /** Position of the last appended event, or undefined when the command changed nothing. */
  position: number | undefined;
}

const MAX_ATTEMPTS = 5;

/**
 * Loads the stream, decides, appends with the revision it read; on a concurrent write it reloads and
 * decides again, so a command is decided against the state it is appended after.
 */
export async function handleCommand<Command, Event extends DomainEvent, State>(
  store: EventStore,
  streamId: string,
  decider: Decider<Command, Event, State>,
  command: Command,
  metadata: EventMetadata,
): Promise<CommandResult<Event, State>> {
  for (let attempt = 1; ; attempt++) {
    const history = (await store.readStream(streamId)) as StoredEvent<Event['type'], Event['data']>[];
    const revision = history.length - 1;
    const state = history.reduce(
      (s, e) => decider.evolve(s, { type: e.type, data: e.data } as Event),
      decider.initialState(),
    );
    const events = decider.decide(command, state);
    if (events.length === 0) return { state, events, position: undefined };
    try {
      const newEvents: NewEvent[] = events.map((e) => ({ type: e.type, data: e.data }));
      const result = await store.append(streamId, newEvents, {
        expected: revision < 0 ? 'no_stream' : revision,
        metadata,
      });
      return { state: events.reduce(decider.evolve, state), events, position: result.position };
    } catch (error) {
      if (!(error instanceof WrongExpectedRevision) || attempt >= MAX_ATTEMPTS) throw error;
    }
  }
}
