/**
 * Where an unloaded chat completion's time goes: one request at a time over one kept-alive
 * connection (a short pause between them), through the thin proxy and through Studio on each store,
 * with and without governance, and with answers that do not wait for their usage event. Each
 * Studio variant differs from the one before it by one thing, so the rows say what the unloaded
 * p50 aim is spent on. A diagnosis aid beside `npm run bench`.
 *   node --import tsx bench/investigations/gateway/unloaded.ts
 *   BENCH_UNLOADED_REQUESTS=N (default 2,000 measured, after 500 of warm-up)   BENCH_REPS=N (default 2)
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import { type Child, spawnReady } from '../../gateway/processes.ts';
import { chatRequestBody } from '../../gateway/settings.ts';
import { type StudioStore, withStudioTarget } from '../../gateway/studio.ts';
import { positiveFromEnv } from '../../lib/env.ts';
import { median, percentile } from '../../lib/stats.ts';

const requests = positiveFromEnv('BENCH_UNLOADED_REQUESTS', { integer: true }) ?? 2_000;
const reps = positiveFromEnv('BENCH_REPS', { integer: true }) ?? 2;
const WARM_UP = 500;
const PAUSE_MS = 2;
const log = (message: string) => process.stderr.write(`[bench:unloaded] ${message}\n`);

interface Variant {
  label: string;
  store: StudioStore;
  governed: boolean;
  /** Answers sent before their usage event is stored (the bench-only switch of studio-launcher.ts). */
  unheld?: boolean;
}

const VARIANTS: readonly Variant[] = [
  { label: 'Studio, memory store', store: 'memory', governed: false },
  { label: 'Studio, memory store, budget and limits', store: 'memory', governed: true },
  { label: 'Studio, SQLite, answers not held for usage', store: 'sqlite', governed: false, unheld: true },
  { label: 'Studio, SQLite', store: 'sqlite', governed: false },
  {
    label: 'Studio, SQLite, budget and limits, answers not held',
    store: 'sqlite',
    governed: true,
    unheld: true,
  },
  { label: 'Studio, SQLite, budget and limits (as the aims are measured)', store: 'sqlite', governed: true },
];

/** Milliseconds of each measured request, sorted. */
async function oneAtATime(origin: string, path: string, headers: Record<string, string>, model: string) {
  const body = chatRequestBody(model);
  const pool = new Pool(origin, { connections: 1 });
  const ms: number[] = [];
  try {
    for (let i = 0; i < WARM_UP + requests; i++) {
      const started = performance.now();
      const res = await pool.request({ path, method: 'POST', headers, body });
      await res.body.text();
      if (res.statusCode !== 200) throw new Error(`${origin}${path}: HTTP ${res.statusCode}`);
      if (i >= WARM_UP) ms.push(performance.now() - started);
      await sleep(PAUSE_MS);
    }
  } finally {
    await pool.close();
  }
  return ms.sort((a, b) => a - b);
}

const samples = new Map<string, { p50: number[]; p99: number[] }>();
const note = (label: string, ms: number[]) => {
  const row = samples.get(label) ?? { p50: [], p99: [] };
  row.p50.push(percentile(ms, 50));
  row.p99.push(percentile(ms, 99));
  samples.set(label, row);
};

const children: Child[] = [];
try {
  const mock = await spawnReady('mock upstream', ['--import', 'tsx', 'bench/gateway/mock-upstream.ts'], {});
  children.push(mock);
  const thin = await spawnReady('thin proxy', ['bench/gateway/thin-proxy.mjs'], { UPSTREAM: mock.url });
  children.push(thin);
  const json = { 'content-type': 'application/json' };
  for (let rep = 1; rep <= reps; rep++) {
    log(`repetition ${rep} of ${reps}`);
    note('direct to the mock', await oneAtATime(mock.url, '/v1/chat/completions', json, 'bench'));
    note('thin proxy', await oneAtATime(thin.url, '/v1/chat/completions', json, 'bench'));
    for (const variant of VARIANTS) {
      const env: Record<string, string> = variant.unheld ? { BENCH_ANSWER_BEFORE_USAGE_DURABLE: '1' } : {};
      await withStudioTarget(
        'unloaded',
        () => ({ store: variant.store, governed: variant.governed, env }),
        async (studio) => {
          const headers = { ...json, authorization: `Bearer ${studio.token}` };
          note(
            variant.label,
            await oneAtATime(studio.child.url, '/v1/ai/chat/completions', headers, 'compat/bench'),
          );
        },
      );
    }
  }
} finally {
  for (const child of children.reverse()) await child.stop().catch(() => undefined);
}

const thinP50 = median(samples.get('thin proxy')!.p50);
const ms = (values: number[]) =>
  values.length === 1
    ? values[0]!.toFixed(2)
    : `${median(values).toFixed(2)} (${values.map((v) => v.toFixed(2)).join(', ')})`;
const lines = [
  '## Where an unloaded request goes',
  '',
  `One chat completion at a time over one kept-alive connection, ${requests} measured after ${WARM_UP}, ${reps} interleaved repetitions (median, then each); the aim: Studio's p50 within 0.5 ms of the thin proxy's.`,
  '',
  '| target | p50 ms | p99 ms | p50 over the thin proxy |',
  '|---|---|---|---|',
  ...[...samples].map(
    ([label, row]) =>
      `| ${label} | ${ms(row.p50)} | ${ms(row.p99)} | ${(median(row.p50) - thinP50).toFixed(2)} |`,
  ),
];
process.stdout.write(`${lines.join('\n')}\n`);
