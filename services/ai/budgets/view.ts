import type { UsageEvent } from '../usage/events.ts';
import { type BudgetRecord, type BudgetsState, standingOf } from './read-model.ts';

const usd = (micro: number) => micro / 1_000_000;

/**
 * A budget as clients see it, with where it stands now. `unwritten`: the studio's reservations this
 * process decided and has not written yet, open as well.
 */
export function budgetView(state: BudgetsState, rule: BudgetRecord, unwritten: readonly UsageEvent[]) {
  const standing = standingOf(state, rule, new Date().toISOString(), unwritten);
  return {
    studio_id: rule.studioId,
    token_id: rule.tokenId,
    amount_usd: usd(rule.amountMicroUsd),
    window: rule.window,
    mode: rule.mode,
    spent_usd: usd(standing.spent),
    reserved_usd: usd(standing.reserved),
    remaining_usd: usd(standing.remaining),
    resets_at: standing.resetsAt,
    updated_at: rule.updated_at,
  };
}
export type BudgetView = ReturnType<typeof budgetView>;
