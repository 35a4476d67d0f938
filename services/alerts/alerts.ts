import { type Decider, unknownCase } from '../../shared/decider.ts';
import type { BudgetWindow } from '../ai/budgets/budgets.ts';
import type { AlertKind } from './webhooks.ts';

/** A studio's alerts: `alerts-<studio>`. Deciding against it is what keeps each alert to once. */
export const alertsStreamId = (studioId: string) => `alerts-${studioId}`;
export const ALERTS_CATEGORY = 'alerts';

/** The shares of a budget's amount whose crossing is an alert, in percent. */
export const BUDGET_THRESHOLDS = [50, 80, 100] as const;
export type BudgetThreshold = (typeof BUDGET_THRESHOLDS)[number];

export interface BudgetThresholdData {
  studioId: string;
  /** Null: the studio's own budget. */
  tokenId: string | null;
  window: BudgetWindow;
  /** `total`, `day:2026-11-24` or `month:2026-11`. */
  windowKey: string;
  threshold: BudgetThreshold;
  spentMicroUsd: number;
  amountMicroUsd: number;
}

export interface ErrorRateData {
  studioId: string;
  rate: number;
  requests: number;
  failures: number;
  /** ISO 8601 UTC; the window is [windowStart, windowEnd). */
  windowStart: string;
  windowEnd: string;
}

export type AlertEvent =
  | { type: 'BudgetThresholdCrossed'; data: BudgetThresholdData }
  | { type: 'ErrorRateExceeded'; data: ErrorRateData };

export const ALERT_EVENT_TYPES = [
  'BudgetThresholdCrossed',
  'ErrorRateExceeded',
] as const satisfies readonly AlertEvent['type'][];

/** The subscription name (`events` of a webhook) of each alert event. */
export const KIND_OF: Record<AlertEvent['type'], AlertKind> = {
  BudgetThresholdCrossed: 'budget_threshold',
  ErrorRateExceeded: 'error_rate',
};

export type AlertCommand =
  /** Every threshold `spentMicroUsd` has reached: those not alerted yet in the window are. */
  | { type: 'CrossBudgetThresholds'; crossed: BudgetThresholdData[] }
  | { type: 'ExceedErrorRate'; data: ErrorRateData };

/** The keys of the alerts raised: a threshold of one budget in one window, an error-rate window. */
export type AlertsState = ReadonlySet<string>;

export const budgetAlertKey = (d: Pick<BudgetThresholdData, 'tokenId' | 'windowKey' | 'threshold'>) =>
  `budget|${d.tokenId ?? ''}|${d.windowKey}|${d.threshold}`;
export const errorRateAlertKey = (d: Pick<ErrorRateData, 'windowStart'>) => `error_rate|${d.windowStart}`;

function decide(command: AlertCommand, state: AlertsState): AlertEvent[] {
  switch (command.type) {
    case 'CrossBudgetThresholds': {
      const fresh = new Set<string>();
      const events: AlertEvent[] = [];
      for (const data of command.crossed) {
        const key = budgetAlertKey(data);
        if (state.has(key) || fresh.has(key)) continue;
        fresh.add(key);
        events.push({ type: 'BudgetThresholdCrossed', data });
      }
      return events;
    }
    case 'ExceedErrorRate':
      return state.has(errorRateAlertKey(command.data))
        ? []
        : [{ type: 'ErrorRateExceeded', data: command.data }];
    default:
      return unknownCase('command', command);
  }
}

function evolve(state: AlertsState, event: AlertEvent): AlertsState {
  const next = new Set(state);
  switch (event.type) {
    case 'BudgetThresholdCrossed':
      next.add(budgetAlertKey(event.data));
      return next;
    case 'ErrorRateExceeded':
      next.add(errorRateAlertKey(event.data));
      return next;
    default:
      return unknownCase('event', event);
  }
}

export const alertsDecider: Decider<AlertCommand, AlertEvent, AlertsState> = {
  initialState: () => new Set(),
  decide,
  evolve,
};
