/**
 * Where an unloaded chat completion's time goes: one request at a time over one kept-alive
 * connection (a short pause between them), through the thin proxy and through Studio on each store,
 * with and without governance, with commits not synced, and with answers that do not wait for
 * their usage event. Each Studio variant differs from another by one thing, so the rows say what
 * the unloaded p50 aim is spent on. Every target runs at once and takes its requests in turn with
 * the others, so a machine that drifts during the run moves all rows alike. A diagnosis aid beside
 * `npm run bench`.
 *   node --import tsx bench/investigations/gateway/unloaded.ts
 *   BENCH_UNLOADED_REQUESTS=N (default 2,000 measured, after 500 of warm-up)   BENCH_REPS=N (default 2)
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import { type Child, spawnReady, spawnThinProxy } from '../../gateway/processes.ts';
import { chatRequestBody } from '../../gateway/settings.ts';
import { type StudioStore, startStudioTarget } from '../../gateway/studio.ts';
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
  env?: Record<string, string>;
}

/** Answers sent before their usage event is stored (the bench-only switch of studio-launcher.ts). */
const UNHELD = { BENCH_ANSWER_BEFORE_USAGE_DURABLE: '1' };

const VARIANTS: readonly Variant[] = [
  { label: 'Studio, memory store', store: 'memory', governed: false },
  { label: 'Studio, memory store, budget and limits', store: 'memory', governed: true },
  { label: 'Studio, SQLite, answers not held for usage', store: 'sqlite', governed: false, env: UNHELD },
  { label: 'Studio, SQLite', store: 'sqlite', governed: false },
  {
    label: 'Studio, SQLite, budget and limits, answers not held',
    store: 'sqlite',
    governed: true,
    env: UNHELD,
  },
  {
    label: 'Studio, SQLite, budget and limits, commits not synced',
    store: 'sqlite',
    governed: true,
    env: { STUDIO_SQLITE_SYNCHRONOUS: 'normal' },
  },
  { label: 'Studio, SQLite, budget and limits (as the aims are measured)', store: 'sqlite', governed: true },
];

/** A target of the run: where its requests go, and the milliseconds each measured one took. */
interface Target {
  label: string;
  pool: Pool;
  path: string;
  headers: Record<string, string>;
  body: string;
  ms: number[];
}

const target = (
  label: string,
  origin: string,
  path: string,
  headers: Record<string, string>,
  model: string,
): Target => ({
  label,
  pool: new Pool(origin, { connections: 1 }),
  path,
  headers,
  body: chatRequestBody(model),
  ms: [],
});

/**
 * One request to each target in turn (forwards, then backwards, so none is always first after the
 * pause), each after a short pause: every target meets the machine in the same state, however it
 * drifts during the run.
 */
async function interleaved(targets: readonly Target[]): Promise<void> {
  for (let i = 0; i < WARM_UP + requests; i++) {
    for (const t of i % 2 === 0 ? targets : [...targets].reverse()) {
      const started = performance.now();
      const res = await t.pool.request({ path: t.path, method: 'POST', headers: t.headers, body: t.body });
      await res.body.text();
      if (res.statusCode !== 200) throw new Error(`${t.label}: HTTP ${res.statusCode}`);
      if (i >= WARM_UP) t.ms.push(performance.now() - started);
      await sleep(PAUSE_MS);
    }
  }
}

const samples = new Map<string, { p50: number[]; p99: number[] }>();
const note = ({ label, ms }: Target) => {
  ms.sort((a, b) => a - b);
  const row = samples.get(label) ?? { p50: [], p99: [] };
  row.p50.push(percentile(ms, 50));
  row.p99.push(percentile(ms, 99));
  samples.set(label, row);
};

for (let rep = 1; rep <= reps; rep++) {
  log(`repetition ${rep} of ${reps}: starting the mock, the thin proxy and ${VARIANTS.length} Studios`);
  const children: Child[] = [];
  const targets: Target[] = [];
  const dirs: string[] = [];
  try {
    const mock = await spawnReady('mock upstream', ['--import', 'tsx', 'bench/gateway/mock-upstream.ts'], {});
    children.push(mock);
    const thin = await spawnThinProxy(mock.url);
    children.push(thin);
    const json = { 'content-type': 'application/json' };
    targets.push(target('direct to the mock', mock.url, '/v1/chat/completions', json, 'bench'));
    targets.push(target('thin proxy', thin.url, '/v1/chat/completions', json, 'bench'));
    for (const variant of VARIANTS) {
      const dir = await mkdtemp(join(tmpdir(), 'studio-bench-unloaded-'));
      dirs.push(dir);
      const studio = await startStudioTarget({ ...variant, dir, mockUrl: mock.url });
      children.push(studio.child);
      const headers = { ...json, authorization: `Bearer ${studio.token}` };
      targets.push(
        target(variant.label, studio.child.url, '/v1/ai/chat/completions', headers, 'compat/bench'),
      );
    }
    log(
      `${WARM_UP} requests of warm-up and ${requests} measured to each of ${targets.length} targets, interleaved`,
    );
    await interleaved(targets);
    for (const t of targets) note(t);
  } finally {
    for (const t of targets) await t.pool.close();
    for (const child of children.reverse()) await child.stop().catch(() => undefined);
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  }
}

const thinP50 = median(samples.get('thin proxy')!.p50);
const ms = (values: number[]) =>
  values.length === 1
    ? values[0]!.toFixed(2)
    : `${median(values).toFixed(2)} (${values.map((v) => v.toFixed(2)).join(', ')})`;
const lines = [
  '## Where an unloaded request goes',
  '',
  `One chat completion at a time over one kept-alive connection, ${requests} measured after ${WARM_UP}, every target's requests interleaved with the others', ${reps} repetitions (median, then each); the aim: Studio's p50 within 0.5 ms of the thin proxy's.`,
  '',
  '| target | p50 ms | p99 ms | p50 over the thin proxy |',
  '|---|---|---|---|',
  ...[...samples].map(
    ([label, row]) =>
      `| ${label} | ${ms(row.p50)} | ${ms(row.p99)} | ${(median(row.p50) - thinP50).toFixed(2)} |`,
  ),
];
process.stdout.write(`${lines.join('\n')}\n`);
