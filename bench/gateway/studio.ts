/** Studio as a benchmark target: its own process, a studio and a user token. */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type FreshDatabase,
  freshPostgresDatabase,
  postgresUnavailableReason,
} from '../../test/support/postgres.ts';
import { compileAsServer } from '../lib/server-build.ts';
import { closedLoop } from './closed-loop.ts';
import { type Child, spawnReady } from './processes.ts';
import { CONNECTIONS, chatRequestBody } from './settings.ts';
import { type StudioStart, studioStartFromEnv } from './studio-start.ts';

const STORES = ['sqlite', 'memory', 'postgres'] as const;
export type StudioStore = (typeof STORES)[number];

/** BENCH_GATEWAY_STORE: sqlite (as `studio start`) unless set; anything else is refused by name. */
export function studioStoreFromEnv(value = process.env.BENCH_GATEWAY_STORE): StudioStore {
  if (value === undefined || value === '') return 'sqlite';
  const store = STORES.find((s) => s === value);
  if (!store) throw new Error(`BENCH_GATEWAY_STORE must be one of ${STORES.join(', ')}, not "${value}"`);
  return store;
}

/** The route the `studio-routed` target asks for. */
export const FALLBACK_ROUTE = 'bench/fallback';

export interface StudioTarget {
  child: Child;
  /** A user token of the studio `bench`. */
  token: string;
}

async function adminPost(origin: string, path: string, key: string, body: unknown) {
  const res = await fetch(origin + path, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as Record<string, unknown>;
  if (!res.ok) throw new Error(`${path}: HTTP ${res.status} ${JSON.stringify(json)}`);
  return json;
}

export interface StudioTargetOptions {
  dir: string;
  mockUrl: string;
  store: StudioStore;
  /** Which command Studio is started as; by default BENCH_STUDIO_START's (`studio start` unless set). */
  start?: StudioStart;
  env?: Record<string, string>;
  /** Price the model and set a hard budget and rate limits on the studio, none of which a run reaches. */
  governed?: boolean;
  /** With `governed`, the rate limits set (by default all three, none of them reached); `{}` sets none. */
  limits?: { rpm?: number; tpm?: number; max_concurrent?: number };
  /** With `governed`, `false` sets no budget (the rate limits alone). */
  budget?: boolean;
  /** Define `FALLBACK_ROUTE` over compat/bench then compat/bench-b (which `env` must list). */
  routed?: boolean;
  /** Run the TypeScript sources through tsx instead of the compiled launcher: a profile then names each source file. */
  fromSources?: boolean;
  /** Run node under this program (valgrind …); start-up then takes longer. */
  wrap?: readonly string[];
  /** The admin key (ADMIN_SECRET_KEY), for a benchmark that goes on using it; else a random one. */
  adminKey?: string;
}

/**
 * Starts bench/gateway/studio-launcher.ts with the env a deployment would set (model
 * `compat/bench` on the openai-compatible provider, pointing at `mockUrl`; the runtime, when
 * started, on a port of its own), then creates the studio `bench` and a user token with the admin
 * key. On `postgres` it gets a fresh database, which its child's `stop` drops.
 */
export async function startStudioTarget(options: StudioTargetOptions): Promise<StudioTarget> {
  const adminKey = options.adminKey ?? `adm_${randomBytes(24).toString('base64url')}`;
  let database: FreshDatabase | undefined;
  if (options.store === 'postgres') {
    database = await freshPostgresDatabase();
    if (!database) throw new Error(postgresUnavailableReason);
  }
  await mkdir(options.dir, { recursive: true });
  const env = {
    NODE_ENV: 'production',
    STUDIO_EVENT_STORE: options.store,
    STUDIO_DATA_DIR: join(options.dir, 'studio-data'),
    STUDIO_GATEWAY_HOST: '127.0.0.1',
    STUDIO_GATEWAY_PORT: '0',
    STUDIO_RUNTIME_HOST: '127.0.0.1',
    STUDIO_RUNTIME_PORT: '0',
    BENCH_STUDIO_START: options.start ?? studioStartFromEnv(),
    ADMIN_SECRET_KEY: adminKey,
    STUDIO_MASTER_KEY: randomBytes(32).toString('hex'),
    OPENAI_COMPATIBLE_BASE_URL: `${options.mockUrl}/v1`,
    OPENAI_COMPATIBLE_MODELS: 'bench',
    OPENAI_COMPATIBLE_API_KEY: `sk-bench-${randomBytes(8).toString('hex')}`,
    ...(database ? { DATABASE_URL: database.url } : {}),
    ...options.env,
  };
  // The request log at its default level (info, a line per request), written to a file as a
  // deployment would: its cost is part of what is measured.
  const launcher = options.fromSources
    ? ['--import', 'tsx', 'bench/gateway/studio-launcher.ts']
    : ['--enable-source-maps', await compileAsServer('bench/gateway/studio-launcher.ts')];
  const spawned = await spawnReady('Studio', launcher, env, {
    stdoutFile: join(options.dir, 'studio.log'),
    ...(options.wrap ? { wrap: options.wrap, timeoutMs: 900_000 } : {}),
  }).catch(async (error: unknown) => {
    await database?.drop();
    throw error;
  });
  const child: Child = {
    ...spawned,
    stop: async () => {
      await spawned.stop();
      await database?.drop();
    },
  };
  try {
    return { child, token: await setUpBenchStudio(child.url, adminKey, options) };
  } catch (error) {
    await child.stop();
    throw error;
  }
}

/**
 * Creates the studio `bench` on the gateway at `origin` with the admin key, and, as `options` say,
 * its price, budget and limits and the fallback route; answers a user token of it.
 */
export async function setUpBenchStudio(
  origin: string,
  adminKey: string,
  options: Pick<StudioTargetOptions, 'governed' | 'limits' | 'budget' | 'routed'>,
): Promise<string> {
  const post = (path: string, body: unknown) => adminPost(origin, path, adminKey, body);
  await post('/v1/studios/create', { name: 'Bench', studio_id: 'bench' });
  const applied = await post('/v1/studios/tokens/apply', { studio_id: 'bench' });
  if (options.governed) {
    await post('/v1/ai/prices/upsert', { model: 'compat/bench', input_per_mtok: 1, output_per_mtok: 2 });
    if (options.budget !== false)
      await post('/v1/studios/budgets/set', {
        studio_id: 'bench',
        amount_usd: 1_000_000,
        window: 'day',
        mode: 'hard',
      });
    const limits = options.limits ?? { rpm: 1_000_000, tpm: 1_000_000_000, max_concurrent: 10_000 };
    if (Object.keys(limits).length > 0)
      await post('/v1/studios/limits/set', { studio_id: 'bench', ...limits });
  }
  if (options.routed) {
    await post('/v1/ai/routes/upsert', {
      id: FALLBACK_ROUTE,
      strategy: 'fallback',
      targets: [{ model: 'compat/bench' }, { model: 'compat/bench-b' }],
    });
  }
  return applied.user_token as string;
}

/** A closed loop of `CONNECTIONS` (50) connections asking `studio` for short chat completions, JSON or streamed. */
export function loadStudio(
  studio: { child: { url: string }; token: string },
  stream: boolean,
  durationMs: number,
) {
  return closedLoop({
    origin: studio.child.url,
    path: '/v1/ai/chat/completions',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${studio.token}` },
    body: chatRequestBody('compat/bench', stream),
    connections: CONNECTIONS,
    durationMs,
  });
}

/**
 * Runs `work` against Studio started by `startStudioTarget` in front of a mock upstream, in a
 * temporary directory of its own (`options` may name files in it: a profile to write), then stops
 * both and removes the directory, whatever `work` did.
 */
export async function withStudioTarget<T>(
  name: string,
  options: (dir: string) => Omit<StudioTargetOptions, 'dir' | 'mockUrl'>,
  work: (studio: StudioTarget, dir: string) => Promise<T>,
): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), `studio-bench-${name}-`));
  const children: Child[] = [];
  try {
    const mock = await spawnReady('mock upstream', ['--import', 'tsx', 'bench/gateway/mock-upstream.ts'], {});
    children.push(mock);
    const studio = await startStudioTarget({ ...options(dir), dir, mockUrl: mock.url });
    children.push(studio.child);
    return await work(studio, dir);
  } finally {
    for (const child of children.reverse()) await child.stop().catch(() => undefined);
    await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }
}
