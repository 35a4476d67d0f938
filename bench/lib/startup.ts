import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const STUDIO = join(import.meta.dirname, '../../bin/studio.mjs');
const GIVE_UP_MS = 120_000;

/** `studio start` (ports 0) in `dataDir`: ms from spawn until its `/health` answers 200, then stopped. */
async function startUntilHealthy(dataDir: string, studio: string): Promise<number> {
  const started = performance.now();
  const child: ChildProcess = spawn(
    process.execPath,
    [studio, 'start', '--port', '0', '--runtime-port', '0'],
    {
      env: { ...process.env, STUDIO_DATA_DIR: dataDir, LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout?.on('data', (chunk) => (output += chunk));
  child.stderr?.on('data', (chunk) => (output += chunk));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  try {
    for (;;) {
      if (performance.now() - started > GIVE_UP_MS || child.exitCode !== null) {
        throw new Error(`studio start did not become healthy: ${output.slice(-500)}`);
      }
      const url = /Health\s+(http:\/\/\S+)/.exec(output)?.[1];
      if (url) {
        const res = await fetch(url).catch(() => undefined);
        await res?.arrayBuffer();
        if (res?.status === 200) return performance.now() - started;
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

/**
 * `npm start` to a healthy `/health`: on a new data dir, then again on the one it created.
 * `studio` is the bin/studio.mjs to run (another checkout's, to compare).
 */
export async function measureStartup(studio = STUDIO): Promise<{ newDirMs: number; existingDirMs: number }> {
  const dataDir = await mkdtemp(join(tmpdir(), 'studio-bench-start-'));
  try {
    const newDirMs = await startUntilHealthy(dataDir, studio);
    const existingDirMs = await startUntilHealthy(dataDir, studio);
    return { newDirMs, existingDirMs };
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}
