import { lastEventOf } from '../../shared/event-store/last-event.ts';
import { logReadFailures, resubscribing } from '../../shared/event-store/resubscribe.ts';
import { type EventStore, isCaughtUp, type SubscriptionItem } from '../../shared/event-store/types.ts';
import type { SingletonTask } from '../../shared/leadership.ts';
import type { Logger } from '../../shared/logger.ts';
import { type BackoffOptions, backoffDelay, pause } from '../../shared/retry.ts';
import { eventDigest } from './digest.ts';
import { LogSealedSchema, SEALS_STREAM, type SealChainState, type SealedEntry, sealDecider } from './seal.ts';

export interface LogSealerOptions {
  events: EventStore;
  logger: Logger;
  /** Most events one seal covers: a range this long is sealed at once. Default 1,000. */
  sealEvery?: number;
  /** How long the first unsealed event waits for others before its range is sealed. Default 1 s. */
  sealAfterMs?: number;
  /** Backoff after a failed seal or a failed start (the chain is then read again). */
  retry?: BackoffOptions;
}

export const SEAL_EVERY = 1_000;
export const SEAL_AFTER_MS = 1_000;

const TIMED_OUT = Symbol('timed out');

/**
 * Seals the log: follows it from the last seal and, every `sealEvery` events or `sealAfterMs` after
 * the first unsealed one, appends a `LogSealed` to `audit-seals` listing each event's position and
 * digest, chained to the previous seal by its hash. Events of `audit-seals` are not in any range:
 * the chain covers them. Run it as a singleton (one sealer per log); should two ever run, each seal
 * is appended at the revision its chain was read at, so one of them fails, reads the chain again and
 * goes on from there.
 */
export class LogSealer implements SingletonTask {
  readonly #events: EventStore;
  readonly #logger: Logger;
  readonly #sealEvery: number;
  readonly #sealAfterMs: number;
  readonly #retry: BackoffOptions | undefined;

  constructor(options: LogSealerOptions) {
    this.#events = options.events;
    this.#logger = options.logger;
    this.#sealEvery = options.sealEvery ?? SEAL_EVERY;
    this.#sealAfterMs = options.sealAfterMs ?? SEAL_AFTER_MS;
    this.#retry = options.retry;
    if (!(this.#sealEvery >= 1)) throw new Error('sealEvery must be at least 1');
  }

  async run(signal: AbortSignal): Promise<void> {
    for (let failures = 1; !signal.aborted; failures++) {
      try {
        await this.#follow(signal);
      } catch (error) {
        if (signal.aborted) return;
        const retryInMs = backoffDelay(failures, this.#retry);
        this.#logger.warn(
          { err: error, retry_in_ms: retryInMs },
          'log sealer failed; reading the chain again',
        );
        await pause(retryInMs, signal);
      }
    }
  }

  /** Reads the head of the chain, then seals what follows it until stopped or until a seal fails. */
  async #follow(signal: AbortSignal): Promise<void> {
    let { chain, revision } = await this.#chainHead();
    this.#logger.info({ after: chain.last, seals: revision + 1 }, 'log sealer following the log');
    const pending: SealedEntry[] = [];
    // One timer per range, from its first event: racing each read against its own timer cost a timer
    // and two promises per event.
    const deadline = new Deadline(this.#sealAfterMs);
    const seal = async () => {
      const [event] = sealDecider.decide({ type: 'SealRange', events: pending }, chain);
      const result = await this.#events.append(SEALS_STREAM, [event!], {
        expected: revision < 0 ? 'no_stream' : revision,
        metadata: { actor: 'system' },
      });
      chain = sealDecider.evolve(chain, event!);
      revision = result.nextExpectedRevision;
      pending.length = 0;
      deadline.clear();
    };

    // Also ends the subscription when the loop ends on its own. A stop asked while the chain's head
    // was being read has already fired: it must still count.
    const stop = new AbortController();
    const onAbort = () => stop.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    if (signal.aborted) stop.abort();
    const items = resubscribing(this.#events, {
      after: chain.last,
      signal: stop.signal,
      retry: this.#retry,
      onFailure: logReadFailures(this.#logger, 'log sealer cannot read the log; resubscribing'),
    });
    let next: Promise<IteratorResult<SubscriptionItem>> = items.next();
    try {
      for (;;) {
        const result = pending.length === 0 ? await next : await Promise.race([next, deadline.reached()]);
        if (result === TIMED_OUT) {
          await seal();
          continue;
        }
        if (result.done) return;
        next = items.next();
        const item = result.value;
        if (isCaughtUp(item) || item.streamId === SEALS_STREAM) continue;
        if (pending.length === 0) deadline.start();
        pending.push([item.position, eventDigest(item)]);
        if (pending.length >= this.#sealEvery) await seal();
      }
    } finally {
      deadline.clear();
      signal.removeEventListener('abort', onAbort);
      stop.abort();
      await next.catch(() => undefined);
    }
  }

  async #chainHead(): Promise<{ chain: SealChainState; revision: number }> {
    const last = await lastEventOf(this.#events, SEALS_STREAM);
    if (last === undefined) return { chain: sealDecider.initialState(), revision: -1 };
    const parsed = LogSealedSchema.safeParse(last.data);
    if (last.type !== 'LogSealed' || !parsed.success)
      throw new Error(`the last event of ${SEALS_STREAM} (position ${last.position}) is not a seal`);
    const chain = sealDecider.evolve(sealDecider.initialState(), { type: 'LogSealed', data: parsed.data });
    return { chain, revision: last.revision };
  }
}

/**
 * The time limit of one range: `start` it at the range's first event, `clear` it once sealed.
 * `reached()` is asked anew for each wait and resolves with TIMED_OUT once the limit has passed. A
 * promise per wait, not one per range: every race adds its reactions to the promise it is given,
 * and one promise kept for a range of up to `sealEvery` events would hold them all until the seal.
 */
class Deadline {
  #timer: NodeJS.Timeout | undefined;
  #passed = false;
  #wake: ((value: typeof TIMED_OUT) => void) | undefined;

  constructor(private readonly ms: number) {}

  start(): void {
    this.clear();
    this.#timer = setTimeout(() => {
      this.#passed = true;
      this.#wake?.(TIMED_OUT);
    }, this.ms);
  }

  reached(): Promise<typeof TIMED_OUT> {
    if (this.#passed) return Promise.resolve(TIMED_OUT);
    return new Promise((resolve) => {
      this.#wake = resolve;
    });
  }

  clear(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#passed = false;
    this.#wake = undefined;
  }
}
