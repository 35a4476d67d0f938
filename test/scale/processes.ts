import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const STUDIO = join(import.meta.dirname, '../../bin/studio.mjs');

export interface ServerProcess {
  /** The process started (with `unreapedAfterDeath`, the `sleep` that is Studio's parent). */
  child: ChildProcess;
  /** Studio's pid. */
  pid: number;
  output(): string;
  /** The URL printed on the banner line that starts with `label`. */
  url(label: 'Studio gateway' | 'Agent runtime'): string;
  /** `child`'s exit. */
  exited: Promise<number | null>;
  /** Signals Studio (nothing once it exited). */
  kill(signal?: NodeJS.Signals): void;
}

export interface StartStudioOptions {
  /**
   * Studio's parent is a `sleep` that never reaps it: once killed, Studio stays a zombie (its pid
   * taken) until `child` is killed too, as under a supervisor that has not reaped it yet.
   */
  unreapedAfterDeath?: boolean;
}

/**
 * Starts `studio <args>` in its own process with the given env; a data dir of its own unless
 * STUDIO_DATA_DIR is given, removed once the process is gone.
 */
export async function startStudio(
  args: string[],
  env: Record<string, string>,
  options: StartStudioOptions = {},
): Promise<ServerProcess> {
  const dataDir = env.STUDIO_DATA_DIR ?? (await mkdtemp(join(tmpdir(), 'studio-scale-')));
  const [command, commandArgs] = options.unreapedAfterDeath
    ? ['sh', ['-c', '"$0" "$@" & echo "studio pid $!"; exec sleep 86400', process.execPath, STUDIO, ...args]]
    : [process.execPath, [STUDIO, ...args]];
  const child = spawn(command, commandArgs, {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      LOG_LEVEL: 'warn',
      STUDIO_DATA_DIR: dataDir,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  if (env.STUDIO_DATA_DIR === undefined)
    void exited.then(() => rm(dataDir, { recursive: true, force: true }));
  const want = args[0] === 'agent' ? /Agent runtime\s+http/ : /Studio gateway\s+http/;
  const deadline = Date.now() + 60_000;
  while (!want.test(output)) {
    // `studio: …` is how the CLI refuses to start (under `sleep`, Studio's exit is not `child`'s).
    const failure = child.exitCode !== null || /^studio: /m.test(output) ? 'exited' : undefined;
    if (failure || Date.now() > deadline) {
      const studioPid = /studio pid (\d+)/.exec(output)?.[1];
      if (studioPid && child.exitCode === null) process.kill(Number(studioPid), 'SIGKILL');
      child.kill('SIGKILL');
      throw new Error(`studio ${args.join(' ')} ${failure ?? 'did not start'}: ${output}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const pid = options.unreapedAfterDeath ? Number(/studio pid (\d+)/.exec(output)![1]) : child.pid!;
  return {
    child,
    pid,
    output: () => output,
    url: (label) => {
      const match = new RegExp(`${label}\\s+(http://\\S+)`).exec(output);
      if (!match) throw new Error(`no ${label} URL in: ${output}`);
      return match[1]!;
    },
    exited,
    kill: (signal = 'SIGTERM') => {
      if (!options.unreapedAfterDeath) child.kill(signal);
      else if (child.exitCode === null) process.kill(pid, signal); // its pid is taken until `child` dies
    },
  };
}
