/**
 * How long does saving the request log's snapshot hold the event loop? The request log keeps 10,000
 * rows per studio (about 4.3 MB of JSON for one studio); its snapshot is saved once a minute or
 * after 50,000 events, on the embedded store. Two ways, alternated, on a SQLite log in a temp dir:
 *   - at once: `JSON.stringify` of the whole snapshot, then `save` (as every other read model);
 *   - in turns: `stringifyInTurns` and a `SerializedSnapshot`, as the runner saves a read model that
 *     says `serializeInTurns`.
 * The figure is the longest gap between two runs of a 1 ms timer while the save is under way (a
 * request arriving then waits that long), and the save's whole time.
 *
 * Environment: BENCH_REPS (default 5), BENCH_ROWS (default 10,000).
 */
import { requestsProjection } from '../../services/ai/requests/read-model.ts';
import { SerializedSnapshot } from '../../shared/projections/checkpoints.ts';
import { stringifyInTurns } from '../../shared/stringify-in-turns.ts';
import { tempSqliteLog } from '../../test/support/sqlite.ts';
import { positiveFromEnv } from '../lib/env.ts';
import { round3, summarize } from '../lib/stats.ts';

const REPS = positiveFromEnv('BENCH_REPS', { integer: true }) ?? 5;
const ROWS = positiveFromEnv('BENCH_ROWS', { integer: true }) ?? 10_000;

const state = requestsProjection.initialState();
for (let i = 0; i < ROWS; i++) {
  requestsProjection.apply(state, {
    type: 'GenerationCompleted',
    id: `event-${i}`,
    streamId: 'usage-bench',
    revision: i,
    position: i + 1,
    createdAt: new Date(Date.UTC(2026, 10, 29, 0, 0, i)).toISOString(),
    metadata: { actor: 'token:tok_bench' },
    data: {
      requestId: `req_${i.toString(36).padStart(20, '0')}`,
      studioId: 'bench',
      tokenId: 'tok_bench',
      format: 'chat',
      model: 'compat/bench',
      modality: 'text',
      status: 200,
      attempts: [{ model: 'compat/bench', outcome: 'answered', latencyMs: 3 }],
      latencyMs: 3,
      inputTokens: 12,
      outputTokens: 8,
      costMicroUsd: 28,
    },
  });
}

let worst = 0;
let last = performance.now();
const timer = setInterval(() => {
  const now = performance.now();
  worst = Math.max(worst, now - last);
  last = now;
}, 1);
const settle = () => new Promise((resolve) => setTimeout(resolve, 100));

const ways = {
  'at once': (checkpoint: { schemaVersion: number; position: number }) =>
    log.checkpoints.save('requests', { ...checkpoint, state: requestsProjection.toSnapshot(state) }),
  'in turns': async (checkpoint: { schemaVersion: number; position: number }) => {
    const parts = await stringifyInTurns(requestsProjection.toSnapshot(state));
    await log.checkpoints.save('requests', { ...checkpoint, state: new SerializedSnapshot(parts) });
  },
};
const samples = new Map(
  Object.keys(ways).map((way) => [way, { gap: [] as number[], total: [] as number[] }]),
);
const log = await tempSqliteLog();
try {
  for (let rep = 0; rep < REPS; rep++) {
    for (const [way, save] of Object.entries(ways)) {
      await settle();
      worst = 0;
      last = performance.now();
      const started = performance.now();
      await save({ schemaVersion: requestsProjection.schemaVersion, position: rep + 1 });
      const total = performance.now() - started;
      await settle();
      samples.get(way)!.gap.push(worst);
      samples.get(way)!.total.push(total);
    }
  }
} finally {
  clearInterval(timer);
  await log.close();
}

const fmt = (values: number[]) => {
  const s = summarize(values)!;
  return `${round3(s.median)} (${round3(s.min)}–${round3(s.max)})`;
};
const size = JSON.stringify(requestsProjection.toSnapshot(state)).length;
process.stdout.write(
  [
    `Saving the request log's snapshot, ${ROWS.toLocaleString('en-US')} rows (${round3(size / 1e6)} MB of JSON), ` +
      `on SQLite; ms, median of ${REPS} (min–max)`,
    '',
    '| way | longest gap of a 1 ms timer | whole save |',
    '|---|---|---|',
    ...[...samples].map(([way, s]) => `| ${way} | ${fmt(s.gap)} | ${fmt(s.total)} |`),
    '',
  ].join('\n'),
);
