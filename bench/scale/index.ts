/**
 * Scale-out figures: commands per second through one and two gateway processes on one
 * PostgreSQL, and rebuilding the read models from a 1,000,000-event log.
 *   node --import tsx bench/scale/index.ts     (BENCH_QUICK=1 for a short run)
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { type ServerProcess, startStudio } from '../../test/scale/processes.ts';
import { loadDataset, planDataset } from '../lib/dataset.ts';
import { switchFromEnv } from '../lib/env.ts';
import { measureRebuild, measureRunnerStart } from '../lib/measures.ts';
import { baseDatabaseUrl, openPostgres } from '../lib/targets.ts';

const QUICK = switchFromEnv('BENCH_QUICK');
const LOAD_MS = QUICK ? 2_000 : 8_000;
const CONCURRENCY = 32;
const REBUILD_EVENTS = QUICK ? 100_000 : 1_000_000;

const log = (message: string) => process.stderr.write(`[bench:scale] ${message}\n`);
const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

async function commandLoad(urls: string[], adminKey: string, ms: number) {
  const latencies: number[] = [];
  let errors = 0;
  const deadline = performance.now() + ms;
  let seq = 0;
  const worker = async (w: number) => {
    while (performance.now() < deadline) {
      const id = `b${w}-${seq++}-${randomBytes(3).toString('hex')}`;
      const url = urls[seq % urls.length]!;
      const started = performance.now();
      try {
        const res = await fetch(`${url}/v1/studios/create`, {
          method: 'POST',
          headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ name: id, studio_id: id }),
        });
        await res.arrayBuffer();
        if (res.status === 201) latencies.push(performance.now() - started);
        else errors++;
      } catch {
        errors++;
      }
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, (_, w) => worker(w)));
  const elapsed = performance.now() - started;
  latencies.sort((a, b) => a - b);
  return {
    perSecond: (latencies.length * 1000) / elapsed,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    errors,
    count: latencies.length,
  };
}

export async function runScaleBench(): Promise<string> {
  const out: string[] = ['## Scale-out (PostgreSQL)', ''];
  const base = baseDatabaseUrl();
  const name = `studio_bench_scale_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  try {
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
  } catch (error) {
    await admin.end().catch(() => undefined);
    return `${out.join('\n')}not run: ${error instanceof Error ? error.message : String(error)}\n`;
  }
  const url = new URL(base);
  url.pathname = `/${name}`;
  const databaseUrl = url.toString();
  const adminKey = `adm_${randomBytes(24).toString('base64url')}`;
  const env = {
    STUDIO_EVENT_STORE: 'postgres',
    DATABASE_URL: databaseUrl,
    ADMIN_SECRET_KEY: adminKey,
    STUDIO_MASTER_KEY: randomBytes(32).toString('hex'),
    STUDIO_GATEWAY_PORT: '0',
  };
  const processes: ServerProcess[] = [];
  try {
    log('starting two gateways');
    const [a, b] = await Promise.all([
      startStudio(['gateway', 'start'], env),
      startStudio(['gateway', 'start'], env),
    ]);
    processes.push(a!, b!);
    const urls = processes.map((p) => p.url('Studio gateway'));
    await commandLoad(urls, adminKey, 500); // warm up
    log('one gateway');
    const one = await commandLoad([urls[0]!], adminKey, LOAD_MS);
    log('two gateways');
    const two = await commandLoad(urls, adminKey, LOAD_MS);
    out.push(
      `Commands (\`POST /v1/studios/create\`: one append each, answered after the read model shows it), ${CONCURRENCY} concurrent clients, ${LOAD_MS / 1000} s:`,
      '',
      '| gateways | commands/s | p50 ms | p99 ms | errors |',
      '|---|---|---|---|---|',
      `| 1 | ${Math.round(one.perSecond)} | ${one.p50.toFixed(1)} | ${one.p99.toFixed(1)} | ${one.errors} |`,
      `| 2 | ${Math.round(two.perSecond)} | ${two.p50.toFixed(1)} | ${two.p99.toFixed(1)} | ${two.errors} |`,
      '',
    );
  } finally {
    for (const p of processes) p.kill('SIGTERM');
    await Promise.all(processes.map((p) => p.exited));
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined);
    await admin.end().catch(() => undefined);
  }

  log(`loading ${REBUILD_EVENTS.toLocaleString('en-US')} events`);
  const big = await openPostgres();
  if (!big.store) return `${out.join('\n')}rebuild not run: ${big.skipped}\n`;
  try {
    const plan = planDataset(REBUILD_EVENTS);
    const loadStarted = performance.now();
    await loadDataset(big.store.events, plan);
    const loadMs = performance.now() - loadStarted;
    log('rebuilding');
    const rebuild = await measureRebuild(big.store.events, big.store.checkpoints, plan.shape, REBUILD_EVENTS);
    const runner = await measureRunnerStart(
      big.store.events,
      big.store.checkpoints,
      plan.shape,
      REBUILD_EVENTS,
    );
    out.push(
      `Rebuild from ${REBUILD_EVENTS.toLocaleString('en-US')} events (loaded in ${(loadMs / 1000).toFixed(1)} s):`,
      '',
      '| how | time | events/s | read models right |',
      '|---|---|---|---|',
      `| \`projections rebuild\` (each projection reads its own types) | ${(rebuild.ms / 1000).toFixed(1)} s | ${Math.round(rebuild.perSecond)} | ${rebuild.mismatch ?? 'yes'} |`,
      `| cold start of the projection runner (one pass over the whole log) | ${(runner.ms / 1000).toFixed(1)} s | ${Math.round(runner.perSecond)} | ${runner.mismatch ?? 'yes'} |`,
      '',
    );
  } finally {
    await big.dispose();
  }
  return out.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  runScaleBench().then((table) => process.stdout.write(`${table}\n`));
}
