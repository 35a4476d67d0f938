/**
 * Where Studio's CPU goes on `POST /v1/ai/chat/completions`: starts the mock upstream and Studio
 * (as the benchmark does), warms up, then profiles Studio with V8's sampling profiler during a
 * closed-loop load (50 connections), JSON then stream, and prints the hot spots.
 *   node --import tsx bench/investigations/gateway/profile.ts
 *   BENCH_PROFILE_SECONDS=N (default 8)   BENCH_GATEWAY_STORE=sqlite|memory|postgres (default sqlite)
 *   BENCH_PROFILE_DIR=<dir>               keep the .cpuprofile files there (for Chrome DevTools)
 *   BENCH_PROFILE_UNGOVERNED=1            no budget or rate limits (by default both are set, as the aims are measured)
 */
import { copyFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { cpuMs } from '../../gateway/processes.ts';
import { loadStudio, studioStoreFromEnv, withStudioTarget } from '../../gateway/studio.ts';
import { positiveFromEnv, switchFromEnv } from '../../lib/env.ts';
import { profileWhile } from '../../lib/profile-while.ts';
import { round3 } from '../../lib/stats.ts';
import { formatSummary, summarizeProfile } from './cpuprofile.ts';

const seconds = positiveFromEnv('BENCH_PROFILE_SECONDS') ?? 8;
const store = studioStoreFromEnv();
const keep = process.env.BENCH_PROFILE_DIR;
const log = (message: string) => process.stderr.write(`[bench:profile] ${message}\n`);

const profileIn = (dir: string) => join(dir, 'studio.cpuprofile');
const options = (dir: string) => ({
  store,
  env: { BENCH_CPU_PROFILE: profileIn(dir) },
  governed: !switchFromEnv('BENCH_PROFILE_UNGOVERNED'),
  // The compiled bundle is one file: the sources let the profile say which file the time is in.
  fromSources: true,
});
await withStudioTarget('profile', options, async (studio, dir) => {
  const profileFile = profileIn(dir);
  const load = (stream: boolean, durationMs: number) => loadStudio(studio, stream, durationMs);

  log('warm-up');
  await load(false, 3_000);
  await load(true, 3_000);
  const pid = studio.child.pid;
  for (const stream of [false, true]) {
    const mode = stream ? 'stream' : 'json';
    const cpuBefore = cpuMs(pid);
    const result = await profileWhile(pid, profileFile, () => load(stream, seconds * 1000));
    const cpu = cpuMs(pid) - cpuBefore;
    const rate = (result.ok / result.ms) * 1000;
    process.stdout.write(
      `\n## Studio, ${mode}, ${store} event store: ${round3(rate)} req/s, ` +
        `${round3(cpu / Math.max(1, result.ok + result.failed))} CPU ms/req while profiled, ${result.failed} failed\n\n`,
    );
    process.stdout.write(`${formatSummary(await summarizeProfile(profileFile, 30))}\n`);
    if (keep) {
      await mkdir(keep, { recursive: true });
      await copyFile(profileFile, join(keep, `studio-${mode}.cpuprofile`));
    }
  }
});
