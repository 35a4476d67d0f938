/**
 * Gateway overhead on `POST /v1/ai/chat/completions`, side by side in one run (method: "How we
 * measure" in docs/benchmarks.md): a mock upstream on loopback reached directly, through nginx
 * (the floor of a proxy in C; skipped when not installed), through a thin express + undici proxy
 * (plain JavaScript under plain `node`), through Studio started as `studio start` (gateway and
 * agent runtime in one process, as users start it) and as `studio gateway start` (the gateway
 * alone), and through Portkey's gateway; JSON and streamed. Prints the aims for both starts side by
 * side, against the thin proxy of the same run.
 * Every server runs in its own process so its CPU time and peak RSS come from /proc, and every
 * server but the mock is paused while another is measured.
 *
 *   node --import tsx bench/gateway/index.ts       (BENCH_QUICK=1 for a short smoke run)
 *
 * Environment:
 *   BENCH_QUICK=1                 1 repetition, short time boxes
 *   BENCH_REPS=N                  interleaved repetitions (default 3, quick 1)
 *   BENCH_GATEWAY_SECONDS=N       closed-loop time box per target and mode (default 5, quick 1.5)
 *   BENCH_GATEWAY_STORE=sqlite    Studio's event store: sqlite (default, as `studio start`), memory, or
 *                                 postgres (a fresh database on TEST_DATABASE_URL / DATABASE_URL / local)
 *   BENCH_GATEWAY_TARGETS=a,b     subset of direct,nginx,thin,studio,studio-governed,studio-limited,
 *                                 gateway-governed,studio-governed-memory,studio-unheld,
 *                                 studio-governed-unsynced,studio-governed-heap-growth,studio-routed,portkey
 *                                 (studio-governed: a hard budget and rate limits set; gateway-governed: the
 *                                 same started as `studio gateway start`, every other Studio target as
 *                                 `studio start`; studio-limited: the rate limits alone, no hard budget;
 *                                 studio-governed-memory:
 *                                 the same on the memory store, Studio's own code without the embedded store;
 *                                 studio-unheld: Studio whose answers do not wait for their usage event, the
 *                                 cost of holding them;
 *                                 studio-governed-unsynced: studio-governed with STUDIO_SQLITE_SYNCHRONOUS=normal;
 *                                 studio-governed-heap-growth: studio-governed with V8's old generation grown
 *                                 by 1.5× its live size after each full collection, not V8's own factor (up to 4×);
 *                                 studio-routed: the model asked through a fallback route whose first target answers)
 *
 * autocannon and @portkey-ai/gateway are installed into a temp directory at run time (see tools.ts).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { listFromEnv, positiveFromEnv, switchFromEnv } from '../lib/env.ts';
import { percentile, round3 } from '../lib/stats.ts';
import { findNginx, startNginx } from './nginx.ts';
import { type OpenLoopResult, openLoop } from './open-loop.ts';
import {
  type Child,
  cpuMs,
  freePort,
  peakRssMb,
  ROOT,
  resetPeakRss,
  spawnProbed,
  spawnReady,
  spawnThinProxy,
  whilePaused,
} from './processes.ts';
import { report } from './report.ts';
import {
  ALL_TARGETS,
  CONNECTIONS,
  chatRequestBody,
  EVEN_RATE,
  emptySamples,
  evenRateFor,
  HEAP_GROWTH_FLAGS,
  LABELS,
  type Mode,
  type Samples,
  type Target,
  type TargetKey,
  TITLE,
  UNLOADED_RATE,
} from './settings.ts';
import { FALLBACK_ROUTE, type StudioStore, startStudioTarget, studioStoreFromEnv } from './studio.ts';
import type { StudioStart } from './studio-start.ts';
import { installTools, type Tools } from './tools.ts';

export interface GatewayBenchOptions {
  quick?: boolean;
  reps?: number;
  /** Closed-loop time box per target and mode, seconds. */
  seconds?: number;
  store?: StudioStore;
  targets?: TargetKey[];
  log?: (message: string) => void;
}

const JSON_TEXT = 'Hello! How can I help you today?';

const bodyOf = (target: Target, mode: Mode) => chatRequestBody(target.model, mode === 'stream');

function valid(mode: Mode, status: number, text: string): boolean {
  if (status !== 200) return false;
  if (mode === 'json') return text.includes(JSON_TEXT);
  return text.includes(' I help?') && /data: \[DONE\]\s*$/.test(text);
}

/** A stricter check of one answer of each kind before measuring. */
async function check(target: Target): Promise<void> {
  for (const mode of ['json', 'stream'] as const) {
    const res = await fetch(target.origin + target.path, {
      method: 'POST',
      headers: target.headers,
      body: bodyOf(target, mode),
    });
    const text = await res.text();
    if (!valid(mode, res.status, text)) throw new Error(`${mode}: HTTP ${res.status} ${text.slice(0, 300)}`);
    if (mode === 'stream') {
      const events = text.split('\n\n').filter((e) => e.startsWith('data: {'));
      if (events.length !== 5) throw new Error(`stream: ${events.length} chunks instead of 5: ${text}`);
    } else {
      const parsed = JSON.parse(text) as { choices?: { message?: { content?: string } }[] };
      if (parsed.choices?.[0]?.message?.content !== JSON_TEXT) throw new Error(`json: unexpected ${text}`);
    }
  }
}

/** The first line of an error, short enough for a table cell. */
const oneLine = (error: unknown) =>
  (error instanceof Error ? error.message : String(error)).split('\n')[0]!.slice(0, 240);

function optionsFromEnv(): GatewayBenchOptions {
  const targets = listFromEnv('BENCH_GATEWAY_TARGETS', ALL_TARGETS, []);
  return {
    quick: switchFromEnv('BENCH_QUICK'),
    reps: positiveFromEnv('BENCH_REPS'),
    seconds: positiveFromEnv('BENCH_GATEWAY_SECONDS'),
    store: studioStoreFromEnv(),
    ...(targets.length ? { targets } : {}),
  };
}

async function versionIn(dir: string): Promise<string> {
  try {
    return (JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return '?';
  }
}

export async function runGatewayBench(options: GatewayBenchOptions = {}): Promise<string> {
  const quick = options.quick ?? false;
  const reps = Math.round(options.reps ?? (quick ? 1 : 3));
  const seconds = options.seconds ?? (quick ? 1.5 : 5);
  const warmSeconds = quick ? 0.5 : 2;
  const openMs = quick ? 1_000 : 3_000;
  // Each open-loop measurement first sends at its rate untimed: a step from one rate to another
  // (the JSON at 100/s before the even 1,000/s) costs every target a transient of its own (new
  // connections, a young generation sized for the rate before) that is not the rate's latency.
  const openWarmUpMs = quick ? 500 : 2_000;
  const store = options.store ?? 'sqlite';
  const wanted = new Set(options.targets ?? ALL_TARGETS);
  wanted.add('direct'); // the floor every added latency is measured from
  const log = options.log ?? ((message: string) => process.stderr.write(`[bench:gateway] ${message}\n`));

  const started = performance.now();
  const date = new Date();
  const loadAtStart = loadavg()[0]!;
  const dir = await mkdtemp(join(tmpdir(), 'studio-bench-gateway-'));
  const children: Child[] = [];
  const stopAll = async () => {
    for (const child of children.splice(0).reverse()) await child.stop().catch(() => undefined);
  };
  const onSignal = () =>
    void stopAll().finally(() => rm(dir, { recursive: true, force: true }).finally(() => process.exit(130)));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  try {
    let tools: Tools;
    try {
      tools = await installTools(dir, log);
    } catch (error) {
      return `${TITLE}\n\nnot run: the load generator (autocannon) could not be installed: ${oneLine(error)}\n`;
    }
    const tsx = ['--import', 'tsx'];

    const mock = await spawnReady('mock upstream', [...tsx, 'bench/gateway/mock-upstream.ts'], {});
    children.push(mock);
    log(`mock upstream ${mock.url} (pid ${mock.pid})`);

    const targets: Target[] = [];
    const plain = { 'content-type': 'application/json' };
    targets.push({
      key: 'direct',
      label: LABELS.direct,
      proc: mock,
      origin: mock.url,
      path: '/v1/chat/completions',
      headers: plain,
      model: 'bench',
    });

    if (wanted.has('nginx')) {
      const base: Target = { ...targets[0]!, key: 'nginx', label: LABELS.nginx, proc: undefined, origin: '' };
      const binary = findNginx();
      if (!binary) targets.push({ ...base, notRun: 'nginx is not installed' });
      else {
        try {
          const nginx = await startNginx(binary, join(dir, 'nginx'), mock.url);
          children.push(nginx);
          targets.push({ ...base, proc: nginx, origin: nginx.url });
        } catch (error) {
          targets.push({ ...base, notRun: `it did not start: ${oneLine(error)}` });
        }
      }
    }

    if (wanted.has('thin')) {
      // Plain JavaScript under plain `node`, as such a proxy's users run it.
      const thin = await spawnThinProxy(mock.url);
      children.push(thin);
      targets.push({ ...targets[0]!, key: 'thin', label: LABELS.thin, proc: thin, origin: thin.url });
    }

    const studios: readonly {
      key: TargetKey;
      start: StudioStart;
      env: Record<string, string>;
      governed: boolean;
      /** With `governed`, `false` sets the rate limits alone. */
      budget?: boolean;
      routed: boolean;
      store?: StudioStore;
    }[] = [
      { key: 'studio', start: 'studio', env: {}, governed: false, routed: false },
      { key: 'studio-governed', start: 'studio', env: {}, governed: true, routed: false },
      { key: 'studio-limited', start: 'studio', env: {}, governed: true, budget: false, routed: false },
      { key: 'gateway-governed', start: 'gateway', env: {}, governed: true, routed: false },
      {
        key: 'studio-governed-memory',
        start: 'studio',
        env: {},
        governed: true,
        routed: false,
        store: 'memory',
      },
      {
        key: 'studio-unheld',
        start: 'studio',
        env: { BENCH_ANSWER_BEFORE_USAGE_DURABLE: '1' },
        governed: false,
        routed: false,
      },
      {
        key: 'studio-governed-unsynced',
        start: 'studio',
        env: { STUDIO_SQLITE_SYNCHRONOUS: 'normal' },
        governed: true,
        routed: false,
      },
      {
        key: 'studio-governed-heap-growth',
        start: 'studio',
        env: { BENCH_V8_FLAGS: HEAP_GROWTH_FLAGS },
        governed: true,
        routed: false,
      },
      {
        key: 'studio-routed',
        start: 'studio',
        env: { OPENAI_COMPATIBLE_MODELS: 'bench,bench-b' },
        governed: false,
        routed: true,
      },
    ];
    for (const studioTarget of studios.filter((s) => wanted.has(s.key))) {
      const { key, start, env, governed, budget, routed } = studioTarget;
      const base: Target = {
        key,
        label: studioTarget.store ? LABELS[key] : `${LABELS[key]} (${store} event store)`,
        origin: '',
        path: '/v1/ai/chat/completions',
        headers: plain,
        model: routed ? FALLBACK_ROUTE : 'compat/bench',
      };
      try {
        const studio = await startStudioTarget({
          dir: join(dir, key),
          mockUrl: mock.url,
          store: studioTarget.store ?? store,
          start,
          env,
          governed,
          budget,
          routed,
        });
        children.push(studio.child);
        targets.push({
          ...base,
          proc: studio.child,
          origin: studio.child.url,
          headers: { ...plain, authorization: `Bearer ${studio.token}` },
        });
      } catch (error) {
        targets.push({ ...base, notRun: `it did not start: ${oneLine(error)}` });
      }
    }

    if (wanted.has('portkey')) {
      const base: Target = {
        key: 'portkey',
        label: `${LABELS.portkey} ${'script' in tools.portkey ? tools.portkey.version : ''}`.trim(),
        origin: '',
        path: '/v1/chat/completions',
        headers: {
          ...plain,
          authorization: 'Bearer sk-bench',
          'x-portkey-provider': 'openai',
          'x-portkey-custom-host': `${mock.url}/v1`,
        },
        model: 'bench',
      };
      if ('notRun' in tools.portkey) targets.push({ ...base, notRun: tools.portkey.notRun });
      else {
        try {
          const port = await freePort();
          const origin = `http://127.0.0.1:${port}`;
          const portkey = await spawnProbed(
            'Portkey',
            [tools.portkey.script, '--headless', `--port=${port}`],
            { NODE_ENV: 'production' },
            origin,
            `${origin}/`,
          );
          children.push(portkey);
          targets.push({ ...base, proc: portkey, origin });
        } catch (error) {
          targets.push({ ...base, notRun: `it did not start: ${oneLine(error)}` });
        }
      }
    }

    for (const target of targets) {
      if (target.notRun) continue;
      try {
        await check(target);
      } catch (error) {
        target.notRun = `its answers were wrong: ${oneLine(error)}`;
        log(`${target.label}: ${target.notRun}`);
        await target.proc?.stop();
      }
    }
    const live = targets.filter((t) => !t.notRun);
    const samples = new Map<TargetKey, Samples>(targets.map((t) => [t.key, emptySamples()]));

    // While one target is measured every other server is paused; the mock, which they all call, never is.
    const alone = <T>(target: Target, work: () => Promise<T>) =>
      whilePaused(
        live.filter((t) => t !== target && t.proc !== mock).map((t) => t.proc!.pid),
        work,
      );

    const closedLoop = async (target: Target, mode: Mode, duration: number, record: boolean) => {
      const pid = target.proc!.pid;
      const { result, cpu } = await alone(target, async () => {
        const cpuBefore = cpuMs(pid);
        const result = await tools.autocannon({
          url: target.origin + target.path,
          connections: CONNECTIONS,
          duration,
          method: 'POST',
          headers: target.headers,
          body: bodyOf(target, mode),
        });
        return { result, cpu: cpuMs(pid) - cpuBefore };
      });
      const answered = result['2xx'] + result.non2xx;
      const rps = result['2xx'] / result.duration;
      const s = samples.get(target.key)!;
      if (result.non2xx + result.errors + result.timeouts > 0) {
        s.errors.push(
          `${mode}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts of ${result.requests.total}`,
        );
      }
      if (record) {
        s.rps[mode].push(rps);
        s.cpu[mode].push(answered > 0 ? cpu / answered : Number.NaN);
      }
      log(
        `  ${target.key.padEnd(7)} ${mode.padEnd(6)} closed loop ${round3(rps)} req/s, ` +
          `${answered > 0 ? round3(cpu / answered) : '–'} CPU ms/req${record ? '' : ' (warm-up)'}`,
      );
    };

    const measureOpen = async (target: Target, mode: Mode, rate: number): Promise<OpenLoopResult> => {
      const result = await alone(target, async () => {
        await sleep(500);
        return openLoop({
          origin: target.origin,
          path: target.path,
          headers: target.headers,
          body: bodyOf(target, mode),
          rate,
          durationMs: openMs,
          warmUpMs: openWarmUpMs,
          valid: (status, text) => valid(mode, status, text),
        });
      });
      const s = samples.get(target.key)!;
      if (result.errors > 0)
        s.errors.push(`open loop ${mode} @${rate}/s: ${result.errors} errors (${result.firstError})`);
      log(
        `  ${target.key.padEnd(7)} ${mode.padEnd(6)} ${rate}/s p50 ${round3(percentile(result.total, 50))} ms, ` +
          `p99 ${round3(percentile(result.total, 99))} ms` +
          (mode === 'stream' ? `, first chunk p50 ${round3(percentile(result.first, 50))} ms` : '') +
          ` (generator late p99 ${round3(result.lateP99)} ms)`,
      );
      return result;
    };

    // The p99 aim's rate, fixed from the thin proxy's closed loop (JSON) of the first repetition.
    let evenRate: number | undefined;
    let thinClosedLoop: number | undefined;

    log(`warm-up: ${warmSeconds} s JSON + ${warmSeconds} s stream per target`);
    for (const target of live) {
      for (const mode of ['json', 'stream'] as const) await closedLoop(target, mode, warmSeconds, false);
    }

    for (let rep = 1; rep <= reps; rep++) {
      log(`repetition ${rep}/${reps}`);
      for (const target of live) resetPeakRss(target.proc!.pid);
      for (const mode of ['json', 'stream'] as const) {
        for (const target of live) {
          await sleep(300);
          await closedLoop(target, mode, seconds, true);
        }
      }
      for (const target of live) samples.get(target.key)!.rss.push(peakRssMb(target.proc!.pid));
      if (evenRate === undefined) {
        thinClosedLoop = samples.get('thin')?.rps.json[0];
        evenRate = evenRateFor(thinClosedLoop);
        log(`the p99 aim's even rate: ${evenRate} req/s`);
      }
      for (const target of live) {
        const r = await measureOpen(target, 'json', UNLOADED_RATE);
        const s = samples.get(target.key)!;
        s.json.p50.push(percentile(r.total, 50));
        s.json.p99.push(percentile(r.total, 99));
      }
      for (const target of live) {
        const r = await measureOpen(target, 'stream', UNLOADED_RATE);
        const s = samples.get(target.key)!;
        s.first.p50.push(percentile(r.first, 50));
        s.first.p99.push(percentile(r.first, 99));
        s.last.p50.push(percentile(r.total, 50));
        s.last.p99.push(percentile(r.total, 99));
        s.transitFirst.p50.push(percentile(r.firstChunkTransit, 50));
        s.transitFirst.p99.push(percentile(r.firstChunkTransit, 99));
        s.transitMax.p50.push(percentile(r.chunkTransitMax, 50));
        s.transitMax.p99.push(percentile(r.chunkTransitMax, 99));
      }
      // Portkey tops out near 1,000 req/s here: an even 1,000 req/s would only measure its queue.
      for (const target of live.filter((t) => t.key !== 'portkey')) {
        const r = await measureOpen(target, 'json', evenRate);
        const s = samples.get(target.key)!;
        s.even.p50.push(percentile(r.total, 50));
        s.even.p99.push(percentile(r.total, 99));
      }
    }

    const versions = {
      express: await versionIn(join(ROOT, 'node_modules/express')),
      undici: await versionIn(join(ROOT, 'node_modules/undici')),
      autocannon: tools.autocannonVersion,
    };
    const elapsedS = (performance.now() - started) / 1000;
    return report({
      targets,
      samples,
      reps,
      seconds,
      openMs,
      openWarmUpMs,
      store,
      versions,
      date,
      loadAtStart,
      loadAtEnd: loadavg()[0]!,
      elapsedS,
      quick,
      evenRate: evenRate ?? EVEN_RATE,
      thinClosedLoop,
    });
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await stopAll();
    await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  runGatewayBench(optionsFromEnv()).then(
    (table) => process.stdout.write(`${table}\n`),
    (error) => {
      process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
