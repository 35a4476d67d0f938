import { logReadFailures, resubscribing } from '../../shared/event-store/resubscribe.ts';
import type { EventStore } from '../../shared/event-store/types.ts';
import { isCaughtUp } from '../../shared/event-store/types.ts';
import type { Logger } from '../../shared/logger.ts';
import type { CheckpointStore } from '../../shared/projections/checkpoints.ts';
import type { BackoffOptions } from '../../shared/retry.ts';
import type { PluginManager } from './plugins/manager.ts';

const CHECKPOINT = 'runtime-effects';
const SAVE_EVERY_MS = 1_000;

/**
 * Feeds session events to the effects of running plugins, from a checkpoint: an effect missed while
 * the runtime was down runs when it comes back (at least once).
 */
export class EffectDispatcher {
  #controller = new AbortController();
  #loop: Promise<void> | undefined;
  #position = 0;
  #saved = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly events: EventStore,
    private readonly checkpoints: CheckpointStore,
    private readonly plugins: PluginManager,
    private readonly logger: Logger,
    /** Backoff between a failed read of the log and the next try. Default 100 ms doubling to 5 s. */
    private readonly retry?: BackoffOptions,
  ) {}

  async start(): Promise<void> {
    const checkpoint = await this.checkpoints.load(CHECKPOINT);
    // A runtime's first start does not replay the past: effects are for what happens from now on.
    this.#position = checkpoint?.position ?? (await this.events.headPosition());
    this.#saved = this.#position;
    this.#loop = this.#follow().catch((error) =>
      this.logger.error({ err: error }, 'effect dispatcher stopped'),
    );
    this.#timer = setInterval(() => void this.#save(), SAVE_EVERY_MS);
    this.#timer.unref();
  }

  /** Follows the log for good: a failed read is retried (with backoff) after the last dispatched event. */
  async #follow(): Promise<void> {
    for await (const item of resubscribing(this.events, {
      after: this.#position,
      signal: this.#controller.signal,
      categories: ['session'],
      retry: this.retry,
      onFailure: logReadFailures(this.logger, 'effect dispatcher cannot read the log; retrying'),
    })) {
      // Read through there: the other streams' events are none of its business.
      if (isCaughtUp(item)) this.#position = Math.max(this.#position, item.position);
      else {
        await this.plugins.dispatch(item);
        this.#position = item.position;
      }
    }
  }

  async #save(): Promise<void> {
    if (this.#position === this.#saved) return;
    const position = this.#position;
    await this.checkpoints.save(CHECKPOINT, { schemaVersion: 1, position }).catch(() => undefined);
    this.#saved = position;
  }

  async stop(): Promise<void> {
    this.#controller.abort();
    clearInterval(this.#timer);
    await this.#loop;
    await this.#save();
  }
}
