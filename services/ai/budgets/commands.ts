import { commandHandler } from '../../../shared/command-handler.ts';
import type { GatewayContext } from '../../../shared/gateway-context.ts';
import { type BudgetCommand, budgetsDecider, budgetsStreamId } from './budgets.ts';

/** The budgets aggregate's command handler: it answers once the gateway's read models show its write. */
export const budgetCommands = (gw: GatewayContext) =>
  commandHandler(budgetsDecider, {
    events: gw.events,
    streamOf: (command: BudgetCommand) => budgetsStreamId(command.studioId),
    readModels: gw.projections,
  });
