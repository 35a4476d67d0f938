/**
 * What the gateway's read models answer, typed by the server's own record types (type-only imports:
 * nothing of the server is bundled). Inputs are typed by the OpenAPI document instead (`gateway.ts`).
 */

export type { AccountRecord } from '../../../projections/accounts.ts';
export type { EnvListItem } from '../../../projections/env.ts';
export type { StudioRecord } from '../../../projections/studios.ts';
export type { TokenRecord } from '../../../projections/tokens.ts';
export type { Price } from '../../../services/ai/prices/price.ts';
export type { LimitRecord } from '../../../services/ai/rate-limits/read-model.ts';
export type { RouteView } from '../../../services/ai/routing/route-view.ts';
export type { VerifyReport } from '../../../services/audit/verify.ts';
export type { AuditEventView } from '../../../services/audit/view.ts';

// The modules of these two reach the server's HTTP types (through the usage events), which a
// browser build cannot check: their shapes are restated here, field for field.

/** A budget with where it stands (`services/studios/budget-view.ts`). */
export interface BudgetView {
  studio_id: string;
  token_id: string | null;
  amount_usd: number;
  window: 'day' | 'month' | 'total';
  mode: 'hard' | 'soft';
  spent_usd: number;
  reserved_usd: number;
  remaining_usd: number;
  resets_at: string | null;
  updated_at: string;
}

/** One group of `GET /v1/ai/usage` (`services/ai/usage/report.ts`), its dimensions as asked. */
export interface UsageGroup {
  model?: string | null;
  modality?: string | null;
  token_id?: string | null;
  day?: string | null;
  hour?: string | null;
  requests: number;
  failures: number;
  input_tokens: number;
  output_tokens: number;
  avg_latency_ms: number;
  cost_usd: number;
}

export interface UsageReport {
  studio_id: string;
  totals: {
    requests: number;
    failures: number;
    input_tokens: number;
    output_tokens: number;
    cost_usd: number;
  };
  items: UsageGroup[];
}
