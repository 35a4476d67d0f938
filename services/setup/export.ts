import type { SetupFile } from './file.ts';
import { type AdminApi, modalitiesOf, type ProviderView, SECRET_OPTIONS } from './plan.ts';

/** `${NAME}`: a secret the file names, read from the environment when it is applied. */
const reference = (name: string) => `\${${name.toUpperCase().replace(/[^A-Z0-9]/g, '_')}}`;

const ROUTE_FIELDS = ['strategy', 'retry_on', 'max_attempts', 'timeout_ms', 'cooldown'] as const;

/**
 * The gateway's admin state as a setup file that `planSetup` finds nothing to change in: secrets as
 * `${NAME}` references (never their values: a connection's key is `${<ID>_API_KEY}`), tokens by name
 * (never their secrets), accounts by email (never their passwords).
 */
export async function exportSetup(api: AdminApi): Promise<SetupFile> {
  const env = (await api.get('/v1/env/list')).items
    .filter((item: { source: string }) => item.source === 'store')
    .map((item: { key: string; value: string; secret: boolean }) => ({
      key: item.key,
      value: item.secret ? reference(item.key) : item.value,
      ...(item.secret ? {} : { secret: false }),
    }));
  const providers = (await api.get('/v1/ai/providers/list')).items.map((p: ProviderView) => {
    const variable = (what: string) => reference(`${p.id}_${what}`);
    const options = Object.entries(p.options ?? {}).filter(([, value]) => value !== null);
    return {
      id: p.id,
      kind: p.kind,
      ...(p.preset ? { preset: p.preset } : {}),
      base_url: p.base_url,
      ...(p.api_key ? { api_key: variable('API_KEY') } : {}),
      ...(p.api_version ? { api_version: p.api_version } : {}),
      ...(p.headers && Object.keys(p.headers).length > 0
        ? { headers: Object.fromEntries(Object.keys(p.headers).map((name) => [name, variable(name)])) }
        : {}),
      ...(options.length > 0
        ? {
            options: Object.fromEntries(
              options.map(([name, value]) => [
                name,
                (SECRET_OPTIONS as readonly string[]).includes(name) ? variable(name) : value,
              ]),
            ),
          }
        : {}),
      ...(p.discovered ? { discover: true } : {}),
      models: p.models.map((m) => ({
        id: m.id.replace(`${p.id}/`, ''),
        upstream_id: m.upstream_id,
        modalities: modalitiesOf(m.modalities),
        ...(m.context_window === undefined ? {} : { context_window: m.context_window }),
        ...(m.max_output_tokens === undefined ? {} : { max_output_tokens: m.max_output_tokens }),
      })),
    };
  });
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
    const budgets = await of('/v1/studios/budgets/list');
    const limitsList = await of('/v1/studios/limits/list');
    const budgetOf = (tokenId: string | null) => {
      const budget = budgets.find((b: { token_id: string | null }) => b.token_id === tokenId);
      return budget && { amount_usd: budget.amount_usd, window: budget.window, mode: budget.mode };
    };
    const limitsOf = (tokenId: string | null) => {
      const limits = limitsList.find((l: { token_id: string | null }) => l.token_id === tokenId);
      return (
        limits &&
        Object.fromEntries(
          (['rpm', 'tpm', 'max_concurrent'] as const)
            .filter((f) => limits[f] != null)
            .map((f) => [f, limits[f]]),
        )
      );
    };
    const studioBudget = budgetOf(null);
    const studioLimits = limitsOf(null);
    studios.push({
      id: s.id,
      name: s.name,
      cache_ttl_s: s.cache_ttl_s,
      tokens: tokens.map((t: { id: string; name: string; models: string[] | null }) => {
        const budget = budgetOf(t.id);
        const limits = limitsOf(t.id);
        return {
          name: t.name,
          ...(t.models ? { models: t.models } : {}),
          ...(budget ? { budget } : {}),
          ...(limits ? { limits } : {}),
        };
      }),
      budgets: studioBudget ? [studioBudget] : [],
      ...(studioLimits ? { limits: studioLimits } : {}),
      accounts: (await of('/v1/accounts/list')).map((a: { email: string; name: string | null }) => ({
        email: a.email,
        ...(a.name ? { name: a.name } : {}),
      })),
    });
  }
  return { env, providers, prices, routes, studios } as SetupFile;
}
