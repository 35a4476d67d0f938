/**
 * `npm run bench`: every benchmark, each in its own process (so one's heap and sockets do not
 * disturb the next), printed together. BENCH_QUICK=1 for a short smoke run.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const SECTIONS = [
  ['store, projections and startup: the aims', 'bench/store-aims.ts'],
  ['restart after a crash under load', 'bench/crash-restart.ts'],
  ['event store and projections', 'bench/event-store.ts'],
  ['gateway overhead on chat completions', 'bench/gateway/index.ts'],
  ['gateway soak: RSS over ten minutes', 'bench/gateway/soak.ts'],
  ['one tenant against the others', 'bench/attacks.ts'],
  ['what metrics cost per request', 'bench/metrics-hooks.ts'],
  ['SSE fan-out', 'bench/sse/index.ts'],
  ['scale-out on PostgreSQL', 'bench/scale/index.ts'],
  ['Kafka forwarder', 'bench/forwarder/index.ts'],
  ['.env parsing', 'bench/dotenv-parse.ts'],
] as const;

const root = join(import.meta.dirname, '..');

function run(script: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.on('exit', (code) => resolve({ code, out }));
  });
}

// Each section is printed as soon as it is done, so a long run shows its progress.
let failed = false;
for (const [title, script] of SECTIONS) {
  if (!existsSync(join(root, script))) {
    process.stdout.write(`## ${title}\n\nnot run: ${script} does not exist in this checkout\n\n`);
    continue;
  }
  process.stderr.write(`[bench] ${title}: ${script}\n`);
  const { code, out } = await run(script);
  if (code !== 0) failed = true;
  process.stdout.write(`${out.trim() ? out.trim() : `## ${title}\n\nno output (exit ${code})`}\n\n`);
}
if (failed) process.exitCode = 1;
