import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const STUDIO = join(import.meta.dirname, '../../bin/studio.mjs');

export interface StudioProcess {
  child: ChildProcess;
  output(): string;
  /** The URL printed on the banner line that starts with `label`. */
  url(label: 'Studio gateway' | 'Agent runtime'): string;
  exited: Promise<number | null>;
  kill(signal?: NodeJS.Signals): void;
}

/** Starts `studio <args>` in its own process with its own data dir and the given env. */
export async function startStudio(args: string[], env: Record<string, string>): Promise<StudioProcess> {
  const dataDir = await mkdtemp(join(tmpdir(), 'studio-scale-'));
  const child = spawn(process.execPath, [STUDIO, ...args], {
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
  const want = args[0] === 'agent' ? /Agent runtime\s+http/ : /Studio gateway\s+http/;
  const deadline = Date.now() + 60_000;
  while (!want.test(output)) {
    if (child.exitCode !== null) throw new Error(`studio ${args.join(' ')} exited: ${output}`);
    if (Date.now() > deadline) throw new Error(`studio ${args.join(' ')} did not start: ${output}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    child,
    output: () => output,
    url: (label) => {
      const match = new RegExp(`${label}\\s+(http://\\S+)`).exec(output);
      if (!match) throw new Error(`no ${label} URL in: ${output}`);
      return match[1]!;
    },
    exited,
    kill: (signal = 'SIGTERM') => {
      child.kill(signal);
    },
  };
}
