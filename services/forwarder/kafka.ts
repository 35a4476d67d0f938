import { messageOf } from '../../shared/errors.ts';
import { resubscribing } from '../../shared/event-store/resubscribe.ts';
import { type EventStore, isCaughtUp, type StoredEvent } from '../../shared/event-store/types.ts';
import type { SingletonTask } from '../../shared/leadership.ts';
import type { Logger } from '../../shared/logger.ts';
import type { CheckpointStore } from '../../shared/projections/checkpoints.ts';
import { backoffDelay, pause } from '../../shared/retry.ts';
import type { BatchProducer } from './producer.ts';
import { EventQueue } from './queue.ts';

// Types only: importing this module must not load kafkajs (kafkaProducer is in ./producer.ts).
export type { BatchProducer, KafkaProducerOptions } from './producer.ts';

/** Name of the forwarder's checkpoint in the CheckpointStore. */
export const FORWARDER_CHECKPOINT = 'kafka-forwarder';
const CHECKPOINT_VERSION = 1;
/** `lag` counts at most this many events (counting is a read of the log). */
export const LAG_CAP = 10_000;
/** While the broker stays unreachable, at most one warning per this many ms (the rest at debug). */
const WARN_EVERY_MS = 30_000;

export type ForwarderState = 'running' | 'connecting' | 'stopped';

export interface ForwarderStatus {
  state: ForwarderState;
  /** Position of the last event the broker acknowledged (the checkpoint). */
  position: number;
  /** Events in the log after `position`, counted up to LAG_CAP. */
  lag: number;
  /** Events the broker acknowledged since this process started forwarding. */
  forwarded: number;
  /** Why the last attempt failed; null once a batch was delivered again. */
  last_error: string | null;
}

export interface KafkaForwarderOptions {
  events: EventStore;
  checkpoints: CheckpointStore;
  /** Makes the producer of one run (e.g. `() => kafkaProducer({ brokers, topic, logger })`). */
  producer: () => BatchProducer;
  logger: Logger;
  /** Default `kafka-forwarder`. */
  checkpointName?: string;
  /** Most events in one produce request. Default 1,000. */
  batchSize?: number;
  /** How long a batch that is not full waits for more events. Default 5 ms. */
  lingerMs?: number;
  /** Backoff between failed attempts: doubles from `initialMs` up to `maxMs` (±20% jitter). */
  retry?: { initialMs?: number; maxMs?: number };
  /** How often the lag is logged while it is above zero. Default 30 s. */
  lagLogEveryMs?: number;
  /** How long a stop waits for a batch in flight to be acknowledged (then checkpointed). Default 5 s. */
  stopGraceMs?: number;
}

/**
 * Publishes every event of the log to one Kafka topic, in log order: key = stream id, value = the
 * event as JSON, headers = event id, type and position. One batch is in flight at a time; the
 * checkpoint moves only after the broker acknowledged a batch (`acks: -1`), and a batch that failed
 * is sent again, whole, before anything after it. So after a crash or a restart the forwarder
 * resumes from the last acknowledged batch: at least once, never reordered within a stream,
 * duplicates possible (the batch acknowledged but not yet checkpointed when the process died).
 *
 * Run it through `runAlone` / `runAsLeader`: one forwarder per log.
 */
export class KafkaForwarder implements SingletonTask {
  readonly #o: Required<Omit<KafkaForwarderOptions, 'retry'>> & {
    retry: { initialMs: number; maxMs: number };
  };
  #running = false;
  #lastRun = Promise.resolve();
  #state: ForwarderState = 'stopped';
  #connected = false;
  /** Last position the broker acknowledged, and the last one saved as the checkpoint. */
  #position = 0;
  #saved = 0;
  #forwarded = 0;
  #lastError: string | null = null;
  /** Failed attempts since the last delivered batch (drives the backoff). */
  #failures = 0;
  #lastWarnAt = 0;

  constructor(options: KafkaForwarderOptions) {
    this.#o = {
      checkpointName: FORWARDER_CHECKPOINT,
      batchSize: 1_000,
      lingerMs: 5,
      lagLogEveryMs: 30_000,
      stopGraceMs: 5_000,
      ...options,
      retry: { initialMs: 200, maxMs: 10_000, ...options.retry },
    };
    if (!(this.#o.batchSize >= 1)) throw new Error('batchSize must be at least 1');
  }

  /**
   * Forwards until `signal` aborts. A second call (leadership lost, then taken again) first waits
   * for the previous run to have stopped: never two runs at once in one process.
   */
  run(signal: AbortSignal): Promise<void> {
    const run = this.#lastRun.then(() => this.#forward(signal));
    this.#lastRun = run.catch(() => undefined);
    return run;
  }

  async #forward(signal: AbortSignal): Promise<void> {
    this.#running = true;
    this.#state = 'connecting';
    this.#connected = false;
    this.#failures = 0;
    const { logger, batchSize } = this.#o;
    // Stops the log subscription too, also when the loop below ends on its own.
    const stop = new AbortController();
    const onAbort = () => stop.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    if (signal.aborted) stop.abort();
    const lagTimer = setInterval(() => void this.#logLag().catch(() => undefined), this.#o.lagLogEveryMs);
    lagTimer.unref();
    let producer: BatchProducer | undefined;
    let pump = Promise.resolve();
    try {
      const start = await this.#loadCheckpoint(signal);
      if (start === undefined) return;
      this.#position = this.#saved = start;
      logger.info({ position: start }, 'kafka forwarder starting');
      const queue = new EventQueue(batchSize * 4);
      pump = this.#pump(queue, start, stop.signal);
      producer = this.#o.producer();

      while (!signal.aborted) {
        if (!this.#connected && !(await this.#connect(producer, signal))) break;
        await queue.untilNotEmpty(signal);
        if (signal.aborted) break;
        if (queue.length < batchSize && this.#o.lingerMs > 0) await pause(this.#o.lingerMs, signal);
        if (signal.aborted) break;
        const batch = queue.peek(batchSize);
        let acked: boolean;
        try {
          acked = await awaitWithGrace(producer.send(batch), signal, this.#o.stopGraceMs);
        } catch (error) {
          await this.#failed(error, producer, signal);
          continue; // the same events again, first
        }
        if (!acked) break; // stopped before the ack: they go again after the restart
        queue.drop(batch.length);
        this.#acknowledged(batch);
        await awaitWithGrace(this.#saveCheckpoint(), signal, this.#o.stopGraceMs);
      }
    } finally {
      stop.abort();
      signal.removeEventListener('abort', onAbort);
      clearInterval(lagTimer);
      if (this.#saved < this.#position)
        await awaitWithGrace(this.#saveCheckpoint(), AbortSignal.timeout(5_000), 0);
      if (producer)
        await awaitWithGrace(producer.disconnect(), AbortSignal.timeout(2_000), 0).catch(() => undefined);
      await pump;
      this.#state = 'stopped';
      this.#connected = false;
      this.#running = false;
      logger.info({ position: this.#position, forwarded: this.#forwarded }, 'kafka forwarder stopped');
    }
  }

  /**
   * Where it stands. In a process that does not run the forwarder (another one leads), the position
   * is the stored checkpoint.
   */
  async status(): Promise<ForwarderStatus> {
    let position = this.#position;
    if (!this.#running) {
      const stored = await this.#o.checkpoints.load(this.#o.checkpointName).catch(() => undefined);
      position = stored?.position ?? position;
    }
    const head = await this.#o.events.headPosition();
    const lag =
      position >= head ? 0 : (await this.#o.events.readAll({ after: position, limit: LAG_CAP })).length;
    return {
      state: this.#state,
      position,
      lag,
      forwarded: this.#forwarded,
      last_error: this.#lastError,
    };
  }

  #acknowledged(batch: readonly StoredEvent[]): void {
    if (this.#failures > 0) {
      this.#o.logger.info(
        { failed_attempts: this.#failures, position: this.#position },
        'kafka forwarder delivering again',
      );
    }
    this.#failures = 0;
    this.#lastError = null;
    this.#state = 'running';
    this.#position = batch.at(-1)!.position;
    this.#forwarded += batch.length;
  }

  /** Connects, retrying with backoff; false when stopped first. */
  async #connect(producer: BatchProducer, signal: AbortSignal): Promise<boolean> {
    while (!signal.aborted) {
      this.#state = 'connecting';
      try {
        if (!(await awaitWithGrace(producer.connect(), signal, 0))) return false;
        this.#connected = true;
        this.#state = 'running';
        return true;
      } catch (error) {
        await this.#failed(error, producer, signal);
      }
    }
    return false;
  }

  /** Records a failed connect or send, drops the connection and waits out the backoff. */
  async #failed(error: unknown, producer: BatchProducer, signal: AbortSignal): Promise<void> {
    this.#failures++;
    this.#connected = false;
    this.#state = 'connecting';
    this.#lastError = messageOf(error);
    const now = Date.now();
    const fields = { err: error, failed_attempts: this.#failures, position: this.#position };
    if (this.#failures === 1 || now - this.#lastWarnAt >= WARN_EVERY_MS) {
      this.#lastWarnAt = now;
      this.#o.logger.warn(fields, 'kafka forwarder cannot deliver to the broker; retrying');
    } else {
      this.#o.logger.debug(fields, 'kafka forwarder cannot deliver to the broker; retrying');
    }
    await awaitWithGrace(producer.disconnect(), AbortSignal.timeout(2_000), 0).catch(() => undefined);
    await pause(this.#backoff(this.#failures), signal);
  }

  #backoff(failures: number): number {
    return backoffDelay(failures, this.#o.retry);
  }

  /** Never throws: a failed save is retried with the next batch (at worst more duplicates later). */
  async #saveCheckpoint(): Promise<void> {
    const position = this.#position;
    try {
      await this.#o.checkpoints.save(this.#o.checkpointName, { schemaVersion: CHECKPOINT_VERSION, position });
      this.#saved = Math.max(this.#saved, position);
    } catch (error) {
      this.#lastError = `saving the checkpoint: ${messageOf(error)}`;
      this.#o.logger.warn({ err: error, position }, 'kafka forwarder could not save its checkpoint');
    }
  }

  /** The checkpoint's position (0 without one); undefined when stopped before it could be read. */
  async #loadCheckpoint(signal: AbortSignal): Promise<number | undefined> {
    for (let failures = 1; !signal.aborted; failures++) {
      try {
        return (await this.#o.checkpoints.load(this.#o.checkpointName))?.position ?? 0;
      } catch (error) {
        this.#lastError = `loading the checkpoint: ${messageOf(error)}`;
        this.#o.logger.warn({ err: error }, 'kafka forwarder could not load its checkpoint; retrying');
        await pause(this.#backoff(failures), signal);
      }
    }
    return undefined;
  }

  /** Follows the log from `after` into the queue; resubscribes (from where it got) after an error. */
  async #pump(queue: EventQueue, after: number, signal: AbortSignal): Promise<void> {
    const items = resubscribing(this.#o.events, {
      after,
      signal,
      batchSize: this.#o.batchSize,
      retry: this.#o.retry,
      onFailure: ({ error, after: position }) => {
        this.#lastError = `reading the log: ${messageOf(error)}`;
        this.#o.logger.warn({ err: error, position }, 'kafka forwarder lost the log; resubscribing');
      },
    });
    for await (const item of items) {
      if (isCaughtUp(item)) continue;
      await queue.untilRoom(signal);
      if (signal.aborted) return;
      queue.push(item);
    }
  }

  async #logLag(): Promise<void> {
    if (!this.#running) return;
    const status = await this.status();
    if (status.lag === 0) return;
    const fields = { ...status, lag_capped: status.lag >= LAG_CAP };
    if (status.state === 'running') this.#o.logger.info(fields, 'kafka forwarder is behind the log');
    else this.#o.logger.warn(fields, 'kafka forwarder is behind the log');
  }
}

/**
 * Awaits `operation` (rethrowing its error). Once `signal` aborts, waits at most `graceMs` more and
 * then gives up on it: false. An abandoned operation may still complete; that is harmless here.
 */
function awaitWithGrace(operation: Promise<void>, signal: AbortSignal, graceMs: number): Promise<boolean> {
  return new Promise<boolean>((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    const finish = () => {
      signal.removeEventListener('abort', onAbort);
      clearTimeout(timer);
    };
    const giveUp = () => {
      finish();
      resolve(false);
    };
    function onAbort() {
      if (graceMs <= 0) giveUp();
      else timer = setTimeout(giveUp, graceMs);
    }
    operation.then(
      () => {
        finish();
        resolve(true);
      },
      (error: unknown) => {
        finish();
        reject(error);
      },
    );
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
}
