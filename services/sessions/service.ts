import { randomBytes } from 'node:crypto';
import { type MessageView, type SessionView, sessionsProjection } from '../../projections/sessions.ts';
import { AggregateCache, foldEvents, handleCommand, loadAggregate } from '../../shared/decider.ts';
import { ApiError } from '../../shared/errors.ts';
import type { EventMetadata, EventStore } from '../../shared/event-store/types.ts';
import { KeyedLock } from '../../shared/keyed-lock.ts';
import type { Logger } from '../../shared/logger.ts';
import type { ProjectionRunner } from '../../shared/projections/runner.ts';
import { type Attachment, materializePrompt } from './attachments.ts';
import {
  type SessionCommand,
  type SessionEvent,
  type SessionKind,
  type SessionState,
  sessionDecider,
  sessionStreamId,
  type TurnAttachment,
} from './session.ts';

export const newSessionId = () => `ses_${randomBytes(12).toString('base64url')}`;
export const newTurnId = () => `turn_${randomBytes(12).toString('base64url')}`;

export interface Turn {
  sessionId: string;
  turnId: string;
  text: string;
  attachments: TurnAttachment[];
}

export interface PromptInput {
  text: string;
  attachments?: readonly Attachment[];
  /** Who sent it: `sdk`, `execute`, `dashboard`. */
  source: string;
  /** Wait for the turn to end (default), or answer once it is queued. */
  wait?: boolean;
}

export type PromptQueued = { queued: true; turnId: string; queuePosition: number };
export type PromptAnswered = {
  queued: false;
  turnId: string;
  status: 'completed';
  message: MessageView | undefined;
};

export type TurnOutcome =
  | { status: 'completed'; turnId: string }
  | { status: 'failed'; turnId: string; error: string }
  | { status: 'cancelled'; turnId: string; reason: string };

/** Runs one turn's work (the agent loop); records what happens through `record`. */
export type TurnRunner = (
  turn: Turn,
  ctx: { signal: AbortSignal; record: (command: SessionCommand) => Promise<void> },
) => Promise<void>;

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
 * The command side of sessions: create, enqueue turns, run them one at a time per session, in order.
 * Commands of one session go through one lock, so concurrent callers queue instead of racing.
 */
export class SessionService {
  readonly #cache = new AggregateCache<SessionState>();
  readonly #locks = new KeyedLock();
  readonly #waiters = new Map<string, (outcome: TurnOutcome) => void>();
  readonly #draining = new Set<string>();
  readonly #running = new Map<string, AbortController>();
  #closed = false;

  constructor(private readonly options: SessionServiceOptions) {}

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

  /**
   * Runs a command on a session under its lock and waits (bounded) until the read model shows it;
   * with `mustShow`, a read model that does not get there is a 503 `unavailable`.
   */
  record(
    sessionId: string,
    command: SessionCommand,
    metadata: EventMetadata = { actor: 'runtime' },
    mustShow = false,
  ) {
    return this.#locks.run(sessionId, async () => {
      const result = await handleCommand(
        this.options.events,
        sessionStreamId(sessionId),
        sessionDecider,
        command,
        metadata,
        this.#cache,
      );
      if (result.position === undefined) return result;
      if (mustShow) await this.options.projections.awaitReadModels(result.position);
      else await this.options.projections.waitFor(result.position);
      return result;
    });
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
    await this.record(
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

  /**
   * A new session whose history is the source's up to `atRevision` (copied, in one atomic append)
   * followed by its own, beginning with `SessionForked`. The source is not touched.
   */
  async fork(
    sourceId: string,
    atRevision: number | undefined,
    metadata: EventMetadata = { actor: 'runtime' },
  ): Promise<SessionView> {
    const source = this.require(sourceId);
    const last = source.session.revision;
    const cut = atRevision ?? last;
    if (cut < 0 || cut > last) {
      throw new ApiError(
        'validation_failed',
        `at_revision must be between 0 and ${last}, the last revision of ${sourceId}`,
        {
          param: 'at_revision',
        },
      );
    }
    const copies = await this.options.events.readStream(sessionStreamId(sourceId), { limit: cut + 1 });
    const sessionId = newSessionId();
    const state = foldEvents(sessionDecider, copies as SessionEvent[]);
    const decided = sessionDecider.decide(
      { type: 'ForkSession', sessionId, fromSessionId: sourceId, atRevision: cut },
      state,
    );
    const result = await this.options.events.append(
      sessionStreamId(sessionId),
      [...copies.map((e) => ({ type: e.type, data: e.data })), ...decided],
      { expected: 'no_stream', metadata },
    );
    await this.options.projections.awaitReadModels(result.position);
    return this.require(sessionId);
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
    if (this.#closed) throw new ApiError('conflict', 'the runtime is stopping');
    this.require(sessionId);
    const turnId = input.turnId ?? newTurnId();
    const done = new Promise<TurnOutcome>((resolve) => this.#waiters.set(turnId, resolve));
    const max = this.options.maxQueue ?? 100;
    const result = await this.#locks
      .run(sessionId, async () => {
        const current = await this.#state(sessionId);
        const waiting = current.queue.length + (current.running ? 1 : 0);
        if (waiting >= max) {
          throw new ApiError('rate_limited', `session ${sessionId} already has ${waiting} turns waiting`, {
            headers: { 'Retry-After': '5' },
          });
        }
        const r = await handleCommand(
          this.options.events,
          sessionStreamId(sessionId),
          sessionDecider,
          {
            type: 'QueueTurn',
            turnId,
            text: input.text,
            attachments: input.attachments ?? [],
            source: input.source,
          },
          input.metadata ?? { actor: 'runtime' },
          this.#cache,
        );
        if (r.position !== undefined) await this.options.projections.waitFor(r.position);
        return r;
      })
      .catch((error) => {
        this.#waiters.delete(turnId);
        throw error;
      });
    const queuePosition = result.state.queue.indexOf(turnId) + 1 + (result.state.running ? 1 : 0);
    void this.#drain(sessionId);
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

  /** The session's decision state, from the cache plus whatever was appended since. */
  async #state(sessionId: string): Promise<SessionState> {
    const streamId = sessionStreamId(sessionId);
    const snapshot = await loadAggregate(
      this.options.events,
      streamId,
      sessionDecider,
      this.#cache.get(streamId),
    );
    this.#cache.set(streamId, snapshot);
    return snapshot.state;
  }

  /** Cancels the running turn of a session (its pending tool calls end as errors). */
  cancel(sessionId: string): boolean {
    const controller = this.#running.get(sessionId);
    controller?.abort(new Error('cancelled'));
    return controller !== undefined;
  }

  async #drain(sessionId: string): Promise<void> {
    if (this.#draining.has(sessionId)) return;
    this.#draining.add(sessionId);
    try {
      for (;;) {
        if (this.#closed) return;
        const state = await this.#locks.run(sessionId, () => this.#state(sessionId));
        const turnId = state.queue[0];
        if (!turnId || state.running) return;
        await this.#runOne(sessionId, turnId);
      }
    } finally {
      this.#draining.delete(sessionId);
    }
  }

  async #runOne(sessionId: string, turnId: string): Promise<void> {
    const view = this.require(sessionId);
    const queued = await this.#turnInput(sessionId, turnId);
    await this.record(sessionId, { type: 'StartTurn', turnId });
    const controller = new AbortController();
    this.#running.set(sessionId, controller);
    let outcome: TurnOutcome;
    try {
      await this.options.runTurn(
        { sessionId: view.session.id, turnId, text: queued.text, attachments: queued.attachments },
        {
          signal: controller.signal,
          record: async (command) => void (await this.record(sessionId, command)),
        },
      );
      await this.record(sessionId, { type: 'CompleteTurn', turnId });
      outcome = { status: 'completed', turnId };
    } catch (error) {
      const cancelled = controller.signal.aborted;
      const message = error instanceof Error ? error.message : String(error);
      outcome = cancelled
        ? { status: 'cancelled', turnId, reason: this.#closed ? 'the runtime stopped' : 'cancelled' }
        : { status: 'failed', turnId, error: message };
      try {
        await this.record(
          sessionId,
          cancelled
            ? {
                type: 'CancelTurn',
                turnId,
                reason: outcome.status === 'cancelled' ? outcome.reason : message,
              }
            : { type: 'FailTurn', turnId, error: message },
        );
      } catch (recordError) {
        this.options.logger.error(
          { err: recordError, sessionId, turnId },
          'could not record the end of a turn',
        );
      }
      if (!cancelled) this.options.logger.warn({ err: error, sessionId, turnId }, 'turn failed');
    } finally {
      this.#running.delete(sessionId);
    }
    this.#waiters.get(turnId)?.(outcome);
    this.#waiters.delete(turnId);
  }

  async #turnInput(
    sessionId: string,
    turnId: string,
  ): Promise<{ text: string; attachments: TurnAttachment[] }> {
    const events = await this.options.events.readStream(sessionStreamId(sessionId));
    const queued = events.find(
      (e) => e.type === 'TurnQueued' && (e.data as { turnId: string }).turnId === turnId,
    );
    if (!queued) throw new Error(`turn ${turnId} was never queued`);
    const data = queued.data as { text: string; attachments: TurnAttachment[] };
    return { text: data.text, attachments: data.attachments };
  }

  /**
   * After a restart: a turn that was running when the process died is failed (its tool calls end as
   * errors), and queued turns run again in order.
   */
  async resume(): Promise<void> {
    for (const view of this.options.projections.state(sessionsProjection).values()) {
      if (view.running) {
        await this.record(view.session.id, {
          type: 'FailTurn',
          turnId: view.running,
          error: 'the runtime restarted during this turn',
        });
      }
      if (view.pending.length > 0) void this.#drain(view.session.id);
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const controller of this.#running.values()) controller.abort(new Error('the runtime stopped'));
    await this.#locks.idle();
  }
}
