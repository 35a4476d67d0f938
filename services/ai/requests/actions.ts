import { z } from 'zod';
import { toCsv } from '../../../shared/csv.ts';
import { ApiError } from '../../../shared/errors.ts';
import { defineAction } from '../../../shared/http/action.ts';
import { studioId } from '../../studios/studio-id.ts';
import type { AiDeps } from '../deps.ts';
import { type RequestRow, requestsProjection } from './read-model.ts';
import { summarize } from './summary.ts';

const isoTime = z.iso.datetime({ offset: true, message: 'an ISO 8601 time, e.g. 2026-11-29T10:00:00Z' });
const OUTCOMES = ['answered', 'failed', 'refused'] as const;
const DAY_MS = 86_400_000;

const ListInput = z.strictObject({
  studio_id: studioId.optional(),
  from: isoTime.optional(),
  to: isoTime.optional(),
  token_id: z.string().min(1).max(100).optional(),
  /** The model or route asked for, or the model that answered. */
  model: z.string().min(1).max(300).optional(),
  /** An HTTP status (`429`), or an outcome: answered, failed, refused. */
  status: z.union([z.enum(OUTCOMES), z.coerce.number().int().min(100).max(599)]).optional(),
  code: z.string().min(1).max(100).optional(),
  /** The `next_cursor` of the page before. */
  cursor: z.coerce.number().int().positive().optional(),
  limit: z.coerce.number().int().min(1).max(500).default(50),
  format: z.enum(['json', 'csv']).optional(),
});
type ListInput = z.infer<typeof ListInput>;

const CSV_COLUMNS = [
  'at',
  'id',
  'studio_id',
  'token_id',
  'format',
  'model',
  'target',
  'outcome',
  'status',
  'error_code',
  'error_message',
  'latency_ms',
  'ttfb_ms',
  'input_tokens',
  'output_tokens',
  'cost_usd',
  'cache',
  'attempts',
] as const;

/** A row as the API shows it: cost in dollars. */
export const requestView = ({ cost_micro_usd, seq: _seq, ...row }: RequestRow) => ({
  ...row,
  cost_usd: cost_micro_usd / 1_000_000,
});

function matches(row: RequestRow, input: ListInput): boolean {
  if (input.cursor !== undefined && row.seq >= input.cursor) return false;
  if (input.from !== undefined && Date.parse(row.at) < Date.parse(input.from)) return false;
  if (input.to !== undefined && Date.parse(row.at) > Date.parse(input.to)) return false;
  if (input.token_id !== undefined && row.token_id !== input.token_id) return false;
  if (input.model !== undefined && row.model !== input.model && row.target !== input.model) return false;
  if (input.code !== undefined && row.error_code !== input.code) return false;
  if (typeof input.status === 'number' && row.status !== input.status) return false;
  if (typeof input.status === 'string' && row.outcome !== input.status) return false;
  return true;
}

/** The newest `limit` rows of `rows` (oldest first) that match, newest first. */
function newest(rows: readonly RequestRow[], input: ListInput): RequestRow[] {
  const found: RequestRow[] = [];
  for (let i = rows.length - 1; i >= 0 && found.length < input.limit; i--)
    if (matches(rows[i]!, input)) found.push(rows[i]!);
  return found;
}

/**
 * `GET /v1/ai/requests`: the request log, newest first, a page at a time (`next_cursor`); JSON or
 * CSV. A user sees its own studio's; an admin one studio's or every studio's.
 * `GET /v1/ai/requests/:id`: one request.
 */
export function requestActions({ gw, payloads }: AiDeps) {
  const state = () => gw.projections.state(requestsProjection);
  return [
    defineAction({
      service: 'ai',
      action: 'requests',
      method: 'GET',
      identities: ['admin', 'user'],
      summary: 'The request log: every generation request, answered, failed or refused (newest first)',
      produces: ['application/json', 'text/csv'],
      input: ListInput,
      handler: (input, ctx) => {
        if (input.from && input.to && Date.parse(input.from) > Date.parse(input.to))
          throw new ApiError('validation_failed', 'from must not be after to', { param: 'from' });
        const studio = input.studio_id ?? (ctx.identity.kind === 'user' ? ctx.identity.studioId : undefined);
        const { byStudio, counted } = state();
        const studios = studio === undefined ? [...byStudio.keys()] : [studio];
        const page = studios
          .flatMap((id) => newest(byStudio.get(id) ?? [], input))
          .sort((a, b) => b.seq - a.seq)
          .slice(0, input.limit);
        const nextCursor = page.length === input.limit ? page.at(-1)!.seq : null;
        if (input.format === 'csv') {
          const rows = page.map((row) => {
            const view = requestView(row);
            return CSV_COLUMNS.map((column) =>
              column === 'attempts'
                ? view.attempts
                    .map((a) => `${a.model} ${a.outcome}${a.reason ? ` (${a.reason})` : ''}`)
                    .join('; ')
                : view[column],
            );
          });
          ctx.res.setHeader('content-type', 'text/csv; charset=utf-8');
          ctx.res.setHeader('content-disposition', 'attachment; filename="requests.csv"');
          ctx.res.setHeader('x-content-type-options', 'nosniff');
          if (nextCursor !== null) ctx.res.setHeader('x-next-cursor', String(nextCursor));
          ctx.res.statusCode = 200;
          ctx.res.end(toCsv(CSV_COLUMNS, rows));
          return undefined;
        }
        return {
          items: page.map(requestView),
          next_cursor: nextCursor,
          /** Refusals beyond the per-minute bound, counted but not listed one by one. */
          refusals_counted: studios.reduce((sum, id) => sum + (counted.get(id) ?? 0), 0),
        };
      },
    }),
    defineAction({
      service: 'ai',
      action: 'requests/summary',
      method: 'GET',
      identities: ['admin', 'user'],
      summary:
        'The request log over a window (default the last 24 hours): totals, error rate, an hourly series, latency per model, top tokens',
      input: z.strictObject({
        studio_id: studioId.optional(),
        from: isoTime.optional(),
        to: isoTime.optional(),
      }),
      handler: (input, ctx) => {
        const to = input.to ? Date.parse(input.to) : Date.now();
        const from = input.from ? Date.parse(input.from) : to - DAY_MS;
        if (from > to)
          throw new ApiError('validation_failed', 'from must not be after to', { param: 'from' });
        const studio = input.studio_id ?? (ctx.identity.kind === 'user' ? ctx.identity.studioId : undefined);
        const { byStudio } = state();
        const studios = studio === undefined ? [...byStudio.keys()] : [studio];
        return {
          studio_id: studio ?? null,
          from: new Date(from).toISOString(),
          to: new Date(to).toISOString(),
          ...summarize(
            studios.map((id) => byStudio.get(id) ?? []),
            { from, to },
          ),
        };
      },
    }),
    defineAction({
      service: 'ai',
      action: 'requests/:id',
      method: 'GET',
      identities: ['admin', 'user'],
      summary: 'One request of the request log, with its bodies where they were captured',
      params: z.strictObject({ id: z.string().min(1).max(200) }),
      input: z.strictObject({}),
      handler: async (_input, ctx) => {
        const row = state().byId.get(ctx.params.id);
        // Another studio's request is as unknown to a user as one that never was.
        if (!row || (ctx.identity.kind === 'user' && row.studio_id !== ctx.identity.studioId))
          throw new ApiError('not_found', `request ${ctx.params.id} is not in the request log`);
        const revision = state().payloads.get(row.id);
        const payload =
          revision === undefined ? null : ((await payloads.read(row.studio_id, revision)) ?? null);
        return { ...requestView(row), payload };
      },
    }),
  ];
}
