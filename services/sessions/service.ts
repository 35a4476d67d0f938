import type { SessionView } from '../../projections/sessions.ts';
import { sessionsProjection } from '../../projections/sessions.ts';
import { ApiError } from '../../shared/errors.ts';
import type { EventMetadata, EventStore } from '../../shared/event-store/types.ts';
import type { Logger } from '../../shared/logger.ts';
import type { ProjectionRunner } from '../../shared/projections/runner.ts';
import { materializePrompt } from './attachments.ts';
import { SessionCommands } from './commands.ts';
import { forkSession } from './fork.ts';
import { newSessionId, newTurnId } from './ids.ts';
import type { SessionCommand, SessionKind, TurnAttachment } from './session.ts';
import { TurnQueue } from './turn-queue.ts';
import type { PromptAnswered, PromptInput, PromptQueued, TurnOutcome, TurnRunner } from './types.ts';

export interface SessionServiceOptions {
  events: EventStore;
  projections: ProjectionRunner;
  runTurn: TurnRunner;
  logger: Logger;
  /** Where a prompt's attachments are written. */
  workspace: string;
  /** Most turns a session may have waiting (429 beyond). */
  maxQueue?: number;
}

/**
 * What the routes and the runtime ask of sessions: create, fork, prompt, queue turns, and read the
 * sessions' read model. Commands go through `SessionCommands` (one lock per session); queued turns
 * run through the `TurnQueue`, one at a time per session, in order.
 */
export class SessionService {
  readonly #commands: SessionCommands;
  readonly #turns: TurnQueue;

  constructor(private readonly options: SessionServiceOptions) {
    this.#commands = new SessionCommands(options.events, options.projections);
    this.#turns = new TurnQueue({
      events: options.events,
      commands: this.#commands,
      runTurn: options.runTurn,
      logger: options.logger,
    });
  }

  get(sessionId: string): SessionView | undefined {
    return this.options.projections.state(sessionsProjection).get(sessionId);
  }

  list(): SessionView[] {
    return [...this.options.projections.state(sessionsProjection).values()];
  }

  require(sessionId: string): SessionView {
    const view = this.get(sessionId);
    if (!view) throw new ApiError('not_found', `session ${sessionId} does not exist`, { param: 'sessionId' });
    return view;
  }

  /** Runs a command on a session (see `SessionCommands.handle`). */
  handle(sessionId: string, command: SessionCommand, metadata?: EventMetadata, mustShow = false) {
    return this.#commands.handle(sessionId, command, metadata, mustShow);
  }

  async create(input: {
    sessionId?: string;
    kind: SessionKind;
    title: string;
    model: string;
    system: string;
    chatId?: string | null;
    metadata?: EventMetadata;
  }): Promise<SessionView> {
    const sessionId = input.sessionId ?? newSessionId();
    await this.handle(
      sessionId,
      {
        type: 'CreateSession',
        sessionId,
        title: input.title,
        model: input.model,
        system: input.system,
        kind: input.kind,
        chatId: input.chatId ?? null,
      },
      input.metadata,
      true,
    );
    return this.require(sessionId);
  }

  /** A new session with the source's history up to `atRevision`, then its own (see `forkSession`). */
  async fork(
    sourceId: string,
    atRevision: number | undefined,
    metadata: EventMetadata = { actor: 'runtime' },
  ): Promise<SessionView> {
    const { session } = this.require(sourceId);
    const fork = await forkSession(this.options.events, session, atRevision, metadata);
    await this.options.projections.awaitReadModels(fork.position);
    return this.require(fork.sessionId);
  }

  /** Queues a turn; it runs after every turn queued before it. `done` settles when it ends. */
  async enqueue(
    sessionId: string,
    input: {
      text: string;
      attachments?: TurnAttachment[];
      source: string;
      turnId?: string;
      metadata?: EventMetadata;
    },
  ): Promise<{ turnId: string; queuePosition: number; done: Promise<TurnOutcome> }> {
    if (this.#turns.stopped) throw new ApiError('conflict', 'the runtime is stopping');
    this.require(sessionId);
    const turnId = input.turnId ?? newTurnId();
    const done = this.#turns.outcomeOf(turnId);
    const max = this.options.maxQueue ?? 100;
    const result = await this.#commands
      .locked(sessionId, async (session) => {
        const current = await session.state();
        const waiting = current.queue.length + (current.running ? 1 : 0);
        if (waiting >= max) {
          throw new ApiError('rate_limited', `session ${sessionId} already has ${waiting} turns waiting`, {
            headers: { 'Retry-After': '5' },
          });
        }
        const r = await session.decide(
          {
            type: 'QueueTurn',
            turnId,
            text: input.text,
            attachments: input.attachments ?? [],
            source: input.source,
          },
          input.metadata ?? { actor: 'runtime' },
        );
        if (r.position !== undefined) await this.options.projections.waitFor(r.position);
        return r;
      })
      .catch((error) => {
        this.#turns.forget(turnId);
        throw error;
      });
    const queuePosition = result.state.queue.indexOf(turnId) + 1 + (result.state.running ? 1 : 0);
    void this.#turns.runQueued(sessionId);
    return { turnId, queuePosition, done };
  }

  /**
   * A prompt from any route: its attachments written to the workspace, its turn queued and, unless
   * `wait` is false, waited for. A failed turn is a 502, a cancelled one a 409; a completed one
   * answers with the last message the assistant wrote in it.
   */
  prompt(sessionId: string, input: PromptInput & { wait?: true }): Promise<PromptAnswered>;
  prompt(sessionId: string, input: PromptInput): Promise<PromptQueued | PromptAnswered>;
  async prompt(sessionId: string, input: PromptInput): Promise<PromptQueued | PromptAnswered> {
    this.require(sessionId);
    const prompt = await materializePrompt(this.options.workspace, sessionId, input.text, input.attachments);
    const queued = await this.enqueue(sessionId, {
      text: prompt.text,
      attachments: prompt.files,
      source: input.source,
    });
    if (input.wait === false)
      return { queued: true, turnId: queued.turnId, queuePosition: queued.queuePosition };
    const outcome = await queued.done;
    if (outcome.status === 'failed')
      throw new ApiError('upstream_error', `the turn failed: ${outcome.error}`);
    if (outcome.status === 'cancelled')
      throw new ApiError('conflict', `the turn was cancelled: ${outcome.reason}`);
    const message = this.require(sessionId)
      .messages.filter((m) => m.turn_id === queued.turnId && m.role === 'assistant')
      .at(-1);
    return { queued: false, turnId: queued.turnId, status: outcome.status, message };
  }

  /**
   * Deletes a session (a `SessionDeleted` event; it leaves the read model). A turn under way is a
   * 409, and so is a chat conversation's session: its conversation would go on writing to it.
   */
  async delete(sessionId: string, metadata: EventMetadata = { actor: 'runtime' }): Promise<void> {
    if (this.require(sessionId).session.kind === 'chat')
      throw new ApiError(
        'conflict',
        `session ${sessionId} is a chat conversation's: it is not deleted alone`,
      );
    await this.handle(sessionId, { type: 'DeleteSession', sessionId }, metadata, true);
  }

  /** Cancels the running turn of a session (its pending tool calls end as errors). */
  cancel(sessionId: string): boolean {
    return this.#turns.cancel(sessionId);
  }

  /**
   * After a restart: a turn that was running when the process died is failed (its tool calls end as
   * errors), and queued turns run again in order.
   */
  async resume(): Promise<void> {
    for (const view of this.options.projections.state(sessionsProjection).values()) {
      if (view.running) {
        await this.handle(view.session.id, {
          type: 'FailTurn',
          turnId: view.running,
          error: 'the runtime restarted during this turn',
        });
      }
      if (view.pending.length > 0) void this.#turns.runQueued(view.session.id);
    }
  }

  /** Resolves true once every turn queued has run, false if `deadline` aborts first (draining). */
  turnsDone(deadline: AbortSignal): Promise<boolean> {
    return this.#turns.idle(deadline);
  }

  async close(): Promise<void> {
    this.#turns.stop();
    await this.#commands.idle();
  }
}
