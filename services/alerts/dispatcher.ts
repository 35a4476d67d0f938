import { type AggregateCache, handleCommand, loadAggregate } from '../../shared/decider.ts';
import { logReadFailures, resubscribing } from '../../shared/event-store/resubscribe.ts';
import { type EventStore, isCaughtUp, type StoredEvent } from '../../shared/event-store/types.ts';
import { oneRunAtATime, type SingletonTask } from '../../shared/leadership.ts';
import type { Logger } from '../../shared/logger.ts';
import type { CheckpointStore } from '../../shared/projections/checkpoints.ts';
import { type BackoffOptions, backoffDelay, pause } from '../../shared/retry.ts';
import { ALERT_EVENT_TYPES, ALERTS_CATEGORY, type AlertEvent, KIND_OF } from './alerts.ts';
import {
  type AttemptOutcome,
  type DeliveriesState,
  deliveriesDecider,
  deliveriesStreamId,
} from './deliveries.ts';
import type { AlertPayload } from './sender.ts';
import type { Webhook } from './webhooks.ts';

export const DISPATCHER_CHECKPOINT = 'alerts-delivery';
const CHECKPOINT_VERSION = 1;
const SAVE_EVERY_MS = 1_000;

export interface DeliverySettings {
  /** Attempts of one alert to one webhook before it is given up. */
  maxAttempts: number;
  /** Backoff between attempts (`shared/retry.ts`). */
  retry: BackoffOptions;
}

export interface AlertDispatcherOptions {
  events: EventStore;
  checkpoints: CheckpointStore;
  logger: Logger;
  /** The webhooks as they stand now. */
  webhooks: () => Iterable<Webhook>;
  /** Read at every attempt, so a change applies to the deliveries under way. */
  settings: () => DeliverySettings;
  /** Sends one attempt (`sendAlert`). */
  send: (
    webhook: Webhook,
    studioId: string,
    payload: AlertPayload,
    signal: AbortSignal,
  ) => Promise<{
    outcome: AttemptOutcome;
    latencyMs: number;
  }>;
  cache: AggregateCache<DeliveriesState>;
  /** Backoff between failed reads or appends. */
  retry?: BackoffOptions;
}

/** The webhooks an alert goes to: those of its studio or of every studio, subscribed to its kind. */
export const webhooksFor = (webhooks: Iterable<Webhook>, event: Pick<StoredEvent, 'type' | 'data'>) =>
  [...webhooks].filter(
    (w) =>
      (w.studioId === null || w.studioId === (event.data as AlertEvent['data']).studioId) &&
      w.events.includes(KIND_OF[event.type as AlertEvent['type']]),
  );

const isAlert = (type: string): type is AlertEvent['type'] =>
  (ALERT_EVENT_TYPES as readonly string[]).includes(type);

/**
 * Delivers every alert to the webhooks it matches, in log order, one alert at a time (its webhooks
 * in parallel), in one process only (`gw.singleton`). Each attempt is recorded in the webhook's
 * `deliveries-<webhook>` stream through its decider, which ends the delivery with `WebhookDelivered`
 * or, after `maxAttempts`, `WebhookGaveUp`; between attempts it waits out a backoff. The checkpoint
 * moves past an alert only once every delivery of it is over: after a restart the alert is taken
 * again, and only its webhooks whose delivery is not over are sent it (at least once; twice only
 * when the process died between a receiver's 2xx and its record).
 */
export class AlertDispatcher implements SingletonTask {
  readonly run = oneRunAtATime((signal) => this.#follow(signal));

  constructor(private readonly o: AlertDispatcherOptions) {}

  async #follow(signal: AbortSignal): Promise<void> {
    const { events, checkpoints, logger } = this.o;
    // No checkpoint yet: every alert of the log (there are none before the first start).
    let position = (await checkpoints.load(DISPATCHER_CHECKPOINT))?.position ?? 0;
    let saved = position;
    const save = async () => {
      if (position === saved) return;
      const at = position;
      await checkpoints
        .save(DISPATCHER_CHECKPOINT, { schemaVersion: CHECKPOINT_VERSION, position: at })
        .then(() => {
          saved = at;
        })
        .catch((error: unknown) => logger.warn({ err: error }, 'alert delivery checkpoint not saved'));
    };
    const timer = setInterval(() => void save(), SAVE_EVERY_MS);
    timer.unref();
    try {
      for await (const item of resubscribing(events, {
        after: position,
        signal,
        categories: [ALERTS_CATEGORY],
        retry: this.o.retry,
        onFailure: logReadFailures(logger, 'alert delivery cannot read the log; retrying'),
      })) {
        if (isCaughtUp(item)) {
          // Read past other streams only: saved by the timer, not at every wake-up.
          position = Math.max(position, item.position);
          continue;
        }
        if (isAlert(item.type)) {
          const targets = webhooksFor(this.o.webhooks(), item);
          const over = await Promise.all(targets.map((webhook) => this.#deliver(webhook, item, signal)));
          if (!over.every(Boolean)) return; // stopped: this alert is taken again at the next start
        }
        position = item.position;
        await save();
      }
    } finally {
      clearInterval(timer);
      // The position is never past an alert not over yet: saving it is always right.
      await save();
    }
  }

  /** Tries until delivered or given up (true), or stopped (false). */
  async #deliver(webhook: Webhook, event: StoredEvent, signal: AbortSignal): Promise<boolean> {
    const studioId = (event.data as AlertEvent['data']).studioId;
    const payload: AlertPayload = {
      id: event.id,
      type: event.type,
      created_at: event.createdAt,
      data: event.data,
    };
    const stream = deliveriesStreamId(webhook.id);
    while (!signal.aborted) {
      // Removed or changed meanwhile: the webhook as it is now, or no more attempts.
      const current = [...this.o.webhooks()].find((w) => w.id === webhook.id);
      if (!current || webhooksFor([current], event).length === 0) return true;
      const before = await this.#retrying(
        () => loadAggregate(this.o.events, stream, deliveriesDecider, this.o.cache.get(stream)),
        signal,
      );
      if (before === undefined) return false;
      this.o.cache.set(stream, before);
      const standing = before.state.get(event.id);
      if (standing?.done) return true;
      const { maxAttempts, retry } = this.o.settings();
      const { outcome, latencyMs } = await this.o.send(current, studioId, payload, signal);
      if (signal.aborted) return false;
      const result = await this.#retrying(
        () =>
          handleCommand(
            this.o.events,
            stream,
            deliveriesDecider,
            {
              type: 'RecordAttempt',
              webhookId: webhook.id,
              eventId: event.id,
              outcome,
              latencyMs,
              maxAttempts,
            },
            { actor: 'gateway', causationId: event.id },
            this.o.cache,
          ),
        signal,
      );
      if (result === undefined) return false;
      const now = result.state.get(event.id);
      if (now?.done) return true;
      await pause(backoffDelay(now?.attempts ?? 1, retry), signal);
    }
    return false;
  }

  /** `work` until it succeeds (a failed read or append of the log is tried again), or undefined once stopped. */
  async #retrying<T>(work: () => Promise<T>, signal: AbortSignal): Promise<T | undefined> {
    for (let failures = 0; !signal.aborted; ) {
      try {
        return await work();
      } catch (error) {
        failures++;
        this.o.logger.warn({ err: error, failures }, 'an alert delivery could not be recorded; retrying');
        await pause(backoffDelay(failures, this.o.retry), signal);
      }
    }
    return undefined;
  }
}
