import { defineProjection } from '../../../shared/projections/projection.ts';
import { type Entries, entriesOf, mapOf } from '../../../shared/projections/snapshot.ts';
import { LEDGER_EVENT_TYPES, type UsageEvent } from '../usage/events.ts';
import { BUDGET_EVENT_TYPES, type BudgetEvent, type BudgetRule, budgetKey } from './budgets.ts';
import { copyLedger, emptyLedger, foldLedger, type LedgerState, reservedIn, spentIn } from './ledger.ts';
import { resetsAt, windowKey } from './windows.ts';

export type BudgetRecord = BudgetRule & { updated_at: string };

export interface StudioBudgets {
  /** Token id, or '' for the studio's own → its budget. */
  rules: Map<string, BudgetRecord>;
  /** Every studio's balances, budgeted or not: a budget set mid-window counts what was spent before it. */
  ledger: LedgerState;
}

/** Studio id → its budgets and balances. */
export type BudgetsState = Map<string, StudioBudgets>;

interface LedgerSnapshot {
  revision: number;
  spent: Entries<number>;
  open: Entries<LedgerState['open'] extends Map<string, infer R> ? R : never>;
  exceeded: string[];
  latestDay: string;
}
type BudgetsSnapshot = Entries<{ rules: Entries<BudgetRecord>; ledger: LedgerSnapshot }>;

function studio(state: BudgetsState, studioId: string): StudioBudgets {
  let found = state.get(studioId);
  if (!found) {
    found = { rules: new Map(), ledger: emptyLedger() };
    state.set(studioId, found);
  }
  return found;
}

export const budgetsProjection = defineProjection<BudgetsState, BudgetEvent | UsageEvent>({
  name: 'budgets',
  schemaVersion: 1,
  handles: [...BUDGET_EVENT_TYPES, ...LEDGER_EVENT_TYPES],
  initialState: () => new Map(),
  toSnapshot: (state): BudgetsSnapshot =>
    [...state].map(([id, { rules, ledger }]) => [
      id,
      {
        rules: entriesOf(rules),
        ledger: {
          revision: ledger.revision,
          spent: entriesOf(ledger.spent),
          open: entriesOf(ledger.open),
          exceeded: [...ledger.exceeded],
          latestDay: ledger.latestDay,
        },
      },
    ]),
  fromSnapshot: (snapshot) =>
    new Map(
      [...mapOf<BudgetsSnapshot[number][1]>(snapshot, 'budgets')].map(([id, { rules, ledger }]) => [
        id,
        {
          rules: mapOf(rules, 'budgets'),
          ledger: {
            revision: ledger.revision,
            spent: mapOf(ledger.spent, 'budgets'),
            open: mapOf(ledger.open, 'budgets'),
            exceeded: new Set(ledger.exceeded),
            latestDay: ledger.latestDay,
          },
        },
      ]),
    ),
  apply(state, event) {
    switch (event.type) {
      case 'BudgetSet':
        studio(state, event.data.studioId).rules.set(budgetKey(event.data.tokenId), {
          ...event.data,
          updated_at: event.createdAt,
        });
        return;
      case 'BudgetRemoved':
        studio(state, event.data.studioId).rules.delete(budgetKey(event.data.tokenId));
        return;
      default: {
        const { ledger } = studio(state, event.data.studioId);
        foldLedger(ledger, event, event.createdAt);
        ledger.revision = event.revision;
      }
    }
  },
});

/** Where a budget stands at `now`, in micro-dollars: spent and reserved in its window, what is left. */
export function standingOf(
  state: BudgetsState,
  rule: BudgetRule,
  now: string,
  unwritten: readonly UsageEvent[] = [],
) {
  let ledger = state.get(rule.studioId)?.ledger ?? emptyLedger();
  if (unwritten.length > 0) {
    ledger = copyLedger(ledger);
    for (const event of unwritten) foldLedger(ledger, event, now);
  }
  const key = windowKey(rule.window, now);
  const spent = spentIn(ledger, rule.tokenId, key);
  const reserved = reservedIn(ledger, rule.tokenId, key, now);
  // A soft budget may be spent past its amount; what remains is then nothing, not a debt.
  const remaining = Math.max(0, rule.amountMicroUsd - spent - reserved);
  return { spent, reserved, remaining, resetsAt: resetsAt(rule.window, now) };
}
