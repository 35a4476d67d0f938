import { accountsProjection } from '../../projections/accounts.ts';
import { budgetsProjection } from '../../projections/budgets.ts';
import { consoleSessionsProjection } from '../../projections/console-sessions.ts';
import { envProjection } from '../../projections/env.ts';
import { jobsProjection } from '../../projections/jobs.ts';
import { limitsProjection } from '../../projections/limits.ts';
import { pricesProjection } from '../../projections/prices.ts';
import { routesProjection } from '../../projections/routes.ts';
import { studiosProjection } from '../../projections/studios.ts';
import { tokensProjection } from '../../projections/tokens.ts';
import { usageProjection } from '../../projections/usage.ts';
import type { AnyProjection } from '../../shared/projections/projection.ts';

/** Every read model the gateway keeps in memory, in the order `projections rebuild` lists them. */
export const GATEWAY_PROJECTIONS: readonly AnyProjection[] = [
  studiosProjection,
  tokensProjection,
  envProjection,
  usageProjection,
  jobsProjection,
  accountsProjection,
  pricesProjection,
  budgetsProjection,
  limitsProjection,
  routesProjection,
  consoleSessionsProjection,
];
