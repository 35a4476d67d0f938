import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { waitUntil } from '../../shared/testing/wait.ts';
import { adminOk, asAdmin } from './admin.ts';

const STUDIO = join(import.meta.dirname, '../../bin/studio.mjs');

/** Runs `studio …` (in `cwd`, default this process's) with a clean environment of our own and collects its output. */
export function studio(args: string[], env: Record<string, string>, cwd?: string) {
  const child = spawn(process.execPath, [STUDIO, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(cwd === undefined ? {} : { cwd }),
  });
  let output = '';
  let stdout = '';
  child.stdout.on('data', (chunk) => {
    output += chunk;
    stdout += chunk;
  });
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => output, stdout: () => stdout, exited };
}

/** `studio gateway start` on a free port; resolves with its URL once its banner is printed. */
export async function startGatewayProcess(env: Record<string, string>) {
  const run = studio(['gateway', 'start', '--port', '0'], env);
  try {
    await waitUntil(
      () => /Studio gateway\s+http:\/\/127\.0\.0\.1:\d+/.test(run.output()),
      'the banner is printed',
      60_000,
    );
  } catch (error) {
    // Not left running (it would hold its data directory), and its output says why it did not start.
    run.child.kill('SIGKILL');
    await run.exited;
    throw new Error(`${(error as Error).message}; the gateway's last output:\n${run.output().slice(-4_000)}`);
  }
  return { run, url: /Studio gateway\s+(http:\/\/\S+)/.exec(run.output())![1]! };
}

/** The admin key's calls the CLI tests make: a POST (undefined once the server is gone) and the env keys listed. */
export function adminCalls(adminKey: string) {
  return {
    // A server that stopped answering counts as gone (after 30 s at most), so a test fails instead of hanging.
    post: (url: string, path: string, body: unknown) =>
      asAdmin({ url, adminKey }, 'POST', path, body).catch(() => undefined),
    async envKeys(url: string): Promise<string[]> {
      const listed = await adminOk({ url, adminKey }, 'GET', '/v1/env/list');
      return (listed.json as { items: { key: string }[] }).items.map((item) => item.key);
    },
  };
}
