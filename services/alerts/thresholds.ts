import type { BudgetRule } from '../ai/budgets/budgets.ts';
import { BUDGET_THRESHOLDS, type BudgetThresholdData } from './alerts.ts';

/** The thresholds of `rule` that `spentMicroUsd` in window `windowKey` has reached (none for a budget of 0). */
export function crossedThresholds(
  rule: BudgetRule,
  windowKey: string,
  spentMicroUsd: number,
): BudgetThresholdData[] {
  if (rule.amountMicroUsd <= 0) return [];
  return BUDGET_THRESHOLDS.filter((threshold) => spentMicroUsd * 100 >= threshold * rule.amountMicroUsd).map(
    (threshold) => ({
      studioId: rule.studioId,
      tokenId: rule.tokenId,
      window: rule.window,
      windowKey,
      threshold,
      spentMicroUsd,
      amountMicroUsd: rule.amountMicroUsd,
    }),
  );
}
