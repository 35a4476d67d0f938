/**
 * Studio's CPU per request by thread: the main thread (HTTP, governance, read models, the sealer,
 * and on SQLite the log's commits and their syncs), the busiest other thread and the rest (V8's GC
 * helpers, libuv's pool, the SQLite checkpointer's thread), from /proc/<pid>/task during closed
 * loops of chat completions (50 connections, governed as the aims are measured; Studio started as
 * BENCH_STUDIO_START says, `studio start` by default).
 *   node --import tsx bench/investigations/gateway/threads.ts
 *   BENCH_THREADS_ROUNDS=N (default 3)   BENCH_THREADS_SECONDS=N (default 4, after a 6 s warm-up)
 *   BENCH_THREADS_STREAM=1 (streamed completions)   BENCH_GATEWAY_STORE=sqlite|memory|postgres
 */

import { peakRssMb, threadCpuMs } from '../../gateway/processes.ts';
import { loadStudio, studioStoreFromEnv, withStudioTarget } from '../../gateway/studio.ts';
import { START_COMMAND, studioStartFromEnv } from '../../gateway/studio-start.ts';
import { positiveFromEnv, switchFromEnv } from '../../lib/env.ts';

const rounds = positiveFromEnv('BENCH_THREADS_ROUNDS') ?? 3;
const seconds = positiveFromEnv('BENCH_THREADS_SECONDS') ?? 4;
const stream = switchFromEnv('BENCH_THREADS_STREAM');
const store = studioStoreFromEnv();
const start = studioStartFromEnv();
await withStudioTarget(
  'threads',
  () => ({ store, start, governed: true }),
  async (studio) => {
    const pid = studio.child.pid;
    const load = (durationMs: number) => loadStudio(studio, stream, durationMs);
    await load(6_000);
    const ms = (value: number, requests: number) => (value / requests).toFixed(3);
    const lines = [
      `Studio as ${START_COMMAND[start]} (${store}, governed), ${stream ? 'streamed' : 'JSON'} chat completions, CPU ms per request by thread:`,
      '',
      '| round | req/s | main thread | busiest other thread | other threads | total | main ÷ busiest other | peak RSS |',
      '|---|---|---|---|---|---|---|---|',
    ];
    for (let round = 1; round <= rounds; round++) {
      const before = threadCpuMs(pid);
      const { ok, failed, ms: elapsed } = await load(seconds * 1_000);
      const after = threadCpuMs(pid);
      if (failed > 0) throw new Error(`${failed} requests failed`);
      const used = [...after].map(([tid, cpu]) => [tid, cpu - (before.get(tid) ?? 0)] as const);
      const main = used.find(([tid]) => tid === String(pid))?.[1] ?? 0;
      const others = used
        .filter(([tid]) => tid !== String(pid))
        .map(([, cpu]) => cpu)
        .sort((a, b) => b - a);
      const busiest = others[0] ?? 0;
      const rest = others.slice(1).reduce((sum, cpu) => sum + cpu, 0);
      lines.push(
        `| ${round} | ${Math.round(ok / (elapsed / 1_000))} | ${ms(main, ok)} | ${ms(busiest, ok)} | ${ms(rest, ok)} | ` +
          `${ms(main + busiest + rest, ok)} | ${(main / busiest).toFixed(2)} | ${Math.round(peakRssMb(pid))} MB |`,
      );
    }
    process.stdout.write(`${lines.join('\n')}\n`);
  },
);
