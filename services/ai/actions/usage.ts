import { z } from 'zod';
import { hourOf, usageProjection } from '../../../projections/usage.ts';
import { toCsv } from '../../../shared/csv.ts';
import { ApiError } from '../../../shared/errors.ts';
import { defineAction } from '../../../shared/http/action.ts';
import type { AiDeps } from '../deps.ts';
import {
  USAGE_DIMENSIONS,
  USAGE_FIELDS,
  USAGE_MEASURES,
  type UsageDimension,
  type UsageGroup,
  usageReport,
} from '../usage/report.ts';

const isoDate = z.iso.datetime({ offset: true }).or(z.iso.date());

const isDimension = (name: string): name is UsageDimension =>
  (USAGE_DIMENSIONS as readonly string[]).includes(name);

/** `group_by=model,day`: names of USAGE_DIMENSIONS, comma-separated, each once (repeats are dropped). */
const groupBy = z.string().transform((raw, ctx): UsageDimension[] => {
  const names = raw.split(',').map((name) => name.trim());
  const unknown = names.filter((name) => !isDimension(name));
  if (unknown.length > 0) {
    ctx.addIssue({
      code: 'custom',
      message: `unknown ${unknown.map((name) => JSON.stringify(name)).join(', ')}; group_by takes ${USAGE_DIMENSIONS.join(', ')}, comma-separated`,
    });
    return z.NEVER;
  }
  return [...new Set(names.filter(isDimension))];
});

/** What a request without `group_by` is grouped by, as before `group_by` existed. */
const DEFAULT_GROUP_BY: readonly UsageDimension[] = ['model', 'modality'];

/**
 * GET /v1/ai/usage: a studio's usage from `from` to `to` (rounded to hours), in one group per
 * combination of `group_by` (model and modality unless given), each with its cost; JSON, or CSV
 * with `format=csv`.
 */
export function usageAction({ gw }: AiDeps) {
  return defineAction({
    service: 'ai',
    action: 'usage',
    method: 'GET',
    identities: ['admin', 'user'],
    summary: 'Usage aggregates of a studio',
    produces: ['application/json', 'text/csv'],
    input: z.strictObject({
      studio_id: z.string().min(1).optional(),
      from: isoDate.optional(),
      to: isoDate.optional(),
      group_by: groupBy.optional(),
      format: z.enum(['json', 'csv']).optional(),
    }),
    handler: (input, ctx) => {
      const studioId = input.studio_id ?? (ctx.identity.kind === 'user' ? ctx.identity.studioId : undefined);
      if (studioId === undefined)
        throw new ApiError('validation_failed', 'studio_id is required', { param: 'studio_id' });
      const from = input.from ? hourOf(new Date(input.from).toISOString()) : '';
      const to = input.to ? hourOf(new Date(input.to).toISOString()) : '\uffff';
      if (from > to) throw new ApiError('validation_failed', 'from must not be after to', { param: 'from' });

      const by = input.group_by ?? DEFAULT_GROUP_BY;
      const hours = gw.projections.state(usageProjection).get(studioId) ?? new Map();
      const { totals, groups } = usageReport(hours, { from, to }, by);
      // Without group_by, the order it always had: most requests first.
      if (input.group_by === undefined)
        groups.sort((a, b) => b.requests - a.requests || String(a.model).localeCompare(String(b.model)));

      if (input.format === 'csv') {
        const fields = by.map((dimension) => USAGE_FIELDS[dimension]);
        const rows = groups.map((group: UsageGroup) => [
          ...fields.map((field) => group[field] ?? null),
          ...USAGE_MEASURES.map((measure) => group[measure]),
        ]);
        ctx.res.setHeader('content-type', 'text/csv; charset=utf-8');
        ctx.res.setHeader('content-disposition', 'attachment; filename="usage.csv"');
        ctx.res.setHeader('x-content-type-options', 'nosniff');
        ctx.res.statusCode = 200;
        ctx.res.end(toCsv([...fields, ...USAGE_MEASURES], rows));
        return undefined;
      }
      return {
        studio_id: studioId,
        from: input.from ?? null,
        to: input.to ?? null,
        granularity: 'hour',
        group_by: by,
        totals,
        items: groups,
      };
    },
  });
}
