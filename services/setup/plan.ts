import { mask } from '../env/reader.ts';
import type { SetupFile } from './file.ts';

/** The gateway's admin API as the setup reads and changes it (every change an admin call, so an event). */
export interface AdminApi {
  // biome-ignore lint/suspicious/noExplicitAny: the admin API's JSON answers, read field by field below.
  get(path: string): Promise<any>;
  // biome-ignore lint/suspicious/noExplicitAny: as above.
  post(path: string, body: unknown): Promise<any>;
}

/** One admin call the file asks for, and what it does in words. */
export interface Change {
  what: string;
  path: string;
  body: unknown;
  /** The call answers a secret shown once (a new token): where it is in the answer. */
  secret?: (answer: { user_token?: string }) => string | undefined;
  /** This call issues a token (`<studio>/<name>`) that later calls name. */
  issues?: string;
  /** This call is for a token issued earlier in the same apply: its id goes in `token_id`. */
  forToken?: string;
}

/** A provider connection as `GET /v1/ai/providers/list` shows it (its key masked). */
export interface ProviderView {
  id: string;
  kind: string;
  preset: string | null;
  base_url: string;
  api_key: string | null;
  api_version?: string;
  headers?: Record<string, string>;
  options?: Record<string, string | null>;
  discovered?: boolean;
  models: {
    id: string;
    upstream_id: string;
    modalities: string[];
    context_window?: number;
    max_output_tokens?: number;
  }[];
}

/** Options that are secrets: the list shows them masked, a file names them as `${ENV}`. */
export const SECRET_OPTIONS = ['secret_access_key', 'session_token'] as const;

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
/** A model's modalities as a setup file says them: `chat` (text, stream and chat) and `embed`. */
export const modalitiesOf = (modes: readonly string[] | undefined) =>
  [...new Set((modes ?? ['chat']).map((mode) => (mode === 'embed' ? 'embed' : 'chat')))].sort();

/**
 * The admin calls that bring the gateway to the file's state, in the order they must run
 * (connections before the routes and prices of their models). What the file leaves out is left as
 * it is; what already matches asks for nothing, so applying a file twice changes nothing.
 */
export async function planSetup(file: SetupFile, api: AdminApi): Promise<Change[]> {
  const changes: Change[] = [];

  const env = new Map<string, { value: string; secret: boolean; source: string }>(
    (await api.get('/v1/env/list')).items.map((item: { key: string }) => [item.key, item]),
  );
  for (const wanted of file.env) {
    const current = env.get(wanted.key);
    const secret = wanted.secret ?? true;
    const shown = secret ? mask(wanted.value) : wanted.value;
    if (current?.source === 'store' && current.secret === secret && current.value === shown) continue;
    changes.push({ what: `set env ${wanted.key}`, path: '/v1/env/upsert', body: { ...wanted, secret } });
  }

  const providers = new Map<string, ProviderView>(
    ((await api.get('/v1/ai/providers/list')).items as ProviderView[]).map((p) => [p.id, p]),
  );
  for (const wanted of file.providers) {
    const current = providers.get(wanted.id);
    if (current === undefined || !providerMatches(wanted, current))
      changes.push({
        what: `${current ? 'update' : 'connect'} provider ${wanted.id}`,
        path: '/v1/ai/providers/upsert',
        body: wanted,
      });
  }

  const prices = new Map<string, Record<string, number>>(
    (await api.get('/v1/ai/prices')).items.map((p: { model: string }) => [p.model, p]),
  );
  for (const [model, price] of Object.entries(file.prices)) {
    const current = prices.get(model) ?? {};
    if (Object.entries(price).some(([field, value]) => current[field] !== value))
      changes.push({
        what: `set the price of ${model}`,
        path: '/v1/ai/prices/upsert',
        body: { model, ...price },
      });
  }

  const routes = new Map<string, Record<string, unknown>>(
    (await api.get('/v1/ai/routes/list')).items.map((r: { id: string }) => [r.id, r]),
  );
  for (const wanted of file.routes) {
    const current = routes.get(wanted.id);
    const targets = (list: unknown) =>
      ((list as { model: string; weight?: number }[] | undefined) ?? []).map((t) => ({
        model: t.model,
        weight: t.weight ?? 1,
      }));
    const unchanged =
      current !== undefined &&
      Object.entries(wanted).every(([field, value]) =>
        field === 'targets' ? same(targets(value), targets(current.targets)) : same(value, current[field]),
      );
    if (!unchanged)
      changes.push({
        what: `${current ? 'update' : 'create'} route ${wanted.id}`,
        path: '/v1/ai/routes/upsert',
        body: wanted,
      });
  }

  const studios = new Map<string, { cache_ttl_s: number; status: string }>(
    (await api.get('/v1/studios/list')).items.map((s: { id: string }) => [s.id, s]),
  );
  for (const wanted of file.studios) {
    const studio = studios.get(wanted.id);
    const id = wanted.id;
    if (!studio) {
      changes.push({
        what: `create studio ${id}`,
        path: '/v1/studios/create',
        body: {
          studio_id: id,
          name: wanted.name ?? id,
          ...(wanted.cache_ttl_s === undefined ? {} : { cache_ttl_s: wanted.cache_ttl_s }),
        },
      });
    } else if (wanted.cache_ttl_s !== undefined && wanted.cache_ttl_s !== studio.cache_ttl_s) {
      changes.push({
        what: `set the cache of studio ${id}`,
        path: '/v1/studios/settings',
        body: { studio_id: id, cache_ttl_s: wanted.cache_ttl_s },
      });
    }
    const of = async (path: string) =>
      studio ? (await api.get(`${path}?studio_id=${encodeURIComponent(id)}`)).items : [];
    const tokenIds = new Map<string, string>(
      (await of('/v1/studios/tokens/list'))
        .filter((t: { revoked_at: string | null }) => !t.revoked_at)
        .map((t: { name: string; id: string }) => [t.name, t.id]),
    );
    const budgets = await of('/v1/studios/budgets/list');
    const limitsList = await of('/v1/studios/limits/list');
    for (const token of wanted.tokens) {
      const tokenId = tokenIds.get(token.name);
      const issues = `${id}/${token.name}`;
      if (tokenId === undefined)
        changes.push({
          what: `issue token ${token.name} of studio ${id}`,
          path: '/v1/studios/tokens/apply',
          body: { studio_id: id, name: token.name, ...(token.models ? { models: token.models } : {}) },
          secret: (answer) => answer.user_token,
          issues,
        });
      const owner = tokenId === undefined ? { forToken: issues } : {};
      const ownBudget = budgets.find((b: { token_id: string | null }) => tokenId && b.token_id === tokenId);
      if (token.budget && !budgetMatches(token.budget, ownBudget))
        changes.push({
          what: `set the budget of token ${token.name} of studio ${id}`,
          path: '/v1/studios/budgets/set',
          body: { studio_id: id, ...(tokenId ? { token_id: tokenId } : {}), ...token.budget },
          ...owner,
        });
      const ownLimits = limitsList.find(
        (l: { token_id: string | null }) => tokenId && l.token_id === tokenId,
      );
      if (token.limits && !limitsMatch(token.limits, ownLimits))
        changes.push({
          what: `set the limits of token ${token.name} of studio ${id}`,
          path: '/v1/studios/limits/set',
          body: { studio_id: id, ...(tokenId ? { token_id: tokenId } : {}), ...token.limits },
          ...owner,
        });
    }
    const accounts = new Set(
      (await of('/v1/accounts/list')).map((a: { email: string }) => a.email.toLowerCase()),
    );
    for (const account of wanted.accounts) {
      if (accounts.has(account.email.toLowerCase())) continue;
      changes.push({
        what: `create account ${account.email} in studio ${id}`,
        path: '/v1/accounts/create',
        body: { studio_id: id, ...account },
      });
    }
    const budget = budgets.find((b: { token_id: string | null }) => b.token_id === null);
    for (const wantedBudget of wanted.budgets) {
      if (budgetMatches(wantedBudget, budget)) continue;
      changes.push({
        what: `set the budget of studio ${id}`,
        path: '/v1/studios/budgets/set',
        body: { studio_id: id, ...wantedBudget },
      });
    }
    if (wanted.limits) {
      const limits = limitsList.find((l: { token_id: string | null }) => l.token_id === null);
      if (!limitsMatch(wanted.limits, limits))
        changes.push({
          what: `set the limits of studio ${id}`,
          path: '/v1/studios/limits/set',
          body: { studio_id: id, ...wanted.limits },
        });
    }
  }
  return changes;
}

/**
 * Runs the changes in order, telling `applied` of each as soon as it is made (with the secret it
 * showed once, if any), so a failure later on loses no secret already issued; answers those secrets.
 */
export async function applyChanges(
  changes: readonly Change[],
  api: AdminApi,
  applied: (change: Change, secret: string | undefined) => void = () => undefined,
): Promise<{ what: string; secret: string }[]> {
  const secrets: { what: string; secret: string }[] = [];
  const issued = new Map<string, string>();
  for (const change of changes) {
    const body = change.forToken
      ? { ...(change.body as object), token_id: issued.get(change.forToken) }
      : change.body;
    const answer = await api.post(change.path, body);
    if (change.issues) issued.set(change.issues, answer.token.id);
    const secret = change.secret?.(answer);
    applied(change, secret);
    if (secret) secrets.push({ what: change.what, secret });
  }
  return secrets;
}

type Wanted = SetupFile['providers'][number];
type BudgetLike = { amount_usd: number; window: string; mode: string };
type LimitsLike = { rpm?: number; tpm?: number; max_concurrent?: number };

const budgetMatches = (wanted: BudgetLike, current: BudgetLike | undefined) =>
  current !== undefined &&
  same([current.amount_usd, current.window, current.mode], [wanted.amount_usd, wanted.window, wanted.mode]);

const limitsMatch = (wanted: LimitsLike, current: Record<string, number | null> | undefined) =>
  current !== undefined &&
  (['rpm', 'tpm', 'max_concurrent'] as const).every(
    (field) => (wanted[field] ?? null) === (current[field] ?? null),
  );

/** A connection's models as a file says them: without the connection's prefix, defaults filled. */
const modelsOf = (connection: string, list: Wanted['models'] | ProviderView['models'] = []) =>
  list.map((m) => ({
    id: m.id.replace(`${connection}/`, ''),
    upstream_id: m.upstream_id ?? m.id,
    modalities: modalitiesOf(m.modalities),
    context_window: m.context_window ?? null,
    max_output_tokens: m.max_output_tokens ?? null,
  }));

const sorted = (record: Record<string, unknown>) => Object.fromEntries(Object.entries(record).sort());

/**
 * Whether a connection already is as the file says (secrets compared masked, as the list shows
 * them). A discovered connection matches when the models the file names are among those found.
 */
function providerMatches(wanted: Wanted, current: ProviderView): boolean {
  const wantedModels = modelsOf(wanted.id, wanted.models);
  const currentModels = modelsOf(current.id, current.models);
  const models = wanted.discover
    ? current.discovered === true && wantedModels.every((m) => currentModels.some((c) => same(c, m)))
    : same(wantedModels, currentModels);
  const headers =
    wanted.headers === undefined ||
    same(
      sorted(Object.fromEntries(Object.entries(wanted.headers).map(([name, value]) => [name, mask(value)]))),
      sorted(current.headers ?? {}),
    );
  const options = Object.entries(wanted.options ?? {}).every(
    ([name, value]) =>
      ((SECRET_OPTIONS as readonly string[]).includes(name) ? mask(String(value)) : value) ===
      current.options?.[name],
  );
  return (
    (wanted.kind === undefined || wanted.kind === current.kind) &&
    (wanted.preset ?? null) === current.preset &&
    (wanted.base_url === undefined || wanted.base_url === current.base_url) &&
    (wanted.api_version === undefined || wanted.api_version === current.api_version) &&
    (wanted.api_key === undefined || mask(wanted.api_key) === current.api_key) &&
    headers &&
    options &&
    models
  );
}
