/**
 * Starts Studio's gateway alone in this process, configured from the environment exactly as
 * `studio gateway start` is (shared/config.ts), so the benchmark can read its CPU and RSS from
 * /proc. Prints `READY {"url":"http://…"}` on stderr once it listens; SIGTERM closes it (flushing usage).
 *   node --import tsx bench/gateway/studio-launcher.ts   (the benchmark runs it compiled: see studio.ts)
 *
 * With BENCH_CPU_PROFILE=<file>, SIGUSR2 starts V8's CPU profiler and the next SIGUSR2 stops it
 * and writes the profile to <file> (so a profile covers only the load window, not start-up).
 */
import { writeFile } from 'node:fs/promises';
import { startGateway } from '../../services/gateway/gateway.ts';
import { loadConfig } from '../../shared/config.ts';
import { createLogger } from '../../shared/logger.ts';

const config = loadConfig(process.env);
const logger = createLogger(config.logLevel);
// BENCH_ANSWER_BEFORE_USAGE_DURABLE=1: answers do not wait for their usage event (bench only; see
// `UsageRecorderOptions`), the "without" against which the cost of holding them is measured.
const unheld = process.env.BENCH_ANSWER_BEFORE_USAGE_DURABLE === '1';
const gateway = await startGateway({ config, logger, ai: { usage: { answerBeforeDurable: unheld } } });
// On stderr: stdout is the request log, which the benchmark sends to a file.
process.stderr.write(`READY ${JSON.stringify({ url: gateway.url })}\n`);

const profileFile = process.env.BENCH_CPU_PROFILE;
if (profileFile) {
  const { Session } = await import('node:inspector/promises');
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 250 });
  let profiling = false;
  process.on('SIGUSR2', () => {
    const toggle = async () => {
      if (!profiling) {
        profiling = true;
        await session.post('Profiler.start');
        return;
      }
      profiling = false;
      const { profile } = await session.post('Profiler.stop');
      await writeFile(profileFile, JSON.stringify(profile));
    };
    toggle().catch((error: unknown) => logger.error({ err: error }, 'profiler failed'));
  });
}

let stopping = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    void gateway
      .close()
      .catch((error: unknown) => logger.error({ err: error }, 'close failed'))
      .finally(() => process.exit(0));
  });
}
