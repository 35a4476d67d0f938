/**
 * One tenant acting against the others, as `studio start` runs (gateway and runtime in one process,
 * SQLite, default log level, every studio with a hard budget and rate limits it never reaches): each
 * attack runs while `/health` is asked every 20 ms, and the table says how long `/health` took at
 * worst and how far the process's RSS rose above idle. The aims: `/health` under 100 ms, RSS under
 * 150 MB above idle, the attacker's own requests answered (or refused with a clear 4xx).
 *
 * `node --import tsx bench/attacks.ts` (part of `npm run bench`); BENCH_QUICK=1 for a short run.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { peakRssMb, resetPeakRss } from './gateway/processes.ts';
import { startStudioTarget } from './gateway/studio.ts';
import { switchFromEnv } from './lib/env.ts';
import { percentile } from './lib/stats.ts';

const QUICK = switchFromEnv('BENCH_QUICK');
const ADMIN = `adm_${randomBytes(24).toString('base64url')}`;
const dir = await mkdtemp(join(tmpdir(), 'studio-attacks-'));
// No upstream is called: the attacks use the offline dev/* models.
const { child } = await startStudioTarget({
  dir,
  mockUrl: 'http://127.0.0.1:9',
  store: 'sqlite',
  governed: true,
  adminKey: ADMIN,
});
const origin = child.url;

async function call(method: string, path: string, token: string, body?: unknown) {
  const res = await fetch(origin + path, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, text };
}

/**
 * A studio governed as the benchmarks' users run theirs: the dev models priced, a hard budget and
 * rate limits set, none of which the attack reaches. Answers a token of it.
 */
async function tokenOf(studio: string): Promise<string> {
  await call('POST', '/v1/studios/create', ADMIN, { name: studio, studio_id: studio });
  const issued = await call('POST', '/v1/studios/tokens/apply', ADMIN, { studio_id: studio });
  for (const model of ['dev/echo', 'dev/embed'])
    await call('POST', '/v1/ai/prices/upsert', ADMIN, { model, input_per_mtok: 1, output_per_mtok: 2 });
  await call('POST', '/v1/studios/budgets/set', ADMIN, {
    studio_id: studio,
    amount_usd: 1_000_000,
    window: 'day',
    mode: 'hard',
  });
  await call('POST', '/v1/studios/limits/set', ADMIN, {
    studio_id: studio,
    rpm: 1_000_000,
    tpm: 1_000_000_000,
    max_concurrent: 10_000,
  });
  return (JSON.parse(issued.text) as { user_token: string }).user_token;
}

/** `n` of `request` at once; answers their statuses. */
const atOnce = (n: number, request: () => Promise<number>) => Promise.all(Array.from({ length: n }, request));
const status = async (answer: Promise<{ status: number }>) => (await answer).status;

const rssMb = () => {
  const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0) / 1024;
};

interface Row {
  attack: string;
  healthMaxMs: number;
  healthP99Ms: number;
  /** How many times /health was asked while the attack ran. */
  samples: number;
  rssAboveIdleMb: number;
  answers: string;
}

/** Runs `attack` while /health is probed; answers the row. */
async function measure(name: string, attack: () => Promise<number[]>): Promise<Row> {
  await new Promise((resolve) => setTimeout(resolve, 500));
  const idle = rssMb();
  resetPeakRss(child.pid);
  // The probe runs on a thread of its own: the attack's answers, read here, must not delay it.
  const probe = new Worker(PROBE, { eval: true, workerData: { url: `${origin}/health` } });
  // Its connection made, it says so; then, told to stop, it sends what it measured.
  await new Promise((resolve) => probe.once('message', resolve));
  const latencies = new Promise<number[]>((resolve) => probe.once('message', resolve));
  const statuses = await attack();
  probe.postMessage('stop');
  const sorted = [...(await latencies)].sort((a, b) => a - b);
  await probe.terminate();
  const counts = new Map<number, number>();
  for (const s of statuses) counts.set(s, (counts.get(s) ?? 0) + 1);
  return {
    attack: name,
    healthMaxMs: sorted.at(-1) ?? 0,
    healthP99Ms: sorted.length ? percentile(sorted, 0.99) : 0,
    samples: sorted.length,
    rssAboveIdleMb: peakRssMb(child.pid) - idle,
    answers: [...counts].map(([s, n]) => `${n}× ${s}`).join(', '),
  };
}

/** Asks `/health` every 20 ms until told to stop; posts back how long each answer took. */
const PROBE = `
const { parentPort, workerData } = require('node:worker_threads');
const latencies = [];
let running = true;
parentPort.once('message', () => { running = false; });
(async () => {
  // The connection is made before the first answer that counts.
  await fetch(workerData.url).then((r) => r.arrayBuffer());
  parentPort.postMessage('ready');
  while (running) {
    const started = performance.now();
    await fetch(workerData.url).then((r) => r.arrayBuffer());
    latencies.push(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  parentPort.postMessage(latencies);
})();
`;

const rows: Row[] = [];
try {
  // The reference, in the same run: /health with nothing else going on.
  rows.push(
    await measure('none (the reference: /health alone for 2 s)', async () => {
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      return [];
    }),
  );
  const attacker = await tokenOf('attacker');
  const other = await tokenOf('other');

  // Other tenants' history: a user's follow from position 0 used to read all of it.
  const history = QUICK ? 500 : 5_000;
  for (let i = 0; i < history; i += 50) {
    await Promise.all(
      Array.from({ length: 50 }, () =>
        call('POST', '/v1/ai/chat/completions', other, {
          model: 'dev/echo',
          messages: [{ role: 'user', content: 'history' }],
        }),
      ),
    );
  }
  rows.push(
    await measure(`4 follows from 0 over ${history} other-tenant generations`, () =>
      atOnce(4, async () => {
        const controller = new AbortController();
        const res = await fetch(`${origin}/v1/audit/events/follow?after=0`, {
          headers: { authorization: `Bearer ${attacker}` },
          signal: controller.signal,
        });
        let text = '';
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          text += new TextDecoder().decode(chunk);
          if (text.includes('caught_up')) break;
        }
        controller.abort();
        return res.status;
      }),
    ),
  );

  rows.push(
    await measure('embeddings: 2,048 inputs × 3,072 dimensions, 4 at once', () =>
      atOnce(4, () =>
        status(
          call('POST', '/v1/ai/embeddings', attacker, {
            model: 'dev/embed',
            input: Array.from({ length: 2048 }, (_, i) => `t${i}`),
            dimensions: 3072,
          }),
        ),
      ),
    ),
  );

  rows.push(
    await measure('embeddings: the largest answer allowed (341 × 3,072), 4 at once', () =>
      atOnce(4, () =>
        status(
          call('POST', '/v1/ai/embeddings', attacker, {
            model: 'dev/embed',
            input: Array.from({ length: 341 }, (_, i) => `t${i}`),
            dimensions: 3072,
          }),
        ),
      ),
    ),
  );

  // A conversation at the body limit: six responses of 5 MiB, continued by small requests.
  const big = 'word '.repeat(((QUICK ? 1 : 5) * 1024 * 1024) / 5);
  let previous: string | undefined;
  for (let i = 0; i < 6; i++) {
    const res = await call('POST', '/v1/ai/responses', attacker, {
      model: 'dev/echo',
      input: big,
      max_output_tokens: 16,
      ...(previous ? { previous_response_id: previous } : {}),
    });
    previous = (JSON.parse(res.text) as { id: string }).id;
  }
  rows.push(
    await measure('previous_response_id at the limit: 3 small continuations at once', () =>
      atOnce(3, () =>
        status(
          call('POST', '/v1/ai/responses', attacker, {
            model: 'dev/echo',
            input: 'and then?',
            max_output_tokens: 16,
            previous_response_id: previous,
          }),
        ),
      ),
    ),
  );
} finally {
  await child.stop();
  await rm(dir, { recursive: true, force: true });
}

const ms = (n: number) => n.toFixed(1);
console.log(
  '## One tenant against the others (`studio start`: gateway and runtime, SQLite, governed studios)\n',
);
console.log(
  '| attack | /health worst ms | /health p99 ms | /health asked | peak RSS above idle MB | attacker answers | aims met |',
);
console.log('|---|---|---|---|---|---|---|');
for (const r of rows) {
  const met = r.healthMaxMs < 100 && r.rssAboveIdleMb < 150 ? 'yes' : 'no';
  console.log(
    `| ${r.attack} | ${ms(r.healthMaxMs)} | ${ms(r.healthP99Ms)} | ${r.samples} | ${r.rssAboveIdleMb.toFixed(0)} | ${r.answers || '–'} | ${met} |`,
  );
}
console.log('\nAims: /health under 100 ms at worst, RSS under 150 MB above idle, while the attack runs.');
