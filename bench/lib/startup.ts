import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const STUDIO = join(import.meta.dirname, '../../bin/studio.mjs');
const GIVE_UP_MS = 120_000;

export interface StartedStudio {
  /** The gateway's origin. */
  origin: string;
  /** ms from spawn until its `/health` answered 200. */
  startMs: number;
  /** Sends `signal` (SIGTERM: a clean stop) and waits for the process to end. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * `studio start` (ports 0) in `dataDir` with `env` added, once its `/health` answers 200. `studio` is
 * what `node` runs before `start …` (by default this checkout's bin/studio.mjs; see `npmStart`, or
 * another checkout's, to compare). Its output is kept only until then.
 */
export async function startStudio(
  dataDir: string,
  options: { studio?: readonly string[]; env?: Record<string, string> } = {},
): Promise<StartedStudio> {
  const started = performance.now();
  const child: ChildProcess = spawn(
    process.execPath,
    [...(options.studio ?? [STUDIO]), 'start', '--port', '0', '--runtime-port', '0'],
    {
      env: { ...process.env, STUDIO_DATA_DIR: dataDir, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  const keep = (chunk: Buffer) => (output += chunk);
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const stop = async (signal: NodeJS.Signals = 'SIGTERM') => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  try {
    for (;;) {
      if (performance.now() - started > GIVE_UP_MS || child.exitCode !== null) {
        throw new Error(`studio start did not become healthy: ${output.slice(-500)}`);
      }
      const url = /Health\s+(http:\/\/\S+)/.exec(output)?.[1];
      if (url) {
        const res = await fetch(url).catch(() => undefined);
        await res?.arrayBuffer();
        if (res?.status === 200) {
          const startMs = performance.now() - started;
          for (const stream of [child.stdout, child.stderr]) stream?.off('data', keep).resume();
          return { origin: new URL(url).origin, startMs, stop };
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  } catch (error) {
    await stop();
    throw error;
  }
}

/** `studio start` in `dataDir` until healthy, then stopped: ms to `/health`. */
async function startUntilHealthy(dataDir: string, studio: readonly string[]): Promise<number> {
  const running = await startStudio(dataDir, { studio });
  await running.stop();
  return running.startMs;
}

/**
 * `npm start` to a healthy `/health`, its log at the level the environment says (by default as a
 * user's: info): on a new data dir, then again on the one it created. `studio` as `startStudio` takes it.
 */
export async function measureStartup(
  studio: readonly string[] = [STUDIO],
): Promise<{ newDirMs: number; existingDirMs: number }> {
  const dataDir = await mkdtemp(join(tmpdir(), 'studio-bench-start-'));
  try {
    const newDirMs = await startUntilHealthy(dataDir, studio);
    const existingDirMs = await startUntilHealthy(dataDir, studio);
    return { newDirMs, existingDirMs };
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}
