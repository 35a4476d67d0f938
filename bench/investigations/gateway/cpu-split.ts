/**
 * Is Studio's extra CPU per request spent in the kernel (its extra system calls: WAL writes, locks,
 * syncs) or in user space (JavaScript, SQLite's own code, garbage collection)? The thin proxy
 * (plain `node`) and Studio as `npm start` starts it (`studio start`: the gateway and the runtime
 * in one process, unless BENCH_STUDIO_START says otherwise), a hard budget and rate limits set,
 * its request log at the default level, on the embedded store unless BENCH_GATEWAY_STORE says
 * otherwise, take turns in one run under a closed loop of 50 connections, JSON then streamed chat
 * completions, the other paused; user and system time per request come from /proc/<pid>/stat.
 *   node --import tsx bench/investigations/gateway/cpu-split.ts
 *   BENCH_ROUNDS=N (default 5)   BENCH_SECONDS=N (default 5 per mode, after 3 s of warm-up)
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closedLoop } from '../../gateway/closed-loop.ts';
import { type Child, cpuSplitMs, spawnReady, spawnThinProxy, whilePaused } from '../../gateway/processes.ts';
import { CONNECTIONS, chatRequestBody } from '../../gateway/settings.ts';
import { loadStudio, startStudioTarget, studioStoreFromEnv } from '../../gateway/studio.ts';
import { START_COMMAND, studioStartFromEnv } from '../../gateway/studio-start.ts';
import { positiveFromEnv } from '../../lib/env.ts';
import { formatRate, paired, summarize } from '../../lib/stats.ts';

const ROUNDS = positiveFromEnv('BENCH_ROUNDS', { integer: true }) ?? 5;
const SECONDS = positiveFromEnv('BENCH_SECONDS') ?? 5;
const store = studioStoreFromEnv();
const start = studioStartFromEnv();
const log = (message: string) => process.stderr.write(`[bench:cpu-split] ${message}\n`);

type Load = (stream: boolean, durationMs: number) => Promise<{ ok: number; failed: number }>;
interface Measured {
  label: string;
  pid: number;
  load: Load;
  /** µs per request, one per round, by mode. */
  user: { json: number[]; stream: number[] };
  system: { json: number[]; stream: number[] };
}

async function measure(target: Measured, stream: boolean): Promise<void> {
  const before = cpuSplitMs(target.pid);
  const result = await target.load(stream, SECONDS * 1_000);
  if (result.failed > 0) throw new Error(`${target.label}: ${result.failed} requests failed`);
  const after = cpuSplitMs(target.pid);
  const mode = stream ? 'stream' : 'json';
  target.user[mode].push(((after.user - before.user) * 1_000) / result.ok);
  target.system[mode].push(((after.system - before.system) * 1_000) / result.ok);
}

const dir = await mkdtemp(join(tmpdir(), 'studio-bench-cpu-split-'));
const children: Child[] = [];
const targets: Measured[] = [];
const emptyModes = () => ({ json: [], stream: [] });
try {
  const mock = await spawnReady('mock upstream', ['--import', 'tsx', 'bench/gateway/mock-upstream.ts'], {});
  children.push(mock);
  const thin = await spawnThinProxy(mock.url);
  children.push(thin);
  targets.push({
    label: 'thin proxy',
    pid: thin.pid,
    load: (stream, durationMs) =>
      closedLoop({
        origin: thin.url,
        path: '/v1/chat/completions',
        headers: { 'content-type': 'application/json' },
        body: chatRequestBody('bench', stream),
        connections: CONNECTIONS,
        durationMs,
      }),
    user: emptyModes(),
    system: emptyModes(),
  });
  const studio = await startStudioTarget({
    dir: join(dir, 'studio'),
    mockUrl: mock.url,
    store,
    governed: true,
  });
  children.push(studio.child);
  targets.push({
    label: `Studio (${START_COMMAND[start]}, governed, ${store} store)`,
    pid: studio.child.pid,
    load: (stream, durationMs) => loadStudio(studio, stream, durationMs),
    user: emptyModes(),
    system: emptyModes(),
  });
  const alone = (target: Measured, work: () => Promise<void>) =>
    whilePaused(
      targets.filter((t) => t !== target).map((t) => t.pid),
      work,
    );
  log('warm-up');
  for (const target of targets)
    await alone(target, async () => {
      await target.load(false, 3_000);
      await target.load(true, 3_000);
    });
  for (let round = 0; round < ROUNDS; round++) {
    for (const target of round % 2 === 0 ? targets : [...targets].reverse())
      await alone(target, async () => {
        await measure(target, false);
        await measure(target, true);
      });
    log(`round ${round + 1} of ${ROUNDS} done`);
  }
} finally {
  for (const child of children.reverse()) await child.stop().catch(() => undefined);
  await rm(dir, { recursive: true, force: true }).catch(() => undefined);
}

const [thin, studio] = targets as [Measured, Measured];
const us = (values: number[]) => formatRate(summarize(values));
const over = (a: number[], b: number[]) => `${formatRate(paired(a, b, (x, y) => x - y))} µs`;
const lines = [
  `## CPU per chat completion, user and system: the thin proxy and Studio as ${START_COMMAND[start]}, a hard budget and rate limits set, ${store} event store`,
  '',
  `${ROUNDS} rounds of ${SECONDS} s per mode, ${CONNECTIONS} connections, the servers in turns; µs per request, median (min–max).`,
  '',
  '| mode | thin proxy user | thin proxy system | Studio user | Studio system | Studio over thin, user | Studio over thin, system |',
  '|---|---|---|---|---|---|---|',
  ...(['json', 'stream'] as const).map(
    (mode) =>
      `| ${mode} | ${us(thin.user[mode])} | ${us(thin.system[mode])} | ${us(studio.user[mode])} | ${us(studio.system[mode])} | ` +
      `${over(studio.user[mode], thin.user[mode])} | ${over(studio.system[mode], thin.system[mode])} |`,
  ),
];
process.stdout.write(`${lines.join('\n')}\n`);
