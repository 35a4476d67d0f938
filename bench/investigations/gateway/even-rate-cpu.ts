/**
 * What does a request cost the main thread when requests come at an even rate, not in a closed
 * loop? The thin proxy (plain `node`) and Studio as `studio start`, governed (budget and rate
 * limits), on the embedded store (BENCH_GATEWAY_STORE), each in front of the mock upstream, asked
 * for JSON chat completions in an open loop at each rate of BENCH_RATES (default 100,300,1000) for
 * BENCH_SECONDS (default 5) after a warm-up, then in a closed loop (50 connections). Prints the main
 * thread's CPU per request and its share of the wall clock, and the p99.
 *   node --import tsx bench/investigations/gateway/even-rate-cpu.ts
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { closedLoop } from '../../gateway/closed-loop.ts';
import { openLoop } from '../../gateway/open-loop.ts';
import { spawnReady, spawnThinProxy, threadCpuMs } from '../../gateway/processes.ts';
import { chatRequestBody } from '../../gateway/settings.ts';
import { studioStoreFromEnv, withStudioTarget } from '../../gateway/studio.ts';
import { positiveFromEnv } from '../../lib/env.ts';
import { percentile, round3 } from '../../lib/stats.ts';

const RATES = (process.env.BENCH_RATES || '100,300,1000').split(',').map((raw) => {
  const rate = Number(raw);
  if (!Number.isInteger(rate) || rate <= 0)
    throw new Error(
      `BENCH_RATES must be whole numbers above 0, comma-separated, not "${process.env.BENCH_RATES}"`,
    );
  return rate;
});
const SECONDS = positiveFromEnv('BENCH_SECONDS') ?? 5;
const store = studioStoreFromEnv();
const log = (message: string) => process.stderr.write(`[bench:even-rate-cpu] ${message}\n`);

interface Server {
  pid: number;
  origin: string;
  path: string;
  headers: Record<string, string>;
}

const body = chatRequestBody('compat/bench');
const mainThreadMs = (pid: number) => threadCpuMs(pid).get(String(pid)) ?? Number.NaN;

/** One row per rate, then the closed loop's. */
async function measure(name: string, server: Server): Promise<string[]> {
  const options = { origin: server.origin, path: server.path, headers: server.headers, body };
  await openLoop({ ...options, rate: 500, durationMs: 3_000, valid: (status) => status === 200 });
  const rows: string[] = [];
  const row = (load: string, busyMs: number, wallMs: number, answered: number, p99: string) => {
    rows.push(
      `| ${name} | ${load} | ${round3(busyMs / answered)} | ${Math.round((busyMs / wallMs) * 100)} % | ${p99} |`,
    );
    log(rows.at(-1)!);
  };
  for (const rate of RATES) {
    await sleep(500);
    const before = mainThreadMs(server.pid);
    const started = performance.now();
    const result = await openLoop({
      ...options,
      rate,
      durationMs: SECONDS * 1_000,
      valid: (status) => status === 200,
    });
    const wall = performance.now() - started;
    const busy = mainThreadMs(server.pid) - before;
    row(`${rate}/s`, busy, wall, result.total.length, `${round3(percentile(result.total, 99))} ms`);
  }
  await sleep(500);
  const before = mainThreadMs(server.pid);
  const started = performance.now();
  const result = await closedLoop({ ...options, connections: 50, durationMs: SECONDS * 1_000 });
  row(
    'closed loop, 50 connections',
    mainThreadMs(server.pid) - before,
    performance.now() - started,
    result.ok,
    '–',
  );
  return rows;
}

const rows: string[] = [];
const mock = await spawnReady('mock upstream', ['--import', 'tsx', 'bench/gateway/mock-upstream.ts'], {});
try {
  const thin = await spawnThinProxy(mock.url);
  try {
    rows.push(
      ...(await measure('thin proxy', {
        pid: thin.pid!,
        origin: thin.url,
        path: '/v1/chat/completions',
        headers: { 'content-type': 'application/json' },
      })),
    );
  } finally {
    await thin.stop();
  }
} finally {
  await mock.stop();
}
rows.push(
  ...(await withStudioTarget(
    'even-rate-cpu',
    () => ({ store, governed: true }),
    (studio) =>
      measure('Studio (`studio start`, governed)', {
        pid: studio.child.pid!,
        origin: studio.child.url,
        path: '/v1/ai/chat/completions',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${studio.token}` },
      }),
  )),
);
process.stdout.write(
  [
    `Main-thread CPU per JSON chat completion, ${store} event store, ${SECONDS} s per load`,
    '',
    '| server | load | main-thread CPU ms per request | main thread busy | p99 |',
    '|---|---|---|---|---|',
    ...rows,
    '',
  ].join('\n'),
);
