import { type Decider, unknownCase } from '../../../shared/decider.ts';
import { DomainError } from '../../../shared/errors.ts';

/** A studio's budgets, its own and its tokens', in one stream: `budgets-<studio>`. */
export const budgetsStreamId = (studioId: string) => `budgets-${studioId}`;

export const BUDGET_WINDOWS = ['day', 'month', 'total'] as const;
export type BudgetWindow = (typeof BUDGET_WINDOWS)[number];
export const BUDGET_MODES = ['hard', 'soft'] as const;
export type BudgetMode = (typeof BUDGET_MODES)[number];

export interface BudgetRule {
  studioId: string;
  /** Null: the budget of the whole studio. */
  tokenId: string | null;
  amountMicroUsd: number;
  window: BudgetWindow;
  mode: BudgetMode;
}

export type BudgetEvent =
  | { type: 'BudgetSet'; data: BudgetRule }
  | { type: 'BudgetRemoved'; data: { studioId: string; tokenId: string | null } };

export type BudgetCommand =
  | ({ type: 'SetBudget' } & BudgetRule)
  | { type: 'RemoveBudget'; studioId: string; tokenId: string | null };

export const BUDGET_EVENT_TYPES = [
  'BudgetSet',
  'BudgetRemoved',
] as const satisfies readonly BudgetEvent['type'][];

/** Token id, or '' for the studio's own budget → the budget. */
export type BudgetsState = ReadonlyMap<string, BudgetRule>;

export const budgetKey = (tokenId: string | null) => tokenId ?? '';

function decide(command: BudgetCommand, state: BudgetsState): BudgetEvent[] {
  switch (command.type) {
    case 'SetBudget': {
      const { type: _type, ...rule } = command;
      const current = state.get(budgetKey(rule.tokenId));
      if (current && sameRule(current, rule)) return [];
      return [{ type: 'BudgetSet', data: rule }];
    }
    case 'RemoveBudget': {
      if (!state.has(budgetKey(command.tokenId))) {
        const whose = command.tokenId === null ? `studio ${command.studioId}` : `token ${command.tokenId}`;
        throw new DomainError('not_found', `${whose} has no budget`);
      }
      return [{ type: 'BudgetRemoved', data: { studioId: command.studioId, tokenId: command.tokenId } }];
    }
    default:
      return unknownCase('command', command);
  }
}

const sameRule = (a: BudgetRule, b: BudgetRule) =>
  a.amountMicroUsd === b.amountMicroUsd && a.window === b.window && a.mode === b.mode;

function evolve(state: BudgetsState, event: BudgetEvent): BudgetsState {
  const next = new Map(state);
  switch (event.type) {
    case 'BudgetSet':
      next.set(budgetKey(event.data.tokenId), event.data);
      return next;
    case 'BudgetRemoved':
      next.delete(budgetKey(event.data.tokenId));
      return next;
    default:
      return unknownCase('event', event);
  }
}

export const budgetsDecider: Decider<BudgetCommand, BudgetEvent, BudgetsState> = {
  initialState: () => new Map(),
  decide,
  evolve,
};
