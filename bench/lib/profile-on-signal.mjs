/**
 * SIGUSR2 starts a profiler and the next SIGUSR2 stops it and writes what it gives to a file, so a
 * profile covers only a benchmark's load window, not start-up. Plain JavaScript, so that a process
 * run with plain `node` (the thin proxy) can take it as well (cpu-profile-preload.mjs).
 */
import { writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';

/** Types: profile-on-signal.d.mts. */
export function profileOnSignal(file, start, stop, onError) {
  const session = new Session();
  session.connect();
  let profiling = false;
  process.on('SIGUSR2', () => {
    const toggle = async () => {
      profiling = !profiling;
      if (profiling) await start(session);
      else await writeFile(file, JSON.stringify(await stop(session)));
    };
    toggle().catch(onError);
  });
}

/** V8's CPU profiler on the signal, sampling every 250 µs, to `file`. */
export function cpuProfileOnSignal(file, onError) {
  profileOnSignal(
    file,
    async (session) => {
      await session.post('Profiler.enable');
      await session.post('Profiler.setSamplingInterval', { interval: 250 });
      await session.post('Profiler.start');
    },
    async (session) => (await session.post('Profiler.stop')).profile,
    onError,
  );
}
