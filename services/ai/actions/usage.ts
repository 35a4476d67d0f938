import { z } from 'zod';
import { hourOf, type UsageTotals, usageProjection } from '../../../projections/usage.ts';
import { ApiError } from '../../../shared/errors.ts';
import { defineAction } from '../../../shared/http/action.ts';
import type { AiDeps } from '../deps.ts';

/** Micro-dollars as dollars, exact to the micro-dollar. */
const usd = (micro: number) => micro / 1_000_000;

const isoDate = z.iso.datetime({ offset: true }).or(z.iso.date());

/** GET /v1/ai/usage: totals per model and modality, by the hour (from/to are rounded to hours). */
export function usageAction({ gw }: AiDeps) {
  return defineAction({
    service: 'ai',
    action: 'usage',
    method: 'GET',
    identities: ['admin', 'user'],
    summary: 'Usage aggregates of a studio',
    input: z.strictObject({
      studio_id: z.string().min(1).optional(),
      from: isoDate.optional(),
      to: isoDate.optional(),
    }),
    handler: (input, ctx) => {
      const studioId = input.studio_id ?? (ctx.identity.kind === 'user' ? ctx.identity.studioId : undefined);
      if (studioId === undefined)
        throw new ApiError('validation_failed', 'studio_id is required', { param: 'studio_id' });
      const from = input.from ? hourOf(new Date(input.from).toISOString()) : '';
      const to = input.to ? hourOf(new Date(input.to).toISOString()) : '\uffff';
      if (from > to) throw new ApiError('validation_failed', 'from must not be after to', { param: 'from' });

      const totals = new Map<string, UsageTotals>();
      for (const [hour, byKey] of gw.projections.state(usageProjection).get(studioId) ?? []) {
        if (hour < from || hour > to) continue;
        for (const [key, t] of byKey) {
          const sum = totals.get(key) ?? {
            requests: 0,
            failures: 0,
            input_tokens: 0,
            output_tokens: 0,
            latency_ms_total: 0,
            cost_micro_usd: 0,
          };
          sum.requests += t.requests;
          sum.failures += t.failures;
          sum.input_tokens += t.input_tokens;
          sum.output_tokens += t.output_tokens;
          sum.latency_ms_total += t.latency_ms_total;
          sum.cost_micro_usd += t.cost_micro_usd ?? 0;
          totals.set(key, sum);
        }
      }
      const items = [...totals].map(([key, t]) => {
        const [model, modality] = key.split('|');
        const { latency_ms_total, cost_micro_usd, ...rest } = t;
        return {
          model,
          modality,
          ...rest,
          avg_latency_ms: t.requests ? Math.round(latency_ms_total / t.requests) : 0,
          cost_usd: usd(cost_micro_usd),
        };
      });
      items.sort((a, b) => b.requests - a.requests || String(a.model).localeCompare(String(b.model)));
      const sum = (k: 'requests' | 'failures' | 'input_tokens' | 'output_tokens') =>
        items.reduce((s, i) => s + i[k], 0);
      return {
        studio_id: studioId,
        from: input.from ?? null,
        to: input.to ?? null,
        granularity: 'hour',
        totals: {
          requests: sum('requests'),
          failures: sum('failures'),
          input_tokens: sum('input_tokens'),
          output_tokens: sum('output_tokens'),
          cost_usd: usd(items.reduce((s, i) => s + Math.round(i.cost_usd * 1e6), 0)),
        },
        items,
      };
    },
  });
}
