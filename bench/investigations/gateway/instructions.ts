/**
 * Instructions per request, counted by callgrind: immune to a machine shared with other work, where
 * CPU time is not (caches, frequency, SMT). Starts the mock, the thin proxy and Studio (a budget and
 * rate limits set, request log at its default level) each under `valgrind --tool=callgrind` with
 * instrumentation off, warms each up (V8 optimizes what it runs often), turns instrumentation on,
 * then counts the instructions of its process over a closed loop of JSON then streamed chat
 * completions and divides by the requests answered.
 *   node --import tsx bench/investigations/gateway/instructions.ts
 *   BENCH_INSTR_REQUESTS=N (default 200 counted per mode; the warm-up is 10× that)
 *   BENCH_GATEWAY_STORE=sqlite|memory|postgres (default sqlite)
 *   BENCH_INSTR_TARGETS=thin,studio      (default both)
 * Needs valgrind (Debian: `apt-get install valgrind`); slow: several minutes, most of it start-up.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { closedLoop } from '../../gateway/closed-loop.ts';
import { type Child, spawnReady, spawnThinProxy } from '../../gateway/processes.ts';
import { chatRequestBody } from '../../gateway/settings.ts';
import { startStudioTarget, studioStoreFromEnv } from '../../gateway/studio.ts';
import { listFromEnv, positiveFromEnv } from '../../lib/env.ts';

const run = promisify(execFile);
const counted = positiveFromEnv('BENCH_INSTR_REQUESTS') ?? 200;
const store = studioStoreFromEnv();
const wanted = listFromEnv('BENCH_INSTR_TARGETS', ['thin', 'studio'], ['thin', 'studio']);
const log = (message: string) => process.stderr.write(`[bench:instructions] ${message}\n`);

const callgrind = (outDir: string) => [
  'valgrind',
  '--tool=callgrind',
  // V8 rewrites the code it generates: valgrind must notice, or it runs stale translations.
  '--smc-check=all-non-file',
  // Start-up runs uninstrumented (faster); counting begins when instrumentation is turned on.
  '--instr-atstart=no',
  `--callgrind-out-file=${join(outDir, 'callgrind.%p')}`,
];

/** Instructions counted in `pid` while `work` runs (instrumentation already on). */
async function countDuring(pid: number, outDir: string, work: () => Promise<void>): Promise<number> {
  await run('callgrind_control', ['--zero', String(pid)]);
  await work();
  await run('callgrind_control', ['--dump', String(pid)]);
  const dumps = (await readdir(outDir)).filter((f) => f.startsWith(`callgrind.${pid}.`)).sort();
  const text = await readFile(join(outDir, dumps.at(-1)!), 'utf8');
  const totals = /^(?:totals|summary):\s+(\d+)/m.exec(text);
  if (!totals) throw new Error(`no totals in ${dumps.at(-1)}`);
  await Promise.all(dumps.map((f) => rm(join(outDir, f))));
  return Number(totals[1]);
}

const dir = await mkdtemp(join(tmpdir(), 'studio-bench-instructions-'));
const children: Child[] = [];
const lines = [
  `Instructions per request (callgrind), ${store} event store, closed loop of 8 connections, ${counted} requests per mode counted after ${counted * 10} uncounted:`,
  '',
  '| target | JSON instructions/request | stream instructions/request | requests counted (JSON / stream) |',
  '|---|---|---|---|',
];
try {
  const mock = await spawnReady('mock upstream', ['--import', 'tsx', 'bench/gateway/mock-upstream.ts'], {});
  children.push(mock);
  const targets: {
    name: string;
    child: Child;
    path: string;
    headers: Record<string, string>;
    model: string;
  }[] = [];
  if (wanted.includes('thin')) {
    log('thin proxy under callgrind…');
    const thin = await spawnThinProxy(mock.url, {
      options: { wrap: callgrind(dir), timeoutMs: 600_000 },
    });
    children.push(thin);
    targets.push({
      name: 'thin proxy (express 5 + undici, plain node)',
      child: thin,
      path: '/v1/chat/completions',
      headers: { 'content-type': 'application/json' },
      model: 'bench',
    });
  }
  if (wanted.includes('studio')) {
    log('Studio under callgrind (start-up takes minutes)…');
    const studio = await startStudioTarget({
      dir: join(dir, 'studio'),
      mockUrl: mock.url,
      store,
      governed: true,
      wrap: callgrind(dir),
    });
    children.push(studio.child);
    targets.push({
      name: 'Studio, a budget and rate limits set',
      child: studio.child,
      path: '/v1/ai/chat/completions',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${studio.token}` },
      model: 'compat/bench',
    });
  }
  for (const target of targets) {
    const load = (stream: boolean, requests: number) =>
      closedLoop({
        origin: target.child.url,
        path: target.path,
        headers: target.headers,
        body: chatRequestBody(target.model, stream),
        connections: 8,
        durationMs: 3_600_000,
        requests,
      });
    log(`${target.name}: warm-up, uninstrumented`);
    for (const stream of [false, true, false, true]) await load(stream, counted * 5);
    // Instrumented code runs slowly at first (everything is translated again): a few more requests.
    await run('callgrind_control', ['--instr=on', String(target.child.pid)]);
    for (const stream of [false, true]) await load(stream, 40);
    const per: string[] = [];
    const answeredBy: number[] = [];
    for (const stream of [false, true]) {
      let answered = 0;
      const instructions = await countDuring(target.child.pid, dir, async () => {
        const result = await load(stream, counted);
        if (result.failed > 0) throw new Error(`${target.name}: ${result.failed} requests failed`);
        answered = result.ok;
      });
      per.push(Math.round(instructions / answered).toLocaleString('en-US'));
      answeredBy.push(answered);
      log(
        `${target.name} ${stream ? 'stream' : 'json'}: ${per.at(-1)} instructions/request over ${answered}`,
      );
    }
    lines.push(`| ${target.name} | ${per[0]} | ${per[1]} | ${answeredBy.join(' / ')} |`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
} finally {
  for (const child of children.reverse()) await child.stop();
  await rm(dir, { recursive: true, force: true });
}
