import type { SetupFile } from './file.ts';
import { type AdminApi, modalitiesOf, type ProviderView } from './plan.ts';

const ROUTE_FIELDS = ['strategy', 'retry_on', 'max_attempts', 'timeout_ms', 'cooldown'] as const;

/**
 * The gateway's admin state as a setup file that `planSetup` finds nothing to change in: keys as
 * `${<ID>_API_KEY}` references (never their values), tokens by name (never their secrets).
 */
export async function exportSetup(api: AdminApi): Promise<SetupFile> {
  const providers = (await api.get('/v1/ai/providers/list')).items.map((p: ProviderView) => ({
    id: p.id,
    kind: p.kind,
    ...(p.preset ? { preset: p.preset } : {}),
    base_url: p.base_url,
    ...(p.api_key ? { api_key: `\${${p.id.toUpperCase().replace(/-/g, '_')}_API_KEY}` } : {}),
    ...(p.api_version ? { api_version: p.api_version } : {}),
    models: p.models.map((m) => ({
      id: m.id.replace(`${p.id}/`, ''),
      upstream_id: m.upstream_id,
      modalities: modalitiesOf(m.modalities),
    })),
  }));
  const prices: SetupFile['prices'] = {};
  for (const { model, source, ...price } of (await api.get('/v1/ai/prices')).items) {
    if (source === 'override') prices[model] = price;
  }
  const routes = (await api.get('/v1/ai/routes/list')).items.map((r: Record<string, unknown>) => ({
    id: r.id,
    targets: (r.targets as { model: string; weight: number }[]).map((t) => ({
      model: t.model,
      weight: t.weight,
    })),
    ...Object.fromEntries(ROUTE_FIELDS.map((field) => [field, r[field]])),
  }));
  const studios = [];
  for (const s of (await api.get('/v1/studios/list')).items as {
    id: string;
    name: string;
    status: string;
    cache_ttl_s: number;
  }[]) {
    if (s.status === 'removed') continue;
    const of = async (path: string) => (await api.get(`${path}?studio_id=${encodeURIComponent(s.id)}`)).items;
    const tokens = (await of('/v1/studios/tokens/list')).filter(
      (t: { revoked_at: string | null }) => !t.revoked_at,
    );
    const budget = (await of('/v1/studios/budgets/list')).find(
      (b: { token_id: string | null }) => b.token_id === null,
    );
    const limits = (await of('/v1/studios/limits/list')).find(
      (l: { token_id: string | null }) => l.token_id === null,
    );
    studios.push({
      id: s.id,
      name: s.name,
      cache_ttl_s: s.cache_ttl_s,
      tokens: tokens.map((t: { name: string; models: string[] | null }) => ({
        name: t.name,
        ...(t.models ? { models: t.models } : {}),
      })),
      budgets: budget ? [{ amount_usd: budget.amount_usd, window: budget.window, mode: budget.mode }] : [],
      ...(limits
        ? {
            limits: Object.fromEntries(
              (['rpm', 'tpm', 'max_concurrent'] as const)
                .filter((f) => limits[f] != null)
                .map((f) => [f, limits[f]]),
            ),
          }
        : {}),
    });
  }
  return { providers, prices, routes, studios } as SetupFile;
}
