/**
 * What do a hard budget and rate limits cost a request's CPU? Four Studios (`studio start`, the
 * embedded store unless BENCH_GATEWAY_STORE says otherwise) differing only in governance: neither,
 * the rate limits alone (`rpm`, `tpm`, `max_concurrent`), a hard budget alone, and both (as the aims
 * are measured). They take turns under a closed loop (50 connections) of JSON and then streamed
 * chat completions, BENCH_SECONDS (default 4) each, for BENCH_ROUNDS rounds (default 12), the
 * order reversed every other round, every Studio but the measured one paused. Prints each one's
 * CPU per request and, per round, its ratio to the ungoverned one's (median, range, and in how
 * many rounds it cost more), so a noisy machine still compares them in pairs.
 *   node --import tsx bench/investigations/gateway/governance-cost.ts
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Child, cpuMs, spawnReady, whilePaused } from '../../gateway/processes.ts';
import {
  loadStudio,
  type StudioTarget,
  type StudioTargetOptions,
  startStudioTarget,
  studioStoreFromEnv,
} from '../../gateway/studio.ts';
import { positiveFromEnv } from '../../lib/env.ts';
import { formatRate, paired, round3, summarize } from '../../lib/stats.ts';

const ROUNDS = positiveFromEnv('BENCH_ROUNDS', { integer: true }) ?? 12;
const SECONDS = positiveFromEnv('BENCH_SECONDS') ?? 4;
const store = studioStoreFromEnv();
const log = (message: string) => process.stderr.write(`[bench:governance-cost] ${message}\n`);

type Governance = Pick<StudioTargetOptions, 'governed' | 'limits' | 'budget'>;
const VARIANTS: { label: string; governance: Governance }[] = [
  { label: 'neither', governance: { governed: false } },
  { label: 'rate limits alone', governance: { governed: true, budget: false } },
  { label: 'hard budget alone', governance: { governed: true, limits: {} } },
  { label: 'both (as the aims are measured)', governance: { governed: true } },
];

interface Measured {
  label: string;
  studio: StudioTarget;
  /** CPU ms per request, one per round. */
  json: number[];
  stream: number[];
}

async function cpuPerRequest(studio: StudioTarget, stream: boolean): Promise<number> {
  const before = cpuMs(studio.child.pid);
  const result = await loadStudio(studio, stream, SECONDS * 1_000);
  if (result.failed > 0) throw new Error(`${result.failed} requests failed`);
  return (cpuMs(studio.child.pid) - before) / result.ok;
}

/** `1.17 (0.86–1.34)×, more in 10 of 12`: per round, `values` over `base`. */
function against(values: readonly number[], base: readonly number[]): string {
  const more = values.filter((value, i) => value > base[i]!).length;
  return `${formatRate(paired(values, base, (x, y) => x / y))}×, more in ${more} of ${values.length}`;
}

const dir = await mkdtemp(join(tmpdir(), 'studio-bench-governance-'));
const children: Child[] = [];
const measured: Measured[] = [];
try {
  const mock = await spawnReady('mock upstream', ['--import', 'tsx', 'bench/gateway/mock-upstream.ts'], {});
  children.push(mock);
  for (const [i, { label, governance }] of VARIANTS.entries()) {
    const studio = await startStudioTarget({
      dir: join(dir, String(i)),
      mockUrl: mock.url,
      store,
      ...governance,
    });
    children.push(studio.child);
    measured.push({ label, studio, json: [], stream: [] });
  }
  const pids = measured.map((m) => m.studio.child.pid);
  const alone = <T>(m: Measured, work: () => Promise<T>) =>
    whilePaused(
      pids.filter((pid) => pid !== m.studio.child.pid),
      work,
    );
  log('warm-up');
  for (const m of measured)
    await alone(m, async () => {
      await loadStudio(m.studio, false, 2_000);
      await loadStudio(m.studio, true, 2_000);
    });
  for (let round = 0; round < ROUNDS; round++) {
    for (const m of round % 2 === 0 ? measured : [...measured].reverse()) {
      await alone(m, async () => {
        m.json.push(await cpuPerRequest(m.studio, false));
        m.stream.push(await cpuPerRequest(m.studio, true));
      });
    }
    log(
      `round ${round + 1}: ${measured.map((m) => `${m.label} ${round3(m.json.at(-1)!)} / ${round3(m.stream.at(-1)!)} ms`).join(', ')}`,
    );
  }
} finally {
  for (const child of children.reverse()) await child.stop().catch(() => undefined);
  await rm(dir, { recursive: true, force: true }).catch(() => undefined);
}

const [base, limits, , both] = measured as [Measured, Measured, Measured, Measured];
process.stdout.write(
  [
    `CPU per chat completion by governance, ${store} event store, ${ROUNDS} rounds of ${SECONDS} s per mode`,
    '',
    '| Studio governed by | CPU ms per request, JSON / stream (median) | against neither, JSON | against neither, stream |',
    '|---|---|---|---|',
    ...measured.map(
      (m) =>
        `| ${m.label} | ${round3(summarize(m.json)!.median)} / ${round3(summarize(m.stream)!.median)} | ` +
        `${m === base ? '–' : against(m.json, base.json)} | ${m === base ? '–' : against(m.stream, base.stream)} |`,
    ),
    '',
    `A hard budget on top of the rate limits (both, against the rate limits alone): JSON ${against(both.json, limits.json)}; ` +
      `stream ${against(both.stream, limits.stream)}.`,
    '',
  ].join('\n'),
);
