import { messageOf } from '../../shared/errors.ts';
import type { EventStore } from '../../shared/event-store/types.ts';
import { IdleWaiters } from '../../shared/idle-waiters.ts';
import type { Logger } from '../../shared/logger.ts';
import type { SessionCommands } from './commands.ts';
import { sessionStreamId, type TurnAttachment } from './session.ts';
import type { TurnOutcome, TurnRunner } from './types.ts';

/**
 * Runs the queued turns of each session one at a time, in order: starts each, hands it to the turn
 * runner, records how it ended and tells whoever waits for it.
 */
export class TurnQueue {
  readonly #waiters = new Map<string, (outcome: TurnOutcome) => void>();
  readonly #looping = new Set<string>();
  readonly #running = new Map<string, AbortController>();
  /** The sessions' queues being run, and who waits for none to be. */
  readonly #loops = new Set<Promise<void>>();
  readonly #idle = new IdleWaiters(() => this.#loops.size === 0);
  #stopped = false;

  constructor(
    private readonly options: {
      events: EventStore;
      commands: SessionCommands;
      runTurn: TurnRunner;
      logger: Logger;
    },
  ) {}

  get stopped(): boolean {
    return this.#stopped;
  }

  /** Resolves when the turn ends; registered before the turn is queued so no ending is missed. */
  outcomeOf(turnId: string): Promise<TurnOutcome> {
    return new Promise<TurnOutcome>((resolve) => this.#waiters.set(turnId, resolve));
  }

  forget(turnId: string): void {
    this.#waiters.delete(turnId);
  }

  /** Cancels the running turn of a session (its pending tool calls end as errors). */
  cancel(sessionId: string): boolean {
    const controller = this.#running.get(sessionId);
    controller?.abort(new Error('cancelled'));
    return controller !== undefined;
  }

  /** Runs the session's queued turns until its queue is empty (once per session at a time). */
  runQueued(sessionId: string): Promise<void> {
    if (this.#looping.has(sessionId)) return Promise.resolve();
    this.#looping.add(sessionId);
    const loop = this.#runQueue(sessionId).finally(() => {
      this.#loops.delete(loop);
      this.#idle.check();
    });
    this.#loops.add(loop);
    return loop;
  }

  /** Resolves true once no session has a turn running or queued, false if `deadline` aborts first. */
  idle(deadline: AbortSignal): Promise<boolean> {
    return this.#idle.wait(deadline);
  }

  async #runQueue(sessionId: string): Promise<void> {
    try {
      for (;;) {
        if (this.#stopped) return;
        const state = await this.options.commands.state(sessionId);
        const turnId = state.queue[0];
        if (!turnId || state.running) return;
        await this.#runOne(sessionId, turnId);
      }
    } finally {
      this.#looping.delete(sessionId);
    }
  }

  /** Stops running turns: the running ones are aborted and end as cancelled. */
  stop(): void {
    this.#stopped = true;
    for (const controller of this.#running.values()) controller.abort(new Error('the runtime stopped'));
  }

  async #runOne(sessionId: string, turnId: string): Promise<void> {
    const { commands } = this.options;
    const queued = await this.#turnInput(sessionId, turnId);
    await commands.handle(sessionId, { type: 'StartTurn', turnId });
    const controller = new AbortController();
    this.#running.set(sessionId, controller);
    let outcome: TurnOutcome;
    try {
      await this.options.runTurn(
        { sessionId, turnId, text: queued.text, attachments: queued.attachments },
        {
          signal: controller.signal,
          record: async (command) => void (await commands.handle(sessionId, command)),
        },
      );
      await commands.handle(sessionId, { type: 'CompleteTurn', turnId });
      outcome = { status: 'completed', turnId };
    } catch (error) {
      const cancelled = controller.signal.aborted;
      const message = messageOf(error);
      outcome = cancelled
        ? { status: 'cancelled', turnId, reason: this.#stopped ? 'the runtime stopped' : 'cancelled' }
        : { status: 'failed', turnId, error: message };
      try {
        await commands.handle(
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
}
