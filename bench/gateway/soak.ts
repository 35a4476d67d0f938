/**
 * Gateway soak (the aim "peak RSS ≤ 150 MB, flat over a 10-minute run", docs/benchmarks.md): Studio
 * as users start it (`studio start`: gateway and agent runtime in one process), a hard budget and
 * rate limits set, under a steady open-loop load of chat completions (JSON and streamed,
 * alternating slices) for ten minutes, its RSS read from /proc every slice, every answer checked.
 * Prints a table by minute and the aim's with yes or no.
 *   node --import tsx bench/gateway/soak.ts
 *
 * Environment:
 *   BENCH_QUICK=1               one minute instead of ten
 *   BENCH_SOAK_SECONDS=N        length of the run (default 600, quick 60)
 *   BENCH_SOAK_RATE=N           requests per second (default 500)
 *   BENCH_GATEWAY_STORE=sqlite  Studio's event store: sqlite (default, as `studio start`), memory,
 *                               or postgres (a fresh database, dropped after)
 *   BENCH_STUDIO_START=studio   `studio start` (default) or `gateway` (`studio gateway start`, the gateway alone)
 */
import { readFile } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { positiveFromEnv, switchFromEnv } from '../lib/env.ts';
import { percentile } from '../lib/stats.ts';
import { openLoop } from './open-loop.ts';
import { peakRssMb, resetPeakRss } from './processes.ts';
import { chatRequestBody } from './settings.ts';
import { studioStoreFromEnv, withStudioTarget } from './studio.ts';
import { START_COMMAND, studioStartFromEnv } from './studio-start.ts';

const TITLE = '## Gateway soak: RSS over a long run';
const SLICE_MS = 10_000;
/** How much the highest RSS of the later half of the run may exceed the earlier half's and still count as flat. */
const FLAT_TOLERANCE = 0.1;
const AIM_PEAK_RSS_MB = 150;

const quick = switchFromEnv('BENCH_QUICK');
const seconds = positiveFromEnv('BENCH_SOAK_SECONDS') ?? (quick ? 60 : 600);
const rate = positiveFromEnv('BENCH_SOAK_RATE') ?? 500;
const store = studioStoreFromEnv();
const start = studioStartFromEnv();
const log = (message: string) => process.stderr.write(`[bench:soak] ${message}\n`);

const rssMb = async (pid: number) => {
  const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(await readFile(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : Number.NaN;
};

interface Minute {
  minute: number;
  requests: number;
  errors: number;
  p50: number;
  p99: number;
  rssEnd: number;
  rssMax: number;
}

const body = (stream: boolean) => chatRequestBody('compat/bench', stream);
const valid = (stream: boolean) => (status: number, text: string) =>
  status === 200 && (stream ? /data: \[DONE\]\s*$/.test(text) : text.includes('"choices"'));

async function main(): Promise<string> {
  return withStudioTarget(
    'soak',
    () => ({ store, start, governed: true }),
    async (studio) => {
      const { pid } = studio.child;
      const headers = { 'content-type': 'application/json', authorization: `Bearer ${studio.token}` };
      const rssAtRest = await rssMb(pid);
      log(
        `Studio as ${START_COMMAND[start]} (${store}) pid ${pid}, ${rssAtRest.toFixed(0)} MB at rest; ${rate} req/s for ${seconds} s`,
      );

      resetPeakRss(pid);
      const minutes: Minute[] = [];
      const slices = Math.max(1, Math.round((seconds * 1000) / SLICE_MS));
      let totals: number[] = [];
      let current: Minute | undefined;
      for (let slice = 0; slice < slices; slice++) {
        const minute = Math.floor((slice * SLICE_MS) / 60_000) + 1;
        if (current?.minute !== minute) {
          if (current) minutes.push(finish(current, totals));
          current = { minute, requests: 0, errors: 0, p50: 0, p99: 0, rssEnd: 0, rssMax: 0 };
          totals = [];
        }
        const stream = slice % 2 === 1;
        const result = await openLoop({
          origin: studio.child.url,
          path: '/v1/ai/chat/completions',
          headers,
          body: body(stream),
          rate,
          durationMs: SLICE_MS,
          valid: valid(stream),
        });
        const rss = await rssMb(pid);
        current.requests += result.sent;
        current.errors += result.errors;
        current.rssEnd = rss;
        current.rssMax = Math.max(current.rssMax, rss);
        totals.push(...result.total);
        if (result.errors > 0) log(`slice ${slice + 1}: ${result.errors} errors (${result.firstError})`);
        log(`slice ${slice + 1}/${slices} (${stream ? 'stream' : 'json'}): RSS ${rss.toFixed(0)} MB`);
      }
      if (current) minutes.push(finish(current, totals));
      return report(minutes, rssAtRest, peakRssMb(pid));
    },
  );
}

function finish(minute: Minute, totals: number[]): Minute {
  totals.sort((a, b) => a - b);
  return { ...minute, p50: percentile(totals, 50), p99: percentile(totals, 99) };
}

function report(minutes: Minute[], rssAtRest: number, peak: number): string {
  const f = (n: number, digits = 0) => n.toFixed(digits);
  const requests = minutes.reduce((sum, m) => sum + m.requests, 0);
  const errors = minutes.reduce((sum, m) => sum + m.errors, 0);
  // The first minute includes warming up (JIT, pools, heap growth): flatness is judged after it.
  // RSS swings with every major GC, so the highest RSS of the later half is compared with the
  // highest of the earlier half: a leak raises it, a sawtooth does not.
  const settled = minutes.slice(1);
  const half = Math.ceil(settled.length / 2);
  const highest = (list: Minute[]) => Math.max(...list.map((m) => m.rssMax));
  const early = highest(settled.slice(0, half));
  const late = highest(settled.slice(half));
  const judged = settled.length >= 2;
  const drift = judged ? (late - early) / early : 0;
  const last = minutes.at(-1)!;
  const lines = [
    TITLE,
    '',
    `${new Date().toISOString().slice(0, 10)}, ${cpus().length} × ${cpus()[0]?.model.trim() ?? '?'}, Node ${process.version}, ` +
      `load average ${f(loadavg()[0]!, 2)} at the end. \`node --import tsx bench/gateway/soak.ts\`: Studio as ${START_COMMAND[start]} ` +
      `(bench/gateway/studio-launcher.ts compiled as the server build is, ${store} event store, a hard budget and rate limits set, request log at its default level into a file) → mock upstream on loopback, ` +
      `${rate} req/s evenly spaced (open loop), alternating 10 s slices of JSON and streamed chat completions, ` +
      `${minutes.length} min; RSS from /proc/<pid>/status after each slice.`,
    '',
    '| minute | requests | errors | p50 ms | p99 ms | RSS at the end, MB | highest RSS seen, MB |',
    '|---|---|---|---|---|---|---|',
    ...minutes.map(
      (m) =>
        `| ${m.minute} | ${m.requests.toLocaleString('en-US')} | ${m.errors} | ${f(m.p50, 2)} | ${f(m.p99, 2)} | ${f(m.rssEnd)} | ${f(m.rssMax)} |`,
    ),
    '',
    `${requests.toLocaleString('en-US')} requests (each a usage event in the log), ${errors} failed. ` +
      `RSS at rest ${f(rssAtRest)} MB.`,
    '',
    '| aim | measured | met |',
    '|---|---|---|',
    `| peak RSS ≤ ${AIM_PEAK_RSS_MB} MB | ${f(peak)} MB (VmHWM over the run) | ${peak <= AIM_PEAK_RSS_MB ? 'yes' : 'no'} |`,
    judged
      ? `| RSS flat: the highest of the later half within +${FLAT_TOLERANCE * 100} % of the earlier half’s (first minute left out) ` +
        `| minutes 2–${settled[half - 1]!.minute}: ${f(early)} MB; minutes ${settled[half]!.minute}–${last.minute}: ` +
        `${f(late)} MB (${drift >= 0 ? '+' : ''}${f(drift * 100, 1)} %) | ${drift <= FLAT_TOLERANCE ? 'yes' : 'no'} |`
      : '| RSS flat | fewer than 3 minutes | not judged |',
  ];
  return `${lines.join('\n')}\n`;
}

process.stdout.write(await main());
