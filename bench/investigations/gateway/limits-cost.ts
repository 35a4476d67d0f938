/**
 * What each kind of rate limit costs a governed gateway: Studio with a budget and no limits, with
 * `max_concurrent` only, and with `rpm`, `tpm` and `max_concurrent`, each in a process of its own,
 * the variants taking turns; closed loops of JSON chat completions (50 connections). Prints req/s
 * and Studio's CPU per request, median (range) of the repetitions.
 *   node --import tsx bench/investigations/gateway/limits-cost.ts
 *   BENCH_GATEWAY_STORE=postgres|sqlite|memory (default postgres: where limits cost round trips)
 *   BENCH_REPS=N (default 2)   BENCH_LIMITS_SECONDS=N (default 5, after 4 s of warm-up)
 *   BENCH_REDIS_URL=redis://…/<db>  the counters in that Redis (as REDIS_URL does) instead of the store's place
 */

import { cpuMs } from '../../gateway/processes.ts';
import { loadStudio, studioStoreFromEnv, withStudioTarget } from '../../gateway/studio.ts';
import { positiveFromEnv } from '../../lib/env.ts';

const store = studioStoreFromEnv(process.env.BENCH_GATEWAY_STORE ?? 'postgres');
const redisUrl = process.env.BENCH_REDIS_URL;
const env: Record<string, string> = redisUrl ? { REDIS_URL: redisUrl } : {};
const reps = positiveFromEnv('BENCH_REPS', { integer: true }) ?? 2;
const seconds = positiveFromEnv('BENCH_LIMITS_SECONDS') ?? 5;
const VARIANTS = [
  { name: 'none (a budget only)', limits: {} },
  { name: '`max_concurrent`', limits: { max_concurrent: 10_000 } },
  {
    name: '`rpm`, `tpm`, `max_concurrent`',
    limits: { rpm: 1_000_000, tpm: 1_000_000_000, max_concurrent: 10_000 },
  },
];

const samples = VARIANTS.map(() => ({ rps: [] as number[], cpu: [] as number[] }));
for (let rep = 1; rep <= reps; rep++) {
  for (const [i, variant] of VARIANTS.entries()) {
    await withStudioTarget(
      'limits',
      () => ({ store, governed: true, limits: variant.limits, env }),
      async (studio) => {
        await loadStudio(studio, false, 4_000);
        const before = cpuMs(studio.child.pid);
        const { ok, failed, ms } = await loadStudio(studio, false, seconds * 1_000);
        const used = cpuMs(studio.child.pid) - before;
        if (failed > 0) throw new Error(`${failed} requests failed`);
        samples[i]!.rps.push(ok / (ms / 1_000));
        samples[i]!.cpu.push(used / ok);
        process.stderr.write(
          `[bench:limits] rep ${rep} ${variant.name}: ${Math.round(ok / (ms / 1_000))} req/s\n`,
        );
      },
    );
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const show = (values: number[], digits: number) =>
  `${median(values).toFixed(digits)} (${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)})`;
const lines = [
  `Studio (${store}${redisUrl ? ', counters in Redis' : ''}), a budget set, JSON chat completions, ${reps} repetitions of ${seconds} s:`,
  '',
  '| limits set | req/s | Studio CPU ms per request |',
  '|---|---|---|',
  ...VARIANTS.map((v, i) => `| ${v.name} | ${show(samples[i]!.rps, 0)} | ${show(samples[i]!.cpu, 3)} |`),
];
process.stdout.write(`${lines.join('\n')}\n`);
