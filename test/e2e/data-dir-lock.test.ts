import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import { DataDirInUse, lockDataDir } from '../../shared/data-dir-lock.ts';
import { processState } from '../support/process-state.ts';

const ROOT = join(import.meta.dirname, '../..');
const HOLDER = join(ROOT, 'test/support/lock-holder.ts');

/** Resolves with the child's output once it printed `locked` (its lock is held). */
function lockedBy(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let output = '';
    child.stdout!.on('data', (chunk) => {
      output += chunk;
      if (output.includes('locked')) resolve(output);
    });
    child.stderr!.on('data', (chunk) => (output += chunk));
    child.once('exit', (code) => reject(new Error(`the lock holder exited (${code}): ${output}`)));
  });
}

// The abstract-socket lock of Linux, and the socket-file lock other Unixes fall back to (it runs on Linux too).
const platforms: NodeJS.Platform[] = process.platform === 'linux' ? ['linux', 'darwin'] : [process.platform];

describe.each(platforms)('data dir lock (%s)', { timeout: 30_000 }, (platform) => {
  let dataDir: string;
  const children: ChildProcess[] = [];

  const spawnHolder = () => {
    const child = spawn(process.execPath, ['--import', 'tsx', HOLDER, dataDir, platform], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    return child;
  };

  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'studio-lock-'));
  });
  afterEach(async () => {
    for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
    await rm(dataDir, { recursive: true, force: true });
  });

  it('a live holder in another process refuses the lock, naming the data dir and its pid', async () => {
    const holder = spawnHolder();
    await lockedBy(holder);
    const refused = await lockDataDir(dataDir, platform).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(DataDirInUse);
    expect((refused as Error).message).toBe(
      `${dataDir} is in use by process ${holder.pid}; stop it first (only one process may open an embedded store)`,
    );
  });

  it('a second lock in the same process is refused until the first is released', async () => {
    const lock = await lockDataDir(dataDir, platform);
    await expect(lockDataDir(dataDir, platform)).rejects.toThrow(`in use by process ${process.pid}`);
    await lock.release();
    await (await lockDataDir(dataDir, platform)).release();
  });

  it('a holder killed with SIGKILL frees the lock at once, while it is still a zombie', async () => {
    // `sleep` becomes the holder's parent and never reaps it: after SIGKILL the holder stays a zombie.
    const parent = spawn(
      'sh',
      [
        '-c',
        '"$0" --import tsx "$1" "$2" "$3" & echo "holder $!"; exec sleep 600',
        process.execPath,
        HOLDER,
        dataDir,
        platform,
      ],
      // Its own process group, so that the holder goes with it whatever happens.
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], detached: true },
    );
    onTestFinished(() => {
      process.kill(-parent.pid!, 'SIGKILL');
    });
    const output = await lockedBy(parent);
    const holderPid = Number(/holder (\d+)/.exec(output)?.[1] ?? Number.NaN);
    expect(holderPid).toBeGreaterThan(0);
    process.kill(holderPid, 'SIGKILL');
    if (process.platform === 'linux') {
      while ((await processState(holderPid)) !== 'Z') await new Promise((r) => setTimeout(r, 10));
    }

    const lock = await lockDataDir(dataDir, platform);
    await lock.release();
  });

  it('a pid file of an earlier version naming a live process (a reused pid) does not block', async () => {
    const unrelated = spawn('sleep', ['600'], { stdio: 'ignore' });
    children.push(unrelated);
    for (const pid of [1, process.pid, unrelated.pid!]) {
      await writeFile(join(dataDir, 'studio.lock'), String(pid));
      const lock = await lockDataDir(dataDir, platform);
      await lock.release();
    }
  });

  it('the holder exiting on its own frees the lock', async () => {
    const holder = spawnHolder();
    await lockedBy(holder);
    const exited = new Promise((resolve) => holder.once('exit', resolve));
    holder.kill('SIGTERM');
    await exited;
    await (await lockDataDir(dataDir, platform)).release();
  });
});
