import { accountsProjection } from '../../projections/accounts.ts';
import { consoleSessionsProjection } from '../../projections/console-sessions.ts';
import { envProjection } from '../../projections/env.ts';
import { jobsProjection } from '../../projections/jobs.ts';
import { pricesProjection } from '../../projections/prices.ts';
import { routesProjection } from '../../projections/routes.ts';
import { studiosProjection } from '../../projections/studios.ts';
import { tokensProjection } from '../../projections/tokens.ts';
import { usageProjection } from '../../projections/usage.ts';
import type { AnyProjection } from '../../shared/projections/projection.ts';
import { budgetsProjection } from '../ai/budgets/read-model.ts';
import { connectionsProjection } from '../ai/connections/read-model.ts';
import { captureProjection } from '../ai/payloads/read-model.ts';
import { limitsProjection } from '../ai/rate-limits/read-model.ts';
import { requestsProjection } from '../ai/requests/read-model.ts';
import { alertHistoryProjection, alertSettingsProjection } from '../alerts/read-model.ts';
import { mcpAccessProjection } from '../mcp/access.ts';
import { mcpServersProjection } from '../mcp/servers/read-model.ts';

/** Every read model the gateway keeps in memory, in the order `projections rebuild` lists them. */
export const GATEWAY_PROJECTIONS: readonly AnyProjection[] = [
  studiosProjection,
  tokensProjection,
  envProjection,
  usageProjection,
  jobsProjection,
  accountsProjection,
  pricesProjection,
  connectionsProjection,
  budgetsProjection,
  limitsProjection,
  routesProjection,
  consoleSessionsProjection,
  requestsProjection,
  captureProjection,
  mcpServersProjection,
  mcpAccessProjection,
  alertSettingsProjection,
  alertHistoryProjection,
];
