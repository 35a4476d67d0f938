/**
 * Which system calls does a chat completion make, and how many? The thin proxy (plain `node`) and
 * Studio, governed (budget and rate limits), on the embedded store (BENCH_GATEWAY_STORE), started
 * as BENCH_STUDIO_START says (`studio start` by default), each in front of the mock upstream, asked
 * for JSON and streamed chat completions in a closed loop of 50 connections (or
 * BENCH_SYSCALL_CONNECTIONS: 1 asks one request at a time, as an even low rate does); `perf trace
 * -s` counts every thread's calls while BENCH_SYSCALL_REQUESTS (default 5,000) requests are answered
 * after a warm-up. Prints calls per request by system call, for all threads and for the main thread
 * alone.
 * Counts do not depend on how busy the machine is, as timings do: a change can be compared on a
 * noisy machine.
 *   node --import tsx bench/investigations/gateway/syscalls.ts
 * Needs `perf` (Debian's linux-perf) and the right to trace another process (root, or
 * kernel.perf_event_paranoid at -1).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { closedLoop } from '../../gateway/closed-loop.ts';
import { spawnReady, spawnThinProxy } from '../../gateway/processes.ts';
import { CONNECTIONS, chatRequestBody } from '../../gateway/settings.ts';
import { studioStoreFromEnv, withStudioTarget } from '../../gateway/studio.ts';
import { START_COMMAND, studioStartFromEnv } from '../../gateway/studio-start.ts';
import { positiveFromEnv } from '../../lib/env.ts';
import { round3 } from '../../lib/stats.ts';

const REQUESTS = positiveFromEnv('BENCH_SYSCALL_REQUESTS', { integer: true }) ?? 5_000;
const connections = positiveFromEnv('BENCH_SYSCALL_CONNECTIONS', { integer: true }) ?? CONNECTIONS;
const store = studioStoreFromEnv();
const start = studioStartFromEnv();
const log = (message: string) => process.stderr.write(`[bench:syscalls] ${message}\n`);

if (spawnSync('perf', ['--version']).error) {
  throw new Error('perf is not installed (Debian: apt-get install -y linux-perf)');
}

interface Server {
  pid: number;
  origin: string;
  path: string;
  headers: Record<string, string>;
  model: string;
}

/** Calls per system call, all threads together and the main thread (`pid`) alone. */
interface Counts {
  all: Map<string, number>;
  main: Map<string, number>;
}

/**
 * Reads `perf trace -s`'s summary: a block per thread (`node (<tid>), …`) and, in it, a row per
 * system call: its name, then its number of calls.
 */
function parseSummary(text: string, pid: number): Counts {
  const counts: Counts = { all: new Map(), main: new Map() };
  let mainThread = false;
  for (const line of text.split('\n')) {
    const thread = /^\s*\S.*\((\d+)\), \d+ events/.exec(line);
    if (thread) {
      mainThread = Number(thread[1]) === pid;
      continue;
    }
    const row = /^\s+([a-z_0-9]+)\s+(\d+)\s+\d+\s+[\d.]+/.exec(line);
    if (!row) continue;
    const [, name, calls] = row;
    for (const map of mainThread ? [counts.all, counts.main] : [counts.all]) {
      map.set(name!, (map.get(name!) ?? 0) + Number(calls));
    }
  }
  return counts;
}

/** Stops `perf trace`, which prints its summary as it exits. */
async function stopTrace(trace: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => trace.once('exit', resolve));
  trace.kill('SIGINT');
  await exited;
}

/** Calls per request of each system call while `server` answers REQUESTS requests. */
async function measure(server: Server, stream: boolean): Promise<Counts> {
  const body = chatRequestBody(server.model, stream);
  const load = (requests?: number) =>
    closedLoop({
      origin: server.origin,
      path: server.path,
      headers: server.headers,
      body,
      connections,
      durationMs: requests === undefined ? 3_000 : 600_000,
      ...(requests === undefined ? {} : { requests }),
    });
  await load();
  const trace = spawn('perf', ['trace', '-s', '-p', String(server.pid)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  trace.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
  trace.stderr.on('data', (chunk: Buffer) => (text += chunk.toString()));
  // perf attaches to each thread before it counts anything.
  await sleep(1_000);
  const result = await load(REQUESTS);
  await stopTrace(trace);
  if (result.failed > 0) throw new Error(`${result.failed} requests failed`);
  const counts = parseSummary(text, server.pid);
  if (counts.all.size === 0) throw new Error(`perf trace counted nothing: ${text.slice(0, 500)}`);
  for (const map of [counts.all, counts.main]) {
    for (const [name, calls] of map) map.set(name, calls / result.ok);
  }
  return counts;
}

const columns: { label: string; counts: Counts }[] = [];
const mock = await spawnReady('mock upstream', ['--import', 'tsx', 'bench/gateway/mock-upstream.ts'], {});
try {
  const thin = await spawnThinProxy(mock.url);
  try {
    const server = {
      pid: thin.pid,
      origin: thin.url,
      path: '/v1/chat/completions',
      headers: { 'content-type': 'application/json' },
      model: 'bench',
    };
    for (const stream of [false, true]) {
      log(`thin proxy, ${stream ? 'stream' : 'JSON'}`);
      columns.push({
        label: `thin proxy, ${stream ? 'stream' : 'JSON'}`,
        counts: await measure(server, stream),
      });
    }
  } finally {
    await thin.stop();
  }
} finally {
  await mock.stop();
}
await withStudioTarget(
  'syscalls',
  () => ({ store, start, governed: true }),
  async (studio) => {
    const server = {
      pid: studio.child.pid,
      origin: studio.child.url,
      path: '/v1/ai/chat/completions',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${studio.token}` },
      model: 'compat/bench',
    };
    for (const stream of [false, true]) {
      log(`Studio, ${stream ? 'stream' : 'JSON'}`);
      columns.push({ label: `Studio, ${stream ? 'stream' : 'JSON'}`, counts: await measure(server, stream) });
    }
  },
);

const names = [...new Set(columns.flatMap((c) => [...c.counts.all.keys()]))]
  .filter((name) => columns.some((c) => (c.counts.all.get(name) ?? 0) >= 0.05))
  .sort(
    (a, b) =>
      Math.max(...columns.map((c) => c.counts.all.get(b) ?? 0)) -
      Math.max(...columns.map((c) => c.counts.all.get(a) ?? 0)),
  );
const cell = (n: number | undefined) => (n === undefined || n < 0.005 ? '–' : String(round3(n)));
const sum = (map: Map<string, number>) => [...map.values()].reduce((a, b) => a + b, 0);
process.stdout.write(
  [
    `System calls per chat completion: ${connections === 1 ? 'one request at a time' : `${connections} connections, closed loop`}, ${REQUESTS} requests counted; Studio as ${START_COMMAND[start]}, governed, ${store} event store`,
    '',
    `| system call: all threads (main thread) | ${columns.map((c) => c.label).join(' | ')} |`,
    `|---|${columns.map(() => '---').join('|')}|`,
    ...names.map(
      (name) =>
        `| ${name} | ${columns.map((c) => `${cell(c.counts.all.get(name))} (${cell(c.counts.main.get(name))})`).join(' | ')} |`,
    ),
    `| all | ${columns.map((c) => `${cell(sum(c.counts.all))} (${cell(sum(c.counts.main))})`).join(' | ')} |`,
    '',
  ].join('\n'),
);
