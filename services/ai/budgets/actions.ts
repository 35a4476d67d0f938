import { z } from 'zod';
import type { GatewayContext } from '../../../shared/gateway-context.ts';
import { defineAction } from '../../../shared/http/action.ts';
import { studioScope } from '../../studios/scope.ts';
import { studioId } from '../../studios/studio-id.ts';
import type { UsageRecorder } from '../usage/recorder.ts';
import { BUDGET_MODES, BUDGET_WINDOWS } from './budgets.ts';
import { budgetCommands } from './commands.ts';
import { type BudgetRecord, budgetsProjection } from './read-model.ts';
import { budgetView } from './view.ts';

const admin = ['admin'] as const;
const tokenId = z.string().min(1).max(100);

/** `/v1/studios/budgets/*`: spending caps per studio and per token, in USD, per UTC day, month or in total. */
export function budgetActions(gw: GatewayContext, usage: Pick<UsageRecorder, 'unwrittenOf'>) {
  const budgets = () => gw.projections.state(budgetsProjection);
  const view = (rule: BudgetRecord) => budgetView(budgets(), rule, usage.unwrittenOf(rule.studioId));

  const run = budgetCommands(gw);

  const owner = { studio_id: studioId, token_id: tokenId.optional() };

  return [
    defineAction({
      service: 'studios',
      action: 'budgets/set',
      method: 'POST',
      identities: admin,
      summary: 'Set the budget of a studio or of one of its tokens (USD per UTC day, month or in total)',
      input: z.strictObject({
        ...owner,
        amount_usd: z.number().nonnegative().max(1_000_000_000),
        window: z.enum(BUDGET_WINDOWS),
        mode: z.enum(BUDGET_MODES),
      }),
      handler: async (input, ctx) => {
        studioScope(gw, input.studio_id, input.token_id);
        await run(
          {
            type: 'SetBudget',
            studioId: input.studio_id,
            tokenId: input.token_id ?? null,
            amountMicroUsd: Math.round(input.amount_usd * 1_000_000),
            window: input.window,
            mode: input.mode,
          },
          ctx.metadata,
        );
        return view(
          budgets()
            .get(input.studio_id)!
            .rules.get(input.token_id ?? '')!,
        );
      },
    }),
    defineAction({
      service: 'studios',
      action: 'budgets/list',
      method: 'GET',
      identities: admin,
      summary: "A studio's budgets with what is spent, reserved and left in the current window",
      input: z.strictObject({ studio_id: studioId }),
      handler: ({ studio_id }) => {
        studioScope(gw, studio_id, undefined);
        const rules = [...(budgets().get(studio_id)?.rules.values() ?? [])];
        rules.sort((a, b) => (a.tokenId ?? '').localeCompare(b.tokenId ?? ''));
        return { items: rules.map(view) };
      },
    }),
    defineAction({
      service: 'studios',
      action: 'budgets/remove',
      method: 'POST',
      identities: admin,
      summary: 'Remove the budget of a studio or of one of its tokens',
      input: z.strictObject(owner),
      handler: async ({ studio_id, token_id }, ctx) => {
        studioScope(gw, studio_id, undefined);
        await run({ type: 'RemoveBudget', studioId: studio_id, tokenId: token_id ?? null }, ctx.metadata);
        return { removed: true, studio_id, token_id: token_id ?? null };
      },
    }),
  ];
}
