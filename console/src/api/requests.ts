/**
 * The request log (`GET /v1/ai/requests`, `/summary`, `/{id}`) as the console reads it. Its answers
 * are restated here field for field (`services/ai/requests/actions.ts`, `summary.ts`): the server's
 * modules reach its HTTP types, which a browser build cannot check.
 */
import { failureOf } from './failure.ts';
import { gateway } from './gateway.ts';
import { consoleFetch, unwrap } from './http.ts';

export type RequestOutcome = 'answered' | 'failed' | 'refused';

/** One try of a route's target. */
export interface RequestAttempt {
  model: string;
  outcome: 'answered' | 'moved_on' | 'failed';
  latencyMs: number;
  reason?: string;
}

/** One generation request of the log. */
export interface RequestItem {
  id: string;
  at: string;
  studio_id: string;
  token_id: string | null;
  /** The route it came to (`chat/completions`, `text` …). */
  format: string | null;
  /** What it asked for: a model or a route. */
  model: string | null;
  /** The model that answered (or last failed); null when refused before any. */
  target: string | null;
  modality: string;
  outcome: RequestOutcome;
  status: number;
  error_code: string | null;
  error_message: string | null;
  attempts: RequestAttempt[];
  latency_ms: number;
  ttfb_ms: number | null;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
  cache: 'hit' | 'miss' | null;
}

/** What was captured of a request's bodies (a studio capturing in `full`), or that its key is gone. */
export type RequestPayload =
  | null
  | { erased: true }
  | {
      erased: false;
      truncated: boolean;
      request: unknown;
      response: { status: number; content_type: string; body: unknown };
    };

export interface RequestDetail extends RequestItem {
  payload: RequestPayload;
}

export interface RequestPage {
  items: RequestItem[];
  next_cursor: number | null;
  /** Refusals beyond the per-minute bound, counted but not listed. */
  refusals_counted: number;
}

export interface RequestSummary {
  studio_id: string | null;
  from: string;
  to: string;
  requests: number;
  answered: number;
  failed: number;
  refused: number;
  error_rate: number;
  cost_usd: number;
  /** The log still holds the whole window. */
  complete: boolean;
  series: { hour: string; requests: number; failures: number; cost_usd: number }[];
  models: {
    model: string;
    requests: number;
    failures: number;
    p50_ms: number | null;
    p95_ms: number | null;
    cost_usd: number;
  }[];
  top_tokens: { token_id: string; requests: number; failures: number; cost_usd: number }[];
}

export interface RequestFilters {
  studio_id?: string;
  from?: string;
  to?: string;
  token_id?: string;
  model?: string;
  /** An outcome or an HTTP status. */
  status?: RequestOutcome | number;
  code?: string;
}

/** The query of `filters`, without the empty ones. */
const queryOf = <T extends RequestFilters>(filters: T): T =>
  Object.fromEntries(Object.entries(filters).filter(([, value]) => value !== undefined && value !== '')) as T;

/** A page of the log, newest first; `cursor` is the page before's `next_cursor`. */
export async function listRequests(
  filters: RequestFilters,
  page: { cursor?: number; limit?: number } = {},
): Promise<RequestPage> {
  const query = { ...queryOf(filters), ...page };
  return unwrap(await gateway.GET('/v1/ai/requests', { params: { query } })) as RequestPage;
}

/** One request with its captured bodies, if any. */
export async function requestDetail(id: string): Promise<RequestDetail> {
  return unwrap(await gateway.GET('/v1/ai/requests/{id}', { params: { path: { id } } })) as RequestDetail;
}

/** Totals, the hourly series, latency per model and top tokens of a window (default the last 24 h). */
export async function requestSummary(filters: Pick<RequestFilters, 'studio_id' | 'from' | 'to'>) {
  return unwrap(
    await gateway.GET('/v1/ai/requests/summary', { params: { query: queryOf(filters) } }),
  ) as RequestSummary;
}

/**
 * Downloads the newest `limit` requests matching `filters` as `requests.csv`. A plain link would
 * not carry the console's header, which the session cookie needs: fetched, then saved.
 */
export async function downloadRequestsCsv(filters: RequestFilters, name: string, limit = 500) {
  const query = new URLSearchParams({
    ...Object.fromEntries(Object.entries(queryOf(filters)).map(([k, v]) => [k, String(v)])),
    limit: String(limit),
    format: 'csv',
  });
  const response = await consoleFetch(`/v1/ai/requests?${query}`);
  if (!response.ok) throw failureOf(response, await response.json().catch(() => undefined));
  const url = URL.createObjectURL(await response.blob());
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  link.click();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** The time ranges the pages offer, as hours back from now. */
export const TIME_RANGES = [
  { id: '1h', label: 'Last hour', hours: 1 },
  { id: '24h', label: 'Last 24 hours', hours: 24 },
  { id: '7d', label: 'Last 7 days', hours: 7 * 24 },
  { id: '30d', label: 'Last 30 days', hours: 30 * 24 },
] as const;
export type TimeRangeId = (typeof TIME_RANGES)[number]['id'];

/** The start of a range, as the API takes it. */
export const rangeStart = (id: TimeRangeId, now = Date.now()) =>
  new Date(now - (TIME_RANGES.find((r) => r.id === id)?.hours ?? 24) * 3_600_000).toISOString();

/** "12%", "0.5%": a share as a person reads it. */
export const formatShare = (share: number) =>
  `${(share * 100).toLocaleString('en-US', { maximumFractionDigits: share < 0.1 ? 1 : 0 })}%`;

/** "230 ms", "1.4 s". */
export const formatMs = (ms: number | null | undefined) =>
  ms === null || ms === undefined
    ? '–'
    : ms < 1000
      ? `${Math.round(ms)} ms`
      : `${(ms / 1000).toLocaleString('en-US', { maximumFractionDigits: 1 })} s`;
