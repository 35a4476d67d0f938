/**
 * Gateway overhead on `POST /v1/ai/chat/completions`, side by side in one run (method: "How we
 * measure" in docs/benchmarks.md): a mock upstream on loopback reached directly, through a thin
 * express + undici proxy, through Studio, and through Portkey's gateway; JSON and streamed.
 * Every server runs in its own process so its CPU time and peak RSS come from /proc.
 *
 *   node --import tsx bench/gateway/index.ts       (BENCH_QUICK=1 for a short smoke run)
 *
 * Environment:
 *   BENCH_QUICK=1                 1 repetition, short time boxes
 *   BENCH_REPS=N                  interleaved repetitions (default 3, quick 1)
 *   BENCH_GATEWAY_SECONDS=N       closed-loop time box per target and mode (default 5, quick 1.5)
 *   BENCH_GATEWAY_STORE=pglite    Studio's event store: pglite (default, as `studio start`), memory, or
 *                                 postgres (a fresh database on TEST_DATABASE_URL / DATABASE_URL / local)
 *   BENCH_GATEWAY_TARGETS=a,b     subset of direct,thin,studio,portkey
 *
 * autocannon and @portkey-ai/gateway are installed into a temp directory at run time (see tools.ts).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { positiveFromEnv } from '../lib/env.ts';
import { round3, type Summary, summarize } from '../lib/stats.ts';
import { type OpenLoopResult, openLoop, percentile } from './open-loop.ts';
import {
  type Child,
  cpuMs,
  freePort,
  peakRssMb,
  ROOT,
  resetPeakRss,
  spawnProbed,
  spawnReady,
} from './processes.ts';
import { type StudioStore, startStudioTarget, studioStoreFromEnv } from './studio.ts';
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

type TargetKey = 'direct' | 'thin' | 'studio' | 'portkey';
type Mode = 'json' | 'stream';
const ALL_TARGETS: readonly TargetKey[] = ['direct', 'thin', 'studio', 'portkey'];
const LABELS: Record<TargetKey, string> = {
  direct: 'direct (client → mock)',
  thin: 'thin proxy (express 5 + undici Pool)',
  studio: 'Studio',
  portkey: 'Portkey',
};

const TITLE = '## Gateway overhead on chat completions';
const CONNECTIONS = 50;
const UNLOADED_RATE = 200;
const EVEN_RATE = 1_000;
const MESSAGES = [
  { role: 'system', content: 'You are a helpful assistant.' },
  { role: 'user', content: 'Say hello in a few words.' },
];
const JSON_TEXT = 'Hello! How can I help you today?';

/** The gateway's aims (docs/benchmarks.md, "How we measure"), checked for Studio in this run. */
const AIM = {
  timesPortkey: 5,
  timesThin: 0.75,
  cpuMsPerRequest: 0.2,
  firstChunkAddedMs: 1,
  p99VsThinAt1000Ms: 2,
  addedP99At1000Ms: 1,
  rssMb: 150,
};

interface Target {
  key: TargetKey;
  label: string;
  /** The process whose CPU and RSS are measured (the mock itself for `direct`). */
  proc?: Child;
  origin: string;
  path: string;
  headers: Record<string, string>;
  model: string;
  notRun?: string;
}

interface Samples {
  rps: Record<Mode, number[]>;
  cpu: Record<Mode, number[]>;
  rss: number[];
  /** Open loop at UNLOADED_RATE: p50/p99 of total (JSON), first chunk and last chunk (stream). */
  json: { p50: number[]; p99: number[] };
  first: { p50: number[]; p99: number[] };
  last: { p50: number[]; p99: number[] };
  even: { p50: number[]; p99: number[] };
  errors: string[];
}

const emptySamples = (): Samples => ({
  rps: { json: [], stream: [] },
  cpu: { json: [], stream: [] },
  rss: [],
  json: { p50: [], p99: [] },
  first: { p50: [], p99: [] },
  last: { p50: [], p99: [] },
  even: { p50: [], p99: [] },
  errors: [],
});

const bodyOf = (target: Target, mode: Mode) =>
  JSON.stringify({
    model: target.model,
    messages: MESSAGES,
    max_tokens: 32,
    ...(mode === 'stream' ? { stream: true } : {}),
  });

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
  const env = process.env;
  const targets = env.BENCH_GATEWAY_TARGETS?.split(',')
    .map((s) => s.trim())
    .filter((s): s is TargetKey => (ALL_TARGETS as readonly string[]).includes(s));
  return {
    quick: env.BENCH_QUICK === '1',
    reps: positiveFromEnv('BENCH_REPS'),
    seconds: positiveFromEnv('BENCH_GATEWAY_SECONDS'),
    store: studioStoreFromEnv(),
    ...(targets?.length ? { targets } : {}),
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
  const store = options.store ?? 'pglite';
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

    if (wanted.has('thin')) {
      const thin = await spawnReady('thin proxy', [...tsx, 'bench/gateway/thin-proxy.ts'], {
        UPSTREAM: mock.url,
        NODE_ENV: 'production',
      });
      children.push(thin);
      targets.push({ ...targets[0]!, key: 'thin', label: LABELS.thin, proc: thin, origin: thin.url });
    }

    if (wanted.has('studio')) {
      const base: Target = {
        key: 'studio',
        label: `${LABELS.studio} (${store} event store)`,
        origin: '',
        path: '/v1/ai/chat/completions',
        headers: plain,
        model: 'compat/bench',
      };
      try {
        const studio = await startStudioTarget({ dir, mockUrl: mock.url, store });
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

    const closedLoop = async (target: Target, mode: Mode, duration: number, record: boolean) => {
      const pid = target.proc!.pid;
      const cpuBefore = cpuMs(pid);
      const result = await tools.autocannon({
        url: target.origin + target.path,
        connections: CONNECTIONS,
        duration,
        method: 'POST',
        headers: target.headers,
        body: bodyOf(target, mode),
      });
      const cpu = cpuMs(pid) - cpuBefore;
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
      await sleep(500);
      const result = await openLoop({
        origin: target.origin,
        path: target.path,
        headers: target.headers,
        body: bodyOf(target, mode),
        rate,
        durationMs: openMs,
        valid: (status, text) => valid(mode, status, text),
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
      }
      // Portkey tops out near 1,000 req/s here: an even 1,000 req/s would only measure its queue.
      for (const target of live.filter((t) => t.key !== 'portkey')) {
        const r = await measureOpen(target, 'json', EVEN_RATE);
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
      store,
      versions,
      date,
      loadAtStart,
      loadAtEnd: loadavg()[0]!,
      elapsedS,
      quick,
    });
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await stopAll();
    await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }
}

// ---------------------------------------------------------------------------------------------
// The report

interface ReportInput {
  targets: Target[];
  samples: Map<TargetKey, Samples>;
  reps: number;
  seconds: number;
  openMs: number;
  store: string;
  versions: { express: string; undici: string; autocannon: string };
  date: Date;
  loadAtStart: number;
  loadAtEnd: number;
  elapsedS: number;
  quick: boolean;
}

/** `1.23` or `1.23 (1.10–1.40)` */
function fmt(summary: Summary | undefined, unit = ''): string {
  if (!summary || Number.isNaN(summary.median)) return '–';
  const v = (x: number) => `${round3(x)}${unit}`;
  return summary.runs === 1 || summary.min === summary.max
    ? v(summary.median)
    : `${v(summary.median)} (${v(summary.min)}–${v(summary.max)})`;
}

/** Signed: `+0.42 ms` */
function fmtAdded(summary: Summary | undefined): string {
  if (!summary || Number.isNaN(summary.median)) return '–';
  const v = (x: number) => `${x >= 0 ? '+' : '−'}${round3(Math.abs(x))}`;
  return summary.runs === 1 || summary.min === summary.max
    ? `${v(summary.median)}`
    : `${v(summary.median)} (${v(summary.min)} to ${v(summary.max)})`;
}

/** Per repetition a[i] op b[i] (the targets ran side by side in each), then median with min–max. */
function paired(a: number[], b: number[], op: (x: number, y: number) => number): Summary | undefined {
  const n = Math.min(a.length, b.length);
  return summarize(Array.from({ length: n }, (_, i) => op(a[i]!, b[i]!)).filter((x) => Number.isFinite(x)));
}

const minus = (x: number, y: number) => x - y;
const ratio = (x: number, y: number) => x / y;

function report(input: ReportInput): string {
  const { targets, samples } = input;
  const s = (key: TargetKey) => samples.get(key);
  const ran = (key: TargetKey) => targets.some((t) => t.key === key && !t.notRun);
  const direct = s('direct')!;
  /** Its closed-loop JSON maximum in this run, when an even EVEN_RATE is more than half of it. */
  const saturated = (key: TargetKey): number | undefined => {
    const max = summarize(s(key)?.rps.json ?? [])?.median;
    return max !== undefined && max < EVEN_RATE * 2 ? max : undefined;
  };
  const saturation = (key: TargetKey) => {
    const max = saturated(key);
    return max === undefined ? '' : ' ¹';
  };
  const cpu = cpus();
  const out: string[] = [TITLE, ''];
  out.push(
    `${input.date.toISOString().slice(0, 10)}, ${cpu.length} × ${cpu[0]?.model.trim() ?? 'CPU'}, ` +
      `${round3(totalmem() / 2 ** 30)} GiB, Node ${process.version}, load average ${loadavgText(input)}. ` +
      `${input.quick ? '**QUICK smoke run.** ' : ''}` +
      `${input.reps} interleaved repetition${input.reps > 1 ? 's' : ''}, median (min–max). ` +
      `express ${input.versions.express}, undici ${input.versions.undici}, autocannon ${input.versions.autocannon}. ` +
      `Studio: bench/gateway/studio-launcher.ts (startGateway + loadConfig(env), as \`studio gateway start\`), ${input.store} event store, LOG_LEVEL=warn, ` +
      'NODE_ENV=production, model `compat/bench` (openai-compatible provider) → mock. ' +
      `Run took ${Math.round(input.elapsedS)} s.`,
    '',
    `Closed loop: autocannon, ${CONNECTIONS} connections, ${input.seconds} s per target and mode. ` +
      'CPU ms per request: utime+stime of the server process (/proc/<pid>/stat) over requests answered; ' +
      'for direct, the mock’s own. Peak RSS: VmHWM after `clear_refs` = 5, over both closed-loop runs.',
    '',
    '| target | req/s JSON | req/s stream | CPU ms/req JSON | CPU ms/req stream | peak RSS MB |',
    '|---|---|---|---|---|---|',
  );
  for (const t of targets) {
    if (t.notRun) {
      out.push(`| ${t.label} | not run (${t.notRun.replaceAll('|', '/')}) | | | | |`);
      continue;
    }
    const x = s(t.key)!;
    out.push(
      `| ${t.label} | ${fmt(summarize(x.rps.json))} | ${fmt(summarize(x.rps.stream))} | ` +
        `${fmt(summarize(x.cpu.json))} | ${fmt(summarize(x.cpu.stream))} | ${fmt(summarize(x.rss))}${t.key === 'direct' ? ' (mock)' : ''} |`,
    );
  }

  out.push(
    '',
    `Open loop: requests evenly spaced at ${UNLOADED_RATE}/s for ${input.openMs / 1000} s (unloaded), ` +
      'each timed from its scheduled send time; ms. "added" = the target’s minus direct’s, per repetition. ' +
      `Last column: even ${EVEN_RATE.toLocaleString('en-US')} req/s, JSON.`,
    '',
    `| target | JSON p50 / p99 | added p50 / p99 | stream first chunk p50 / p99 | added first chunk p50 / p99 | stream last chunk p50 / p99 | added last chunk p50 / p99 | ${EVEN_RATE.toLocaleString('en-US')}/s JSON p50 / p99 |`,
    '|---|---|---|---|---|---|---|---|',
  );
  for (const t of targets) {
    if (t.notRun) continue;
    const x = s(t.key)!;
    const isDirect = t.key === 'direct';
    const pair = (a: number[], b: number[]) => (isDirect ? '–' : fmtAdded(paired(a, b, minus)));
    out.push(
      `| ${t.label} | ${fmt(summarize(x.json.p50))} / ${fmt(summarize(x.json.p99))} ` +
        `| ${pair(x.json.p50, direct.json.p50)} / ${pair(x.json.p99, direct.json.p99)} ` +
        `| ${fmt(summarize(x.first.p50))} / ${fmt(summarize(x.first.p99))} ` +
        `| ${pair(x.first.p50, direct.first.p50)} / ${pair(x.first.p99, direct.first.p99)} ` +
        `| ${fmt(summarize(x.last.p50))} / ${fmt(summarize(x.last.p99))} ` +
        `| ${pair(x.last.p50, direct.last.p50)} / ${pair(x.last.p99, direct.last.p99)} ` +
        `| ${x.even.p50.length ? `${fmt(summarize(x.even.p50))} / ${fmt(summarize(x.even.p99))}${saturation(t.key)}` : '– (above its capacity)'} |`,
    );
  }

  const over = targets.filter((t) => !t.notRun && t.key !== 'portkey' && saturated(t.key) !== undefined);
  if (over.length > 0) {
    out.push(
      '',
      `¹ ${EVEN_RATE.toLocaleString('en-US')} req/s is more than half of what it served at most in the closed loop of this run ` +
        `(${over.map((t) => `${t.label}: ${round3(saturated(t.key)!)} req/s`).join('; ')}): ` +
        'these figures mostly measure queueing on the shared cores, not the added latency of an unloaded path.',
    );
  }

  const errors = targets.flatMap((t) => (s(t.key)?.errors ?? []).map((e) => `${t.label}: ${e}`));
  if (errors.length > 0) out.push('', 'Errors during the run:', ...errors.map((e) => `- ${e}`));

  out.push('', ...aims(input), '');
  return out.join('\n');

  function aims(_: ReportInput): string[] {
    if (!ran('studio')) return ['Aims: not checked (Studio did not run).'];
    const st = s('studio')!;
    const rows: string[] = [
      '**Aims** for Studio in this run:',
      '',
      '| aim | measured | met |',
      '|---|---|---|',
    ];
    const verdict = (v: Summary | undefined, ok: (x: number) => boolean) =>
      !v
        ? 'not measured'
        : ok(v.median)
          ? ok(v.min) && ok(v.max)
            ? 'yes'
            : 'yes (median; not every run)'
          : 'no';
    const row = (aim: string, v: Summary | undefined, text: string, ok: (x: number) => boolean) =>
      rows.push(`| ${aim} | ${v ? text : '–'} | ${verdict(v, ok)} |`);
    for (const mode of ['json', 'stream'] as const) {
      const name = mode === 'json' ? 'JSON' : 'stream';
      if (ran('portkey')) {
        const v = paired(st.rps[mode], s('portkey')!.rps[mode], ratio);
        row(
          `throughput ≥ ${AIM.timesPortkey}× Portkey’s (${name})`,
          v,
          `${fmt(v)}×`,
          (x) => x >= AIM.timesPortkey,
        );
      } else rows.push(`| throughput ≥ ${AIM.timesPortkey}× Portkey’s (${name}) | Portkey not run | – |`);
      if (ran('thin')) {
        const v = paired(st.rps[mode], s('thin')!.rps[mode], ratio);
        row(
          `throughput ≥ ${AIM.timesThin}× the thin proxy’s (${name})`,
          v,
          `${fmt(v)}×`,
          (x) => x >= AIM.timesThin,
        );
      }
    }
    for (const mode of ['json', 'stream'] as const) {
      const v = summarize(st.cpu[mode]);
      row(
        `CPU per request ≤ ${AIM.cpuMsPerRequest} ms (${mode === 'json' ? 'JSON' : 'stream'})`,
        v,
        `${fmt(v)} ms`,
        (x) => x <= AIM.cpuMsPerRequest,
      );
    }
    const first = paired(st.first.p50, direct.first.p50, minus);
    row(
      `streaming adds ≤ ${AIM.firstChunkAddedMs} ms before the first chunk (p50 at ${UNLOADED_RATE}/s)`,
      first,
      `${fmtAdded(first)} ms`,
      (x) => x <= AIM.firstChunkAddedMs,
    );
    if (ran('thin')) {
      const v = paired(st.even.p99, s('thin')!.even.p99, minus);
      row(
        `even ${EVEN_RATE.toLocaleString('en-US')} req/s: p99 within ${AIM.p99VsThinAt1000Ms} ms of the thin proxy’s`,
        v,
        `${fmtAdded(v)} ms`,
        (x) => x <= AIM.p99VsThinAt1000Ms,
      );
    }
    const added = paired(st.even.p99, direct.even.p99, minus);
    row(
      `added p99 ≤ ${AIM.addedP99At1000Ms} ms at ${EVEN_RATE.toLocaleString('en-US')} req/s`,
      added,
      `${fmtAdded(added)} ms`,
      (x) => x <= AIM.addedP99At1000Ms,
    );
    const rss = summarize(st.rss);
    row(`RSS under load ≤ ${AIM.rssMb} MB`, rss, `${fmt(rss)} MB`, (x) => x <= AIM.rssMb);
    rows.push('| RSS flat over a 10-minute run | not measured by this benchmark | – |');
    if (ran('thin')) {
      const json = paired(st.cpu.json, s('thin')!.cpu.json, ratio);
      const stream = paired(st.cpu.stream, s('thin')!.cpu.stream, ratio);
      rows.push(
        '',
        `Context for the absolute aims (set on a machine where the thin proxy used 0.14 CPU ms per request): ` +
          `here the thin proxy used ${fmt(summarize(s('thin')!.cpu.json))} ms (JSON), and Studio ` +
          `${fmt(json)}× the thin proxy’s CPU per request for JSON, ${fmt(stream)}× for streams.`,
      );
    }
    return rows;
  }
}

function loadavgText(input: ReportInput): string {
  return `${round3(input.loadAtStart)} at start, ${round3(input.loadAtEnd)} at end`;
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
