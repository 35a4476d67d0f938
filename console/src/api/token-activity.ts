/**
 * What the Tokens page shows of each token's use: its newest request in the request log, and its
 * spend in the current window (its budget's window if it has a budget the caller may read, else the
 * last 24 hours of the request log).
 */
import { gateway } from './gateway.ts';
import { unwrap } from './http.ts';
import type { BudgetView } from './records.ts';
import { listRequests, requestSummary } from './requests.ts';

export interface TokenActivity {
  /** When its newest request in the request log ended; null: none there. */
  lastUsed: string | null;
  /** What it spent in `window`; undefined when not known (not among the top spenders of the log). */
  spend?: { usd: number; window: 'day' | 'month' | 'total' | '24h' };
}

/** Words for a spend's window: "today", "in 24 h". */
export const SPEND_WINDOW: Record<NonNullable<TokenActivity['spend']>['window'], string> = {
  day: 'today (budget)',
  month: 'this month (budget)',
  total: 'in total (budget)',
  '24h': 'in the last 24 h',
};

/** How many tokens the summary ranks: one not among them spent less than the last, not nothing. */
const TOP_TOKENS = 10;

/**
 * The activity of `tokenIds` of a studio. `admin`: budgets are read too (a user token may not);
 * a user token names no studio (the gateway takes its own).
 */
export async function tokenActivity(
  studioId: string,
  tokenIds: readonly string[],
  admin: boolean,
): Promise<Map<string, TokenActivity>> {
  const studio = admin ? { studio_id: studioId } : {};
  const [newest, summary, budgets] = await Promise.all([
    Promise.all(tokenIds.map((token_id) => listRequests({ ...studio, token_id }, { limit: 1 }))),
    requestSummary(studio),
    admin
      ? gateway
          .GET('/v1/studios/budgets/list', { params: { query: { studio_id: studioId } } })
          .then((answer) => (unwrap(answer) as { items: BudgetView[] }).items)
      : Promise.resolve([] as BudgetView[]),
  ]);
  return new Map(
    tokenIds.map((id, i): [string, TokenActivity] => {
      const budget = budgets.find((b) => b.token_id === id);
      const top = summary.top_tokens.find((t) => t.token_id === id);
      const spend: TokenActivity['spend'] = budget
        ? { usd: budget.spent_usd, window: budget.window }
        : top
          ? { usd: top.cost_usd, window: '24h' }
          : summary.top_tokens.length < TOP_TOKENS
            ? { usd: 0, window: '24h' }
            : undefined;
      return [id, { lastUsed: newest[i]?.items[0]?.at ?? null, ...(spend ? { spend } : {}) }];
    }),
  );
}
