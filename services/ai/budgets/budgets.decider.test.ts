import { describe, it } from 'vitest';
import { deciderSpec } from '../../../shared/decider-spec.ts';
import { type BudgetRule, budgetsDecider } from './budgets.ts';

const spec = deciderSpec(budgetsDecider);
const studioBudget: BudgetRule = {
  studioId: 's1',
  tokenId: null,
  amountMicroUsd: 5_000_000,
  window: 'month',
  mode: 'hard',
};
const tokenBudget: BudgetRule = { ...studioBudget, tokenId: 'tok_1', amountMicroUsd: 1_000_000 };

describe('budgets decider', () => {
  it('sets a budget for the studio and one for a token beside it', () => {
    spec
      .given([{ type: 'BudgetSet', data: studioBudget }])
      .when({ type: 'SetBudget', ...tokenBudget })
      .thenEmits([{ type: 'BudgetSet', data: tokenBudget }]);
  });

  it('replaces a budget whose amount, window or mode changes', () => {
    const softer = { ...studioBudget, mode: 'soft' as const };
    spec
      .given([{ type: 'BudgetSet', data: studioBudget }])
      .when({ type: 'SetBudget', ...softer })
      .thenEmits([{ type: 'BudgetSet', data: softer }]);
  });

  it('records nothing when the same budget is set again', () => {
    spec
      .given([{ type: 'BudgetSet', data: studioBudget }])
      .when({ type: 'SetBudget', ...studioBudget })
      .thenEmits([]);
  });

  it('removes a budget that is set', () => {
    spec
      .given([
        { type: 'BudgetSet', data: studioBudget },
        { type: 'BudgetSet', data: tokenBudget },
      ])
      .when({ type: 'RemoveBudget', studioId: 's1', tokenId: 'tok_1' })
      .thenEmits([{ type: 'BudgetRemoved', data: { studioId: 's1', tokenId: 'tok_1' } }]);
  });

  it('refuses to remove a budget that is not set', () => {
    spec
      .given([
        { type: 'BudgetSet', data: tokenBudget },
        { type: 'BudgetRemoved', data: { studioId: 's1', tokenId: 'tok_1' } },
      ])
      .when({ type: 'RemoveBudget', studioId: 's1', tokenId: 'tok_1' })
      .thenFails('not_found', /token tok_1 has no budget/);
  });
});
