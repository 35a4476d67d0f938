/**
 * Starts Studio in this process, configured from the environment exactly as the `studio` command
 * configures it (shared/config.ts), so the benchmark can read its CPU and RSS from /proc.
 * BENCH_STUDIO_START says which command: `studio` (the default) starts what `studio start`
 * (`npm start`) starts: the gateway, then the agent runtime on the gateway's log; `gateway` starts
 * what `studio gateway start` does, the gateway alone. Prints `READY {"url":"http://…"}` (the
 * gateway's) on stderr once both listen; SIGTERM closes them (flushing usage).
 *   node --import tsx bench/gateway/studio-launcher.ts   (the benchmark runs it compiled: see studio.ts)
 *
 * With BENCH_CPU_PROFILE=<file> (V8's CPU profiler) or BENCH_HEAP_PROFILE=<file> (its sampling heap
 * profiler; BENCH_HEAP_COUNT says which objects count), SIGUSR2 starts the profiler and the next
 * SIGUSR2 writes its profile to <file>.
 */
import { setFlagsFromString } from 'node:v8';
import { startGateway } from '../../services/gateway/gateway.ts';
import { provisionLocalToken } from '../../services/runtime/provision.ts';
import { type RunningRuntime, startRuntime } from '../../services/runtime/runtime.ts';
import { loadConfig } from '../../shared/config.ts';
import { createLogger } from '../../shared/logger.ts';
import { switchFromEnv } from '../lib/env.ts';
import { cpuProfileOnSignal, profileOnSignal } from '../lib/profile-on-signal.mjs';
import { studioStartFromEnv } from './studio-start.ts';

// BENCH_V8_FLAGS: V8 flags set before Studio starts (the heap's growth, which V8 reads at each collection).
if (process.env.BENCH_V8_FLAGS) setFlagsFromString(process.env.BENCH_V8_FLAGS);
const config = loadConfig(process.env);
const logger = createLogger(config.logLevel);
const start = studioStartFromEnv();
// BENCH_ANSWER_BEFORE_USAGE_DURABLE=1: answers do not wait for their usage event (bench only; see
// `UsageRecorderOptions`), the "without" against which the cost of holding them is measured.
const unheld = switchFromEnv('BENCH_ANSWER_BEFORE_USAGE_DURABLE');
const gateway = await startGateway({ config, logger, ai: { usage: { answerBeforeDurable: unheld } } });
let runtime: RunningRuntime | undefined;
if (start === 'studio') {
  // What `startCommand` (bin/start.ts) does for `studio start` with no STUDIO_TOKEN, which the
  // benchmark never sets: a token of the `local` studio, and the runtime on the gateway's log.
  const token = await provisionLocalToken(gateway.ctx, config.dataDir);
  runtime = await startRuntime({
    config,
    logger,
    gatewayUrl: gateway.url,
    token,
    sdkRoutes: true,
    store: { events: gateway.ctx.events, checkpoints: gateway.ctx.checkpoints },
  });
}
// On stderr: stdout is the request log, which the benchmark sends to a file.
process.stderr.write(`READY ${JSON.stringify({ url: gateway.url, runtime: runtime?.url ?? null })}\n`);

const profilerFailed = (error: unknown) => logger.error({ err: error }, 'profiler failed');
const cpuProfileFile = process.env.BENCH_CPU_PROFILE;
if (cpuProfileFile) cpuProfileOnSignal(cpuProfileFile, profilerFailed);
const heapProfileFile = process.env.BENCH_HEAP_PROFILE;
if (heapProfileFile) {
  profileOnSignal(
    heapProfileFile,
    async (session) => {
      await session.post('HeapProfiler.enable');
      // BENCH_HEAP_COUNT: `all` objects sampled (also those collected since: what requests
      // allocate), `old` (those a young-generation collection did not take back: what reached the
      // old generation), or `live` (only those still alive when the profile is written).
      // (V8 takes these two flags; Node 20's typings of the protocol do not name them yet.)
      const count = process.env.BENCH_HEAP_COUNT ?? 'all';
      const sampling = {
        samplingInterval: 4096,
        includeObjectsCollectedByMajorGC: count !== 'live',
        includeObjectsCollectedByMinorGC: count === 'all',
      };
      await session.post('HeapProfiler.startSampling', sampling);
    },
    async (session) => (await session.post('HeapProfiler.stopSampling')).profile,
    profilerFailed,
  );
}

let stopping = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    // The runtime first, as `studio start` stops: its turns still call the gateway.
    void (async () => {
      await runtime?.close();
      await gateway.close();
    })()
      .catch((error: unknown) => logger.error({ err: error }, 'close failed'))
      .finally(() => process.exit(0));
  });
}
