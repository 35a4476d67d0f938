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

/**
 * The `default` of a decider's exhaustive switch: `value` is `never` while every command or event
 * has its case, so a missing case does not compile; reached all the same, it throws.
 */
export function unknownCase(kind: 'command' | 'event', value: never): never {
  throw new Error(`unknown ${kind} ${JSON.stringify(value)}`);
}

export interface CommandResult<Event extends DomainEvent, State> {
  state: State;
  events: Event[];
  /** Position of the last appended event, or undefined when the command changed nothing. */
  position: number | undefined;
}

const MAX_ATTEMPTS = 5;

/**
 * Folds events into a state, from `state` or else the decider's initial one. Only each event's type
 * and data reach `evolve`: stored events arrive as they are read, storage details and all.
 */
export function foldEvents<Event extends DomainEvent, State>(
  decider: Pick<Decider<unknown, Event, State>, 'initialState' | 'evolve'>,
  events: readonly DomainEvent<Event['type'], Event['data']>[],
  state: State = decider.initialState(),
): State {
  return events.reduce((s, e) => decider.evolve(s, { type: e.type, data: e.data } as Event), state);
}

/** A stream's folded state and the revision it reflects (-1: no events). */
export interface Snapshot<State> {
  state: State;
  revision: number;
}

/**
 * Remembers aggregates between commands so a long stream (a session) is not re-read from its start
 * for every command: only the events after the remembered revision are read and folded.
 */
export class AggregateCache<State> {
  #items = new Map<string, Snapshot<State>>();

  constructor(private readonly maxStreams = 10_000) {}

  get(streamId: string): Snapshot<State> | undefined {
    return this.#items.get(streamId);
  }

  set(streamId: string, snapshot: Snapshot<State>): void {
    this.#items.delete(streamId);
    this.#items.set(streamId, snapshot);
    if (this.#items.size > this.maxStreams) this.#items.delete(this.#items.keys().next().value!);
  }
}

/** Folds a stream's events (after a known snapshot, when there is one) into its current state. */
export async function loadAggregate<Command, Event extends DomainEvent, State>(
  store: EventStore,
  streamId: string,
  decider: Decider<Command, Event, State>,
  from?: Snapshot<State>,
): Promise<Snapshot<State>> {
  const after = from?.revision ?? -1;
  const events = (await store.readStream(streamId, { after })) as StoredEvent<Event['type'], Event['data']>[];
  const state = foldEvents(decider, events, from?.state);
  return { state, revision: events.at(-1)?.revision ?? after };
}

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
  cache?: AggregateCache<State>,
): Promise<CommandResult<Event, State>> {
  for (let attempt = 1; ; attempt++) {
    const { state, revision } = await loadAggregate(store, streamId, decider, cache?.get(streamId));
    cache?.set(streamId, { state, revision });
    const events = decider.decide(command, state);
    if (events.length === 0) return { state, events, position: undefined };
    try {
      const newEvents: NewEvent[] = events.map((e) => ({ type: e.type, data: e.data }));
      const result = await store.append(streamId, newEvents, {
        expected: revision < 0 ? 'no_stream' : revision,
        metadata,
      });
      const next = foldEvents(decider, events, state);
      cache?.set(streamId, { state: next, revision: result.nextExpectedRevision });
      return { state: next, events, position: result.position };
    } catch (error) {
      if (!(error instanceof WrongExpectedRevision) || attempt >= MAX_ATTEMPTS) throw error;
    }
  }
}
