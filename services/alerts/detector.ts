import { type AggregateCache, handleCommand } from '../../shared/decider.ts';
import { logReadFailures, resubscribing } from '../../shared/event-store/resubscribe.ts';
import { type EventStore, isCaughtUp, type StoredEvent } from '../../shared/event-store/types.ts';
import { oneRunAtATime, type SingletonTask } from '../../shared/leadership.ts';
import type { Logger } from '../../shared/logger.ts';
import type { CheckpointStore } from '../../shared/projections/checkpoints.ts';
import { type BackoffOptions, backoffDelay, pause } from '../../shared/retry.ts';
import type { BudgetRule } from '../ai/budgets/budgets.ts';
import { spentIn } from '../ai/budgets/ledger.ts';
import type { BudgetsState } from '../ai/budgets/read-model.ts';
import { windowKey } from '../ai/budgets/windows.ts';
import type { RefusalData } from '../ai/requests/events.ts';
import type { GenerationData } from '../ai/usage/events.ts';
import {
  type AlertCommand,
  type AlertsState,
  alertsDecider,
  alertsStreamId,
  type BudgetThresholdData,
  budgetAlertKey,
} from './alerts.ts';
import type { ErrorRateRule } from './error-rate.ts';
import { type Counted, countRequest, type ErrorWindows, type WindowCount } from './error-window.ts';
import { crossedThresholds } from './thresholds.ts';

export const DETECTOR_CHECKPOINT = 'alerts-detector';
const CHECKPOINT_VERSION = 1;
const SAVE_EVERY_MS = 1_000;

/**
 * Which requests count against the error rate: every generation that failed, and the refusals that
 * are the gateway's or an upstream's doing (5xx) or a rate limit (429); a refusal for a bad body, an
 * unknown model or a budget (4xx) is the client's and counts as a request that did not fail.
 */
export function countedAs(event: StoredEvent): Counted | undefined {
  switch (event.type) {
    case 'GenerationCompleted':
      return 'ok';
    case 'GenerationFailed':
      return 'failure';
    case 'GenerationRefused': {
      const { status } = event.data as RefusalData;
      return status >= 500 || status === 429 ? 'failure' : 'ok';
    }
    default:
      return undefined;
  }
}

export interface AlertDetectorOptions {
  events: EventStore;
  checkpoints: CheckpointStore;
  logger: Logger;
  /** The budgets read model, at least at `position` once `waitFor(position)` resolved. */
  budgets: () => BudgetsState;
  waitFor: (position: number) => Promise<boolean>;
  errorRateOf: (studioId: string) => ErrorRateRule | undefined;
  cache: AggregateCache<AlertsState>;
  retry?: BackoffOptions;
}

interface DetectorSnapshot {
  windows: [string, WindowCount][];
}

/**
 * Decides alerts by following the log (usage and refusals), one process only (`gw.singleton`):
 * budget thresholds crossed and error rates exceeded, each appended to `alerts-<studio>` through its
 * decider, which refuses an alert already raised. Checkpointed with the error-rate windows, saved
 * only between two events: a restart replays from there, and an alert decided again is not raised
 * again (the decider), so none is lost and none repeated.
 */
export class AlertDetector implements SingletonTask {
  #position = 0;
  #windows: ErrorWindows = new Map();
  /** Alerts known raised, so a generation past a threshold does not read the alert stream again. */
  #known = new Set<string>();
  /** An event is being handled: its state is not one to save. */
  #busy = false;
  #saved = -1;
  readonly run = oneRunAtATime((signal) => this.#follow(signal));

  constructor(private readonly o: AlertDetectorOptions) {}

  async #follow(signal: AbortSignal): Promise<void> {
    const { events, checkpoints, logger } = this.o;
    const stored = await checkpoints.load<DetectorSnapshot>(DETECTOR_CHECKPOINT);
    if (stored && stored.schemaVersion === CHECKPOINT_VERSION) {
      this.#position = stored.position;
      this.#windows = new Map(stored.state?.windows ?? []);
    } else {
      // The first start decides from now on: the past's alerts are not raised after the fact.
      this.#position = await events.headPosition();
      this.#windows = new Map();
    }
    this.#known = new Set();
    await this.#save();
    const timer = setInterval(() => void this.#save(), SAVE_EVERY_MS);
    timer.unref();
    try {
      for await (const item of resubscribing(events, {
        after: this.#position,
        signal,
        categories: ['usage', 'refusals'],
        retry: this.o.retry,
        onFailure: logReadFailures(logger, 'alert detector cannot read the log; retrying'),
      })) {
        if (isCaughtUp(item)) {
          this.#position = Math.max(this.#position, item.position);
          continue;
        }
        this.#busy = true;
        const handled = await this.#handle(item, signal);
        if (!handled) return; // stopped mid-event: the last saved state is the one to resume from
        this.#position = item.position;
        this.#busy = false;
      }
    } finally {
      clearInterval(timer);
      if (!this.#busy) await this.#save();
      this.#busy = false;
    }
  }

  /** False when stopped before the event's alerts were decided. */
  async #handle(event: StoredEvent, signal: AbortSignal): Promise<boolean> {
    const counted = countedAs(event);
    if (counted === undefined) return true;
    const { studioId } = event.data as { studioId: string };
    if (event.type !== 'GenerationRefused') {
      const crossed = await this.#budgetThresholds(event as StoredEvent<string, GenerationData>, signal);
      if (signal.aborted) return false;
      if (crossed.length > 0) {
        const ok = await this.#decide(studioId, { type: 'CrossBudgetThresholds', crossed }, signal);
        if (!ok) return false;
        for (const data of crossed) this.#known.add(`${studioId}|${budgetAlertKey(data)}`);
      }
    }
    const rule = this.o.errorRateOf(studioId);
    if (rule && rule.windowMinutes > 0) {
      const exceeded = countRequest(this.#windows, rule, event.createdAt, counted);
      if (exceeded) return this.#decide(studioId, { type: 'ExceedErrorRate', data: exceeded }, signal);
    }
    return true;
  }

  /** The thresholds of the studio's and the token's budgets that the spend now stands past, not known raised. */
  async #budgetThresholds(
    event: StoredEvent<string, GenerationData>,
    signal: AbortSignal,
  ): Promise<BudgetThresholdData[]> {
    const { studioId, tokenId } = event.data;
    const budgets = this.o.budgets().get(studioId);
    if (!budgets || budgets.rules.size === 0 || !(event.data.costMicroUsd > 0)) return [];
    // The read model reflects this event (or later ones: spend in a window only grows).
    while (!(await this.o.waitFor(event.position)) && !signal.aborted);
    const current = this.o.budgets().get(studioId) ?? budgets;
    const at = event.data.startedAt ?? event.createdAt;
    const rules = [current.rules.get(''), tokenId === null ? undefined : current.rules.get(tokenId)].filter(
      (rule): rule is BudgetRule & { updated_at: string } => rule !== undefined,
    );
    return rules.flatMap((rule) => {
      const key = windowKey(rule.window, at);
      return crossedThresholds(rule, key, spentIn(current.ledger, rule.tokenId, key)).filter(
        (data) => !this.#known.has(`${studioId}|${budgetAlertKey(data)}`),
      );
    });
  }

  /** Appends what the alert stream's decider decides; a failed append is tried again. False when stopped. */
  async #decide(studioId: string, command: AlertCommand, signal: AbortSignal): Promise<boolean> {
    for (let failures = 0; !signal.aborted; ) {
      try {
        await handleCommand(
          this.o.events,
          alertsStreamId(studioId),
          alertsDecider,
          command,
          { actor: 'gateway' },
          this.o.cache,
        );
        return true;
      } catch (error) {
        failures++;
        this.o.logger.warn({ err: error, studioId, failures }, 'an alert could not be recorded; retrying');
        await pause(backoffDelay(failures, this.o.retry), signal);
      }
    }
    return false;
  }

  async #save(): Promise<void> {
    if (this.#busy || this.#position === this.#saved) return;
    const position = this.#position;
    await this.o.checkpoints
      .save<DetectorSnapshot>(DETECTOR_CHECKPOINT, {
        schemaVersion: CHECKPOINT_VERSION,
        position,
        state: { windows: [...this.#windows] },
      })
      .then(() => {
        this.#saved = position;
      })
      .catch((error: unknown) => this.o.logger.warn({ err: error }, 'alert detector checkpoint not saved'));
  }
}
