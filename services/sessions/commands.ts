import { commandHandler, type ReadYourWrites } from '../../shared/command-handler.ts';
import { AggregateCache, type CommandResult, loadAggregate } from '../../shared/decider.ts';
import type { EventMetadata, EventStore } from '../../shared/event-store/types.ts';
import { KeyedLock } from '../../shared/keyed-lock.ts';
import type { ProjectionRunner } from '../../shared/projections/runner.ts';
import {
  type SessionCommand,
  type SessionEvent,
  type SessionState,
  sessionDecider,
  sessionStreamId,
} from './session.ts';

type Decided = CommandResult<SessionEvent, SessionState>;

/**
 * Runs session commands: one lock per session, so concurrent callers queue instead of racing, and
 * one cache of decided states.
 */
export class SessionCommands {
  readonly #cache = new AggregateCache<SessionState>();
  readonly #locks = new KeyedLock();

  constructor(
    private readonly events: EventStore,
    private readonly projections: ProjectionRunner,
  ) {}

  /**
   * Runs a command on a session under its lock and waits (bounded) until the read model shows it;
   * with `mustShow`, a read model that does not get there is a 503 `unavailable`.
   */
  handle(
    sessionId: string,
    command: SessionCommand,
    metadata: EventMetadata = { actor: 'runtime' },
    mustShow = false,
  ) {
    return this.#locks.run(sessionId, () =>
      this.#handle(sessionId, command, metadata, mustShow ? 'required' : 'best-effort'),
    );
  }

  /** Runs `work` under the session's lock, with `decide` to decide a command and `state` to read the state. */
  locked<T>(
    sessionId: string,
    work: (session: {
      state: () => Promise<SessionState>;
      decide: (command: SessionCommand, metadata: EventMetadata) => Promise<Decided>;
    }) => Promise<T>,
  ): Promise<T> {
    return this.#locks.run(sessionId, () =>
      work({
        state: () => this.#state(sessionId),
        decide: (command, metadata) => this.#handle(sessionId, command, metadata, 'none'),
      }),
    );
  }

  /** The session's decision state, read under its lock. */
  state(sessionId: string): Promise<SessionState> {
    return this.#locks.run(sessionId, () => this.#state(sessionId));
  }

  /** Resolves when no command is running or waiting. */
  idle(): Promise<void> {
    return this.#locks.idle();
  }

  /** The session's command handler (its commands do not all name it, so it is made per session). */
  #handle(
    sessionId: string,
    command: SessionCommand,
    metadata: EventMetadata,
    readYourWrites: ReadYourWrites,
  ): Promise<Decided> {
    const handle = commandHandler(sessionDecider, {
      events: this.events,
      streamOf: () => sessionStreamId(sessionId),
      cache: this.#cache,
      readModels: this.projections,
      readYourWrites,
    });
    return handle(command, metadata);
  }

  /** The session's decision state, from the cache plus whatever was appended since. */
  async #state(sessionId: string): Promise<SessionState> {
    const streamId = sessionStreamId(sessionId);
    const snapshot = await loadAggregate(this.events, streamId, sessionDecider, this.#cache.get(streamId));
    this.#cache.set(streamId, snapshot);
    return snapshot.state;
  }
}
