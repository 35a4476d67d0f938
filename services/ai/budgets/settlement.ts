import type { BudgetRule } from './budgets.ts';
import { type HeldHere, type LedgerState, reservedIn, spentIn } from './ledger.ts';
import { windowKey } from './windows.ts';

/**
 * A lease this close to its end counts as lapsed when its generation settles: another gateway,
 * whose clock may run ahead of this one's, may already have stopped counting it. A lease being
 * extended has two thirds of its length left at any time, far more than this.
 */
export const LAPSE_MARGIN_MS = 60_000;

export interface Settlement {
  reservationId: string;
  /** When the generation started: the windows it is charged to. */
  startedAt: string;
  costMicroUsd: number;
}

/**
 * How much of a settling generation's cost the hard budgets `rules` take. While its reservation is
 * counted by every process, it covers the cost whole. Once its lease has lapsed (its extensions were
 * not written in time: a store slower than a lease), another gateway may have reserved the room it
 * held: it is then charged at most what the budgets have left beside every other open reservation,
 * so that what was charged never passes a hard budget. The caller records the rest as uncharged.
 */
export function chargeableOnSettling(
  rules: readonly BudgetRule[],
  ledger: LedgerState,
  settlement: Settlement,
  now: Date,
  heldHere: HeldHere,
): number {
  const { reservationId, startedAt, costMicroUsd } = settlement;
  const reservation = ledger.open.get(reservationId);
  const lapsesAt = new Date(now.getTime() + LAPSE_MARGIN_MS).toISOString();
  if (reservation !== undefined && reservation.expiresAt > lapsesAt) return costMicroUsd;

  const others: LedgerState = { ...ledger, open: new Map(ledger.open) };
  others.open.delete(reservationId);
  const nowIso = now.toISOString();
  let left = costMicroUsd;
  for (const rule of rules) {
    const key = windowKey(rule.window, startedAt);
    const taken =
      spentIn(others, rule.tokenId, key) + reservedIn(others, rule.tokenId, key, nowIso, heldHere);
    left = Math.min(left, rule.amountMicroUsd - taken);
  }
  return Math.max(0, left);
}
