/**
 * `node --import tsx bench/pglite-append-cost.ts`: the CPU one append costs the embedded store
 * (both threads of the process: the caller's and PGlite's), taken apart. A call's floor (`SELECT 1`
 * through the PGlite thread), the append's parameters alone, the append function with an empty body
 * (same signature: calling PL/pgSQL), then `studio_append_batch` storing 1, 16 and 64 events in one
 * append. From the last three: what each transaction costs whatever it holds, and what each event
 * adds. A diagnosis aid beside `npm run bench`: under load the store commits groups of appends,
 * so the fixed part is shared by the group. Last, this process's RSS before PGlite opened, once
 * open, and at its peak: what the embedded store alone holds in memory.
 * Environment: BENCH_APPEND_CALLS (default 1,000 measured per case and round, after 200 of
 * warm-up), BENCH_APPEND_ROUNDS (default 3; the cases take turns, the median is reported).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openPgliteStore } from '../shared/event-store/pglite.ts';
import { peakRssMb } from './gateway/processes.ts';
import { positiveFromEnv } from './lib/env.ts';
import { percentile, round3 } from './lib/stats.ts';
import { usageEvent } from './lib/usage-event.ts';

const calls = positiveFromEnv('BENCH_APPEND_CALLS', { integer: true }) ?? 1_000;
const rounds = positiveFromEnv('BENCH_APPEND_ROUNDS', { integer: true }) ?? 3;
const WARM_UP = 200;
const SIGNATURE = 'text[], text[], integer[], uuid[], text[], text[], text[], boolean';

/** The parameters `studio_append_batch` is called with for one append of `n` events (see sql-append.ts). */
function appendParameters(n: number): unknown[] {
  const events = Array.from({ length: n }, usageEvent);
  return [
    ['usage-bench'],
    ['any'],
    [n],
    events.map((e) => e.id),
    events.map((e) => e.type),
    events.map((e) => JSON.stringify(e.data)),
    [JSON.stringify({ actor: 'gateway' })],
    false,
  ];
}

const megabytes = (bytes: number) => Math.round(bytes / 1024 / 1024);
const rssBefore = megabytes(process.memoryUsage.rss());
const dir = await mkdtemp(join(tmpdir(), 'studio-bench-pglite-cost-'));
const { store, driver } = await openPgliteStore(join(dir, 'data'));
const rssOpen = megabytes(process.memoryUsage.rss());
try {
  await driver.exec(
    `CREATE FUNCTION bench_append_nothing(${SIGNATURE}) RETURNS TABLE (k integer, outcome text, revision bigint, pos bigint, clash uuid)
     LANGUAGE plpgsql AS $$ BEGIN RETURN QUERY SELECT 1, 'ok'::text, 0::bigint, 0::bigint, NULL::uuid; END; $$`,
  );
  // Each case prepares every call's arguments (fresh event ids) before it is timed: only the calls count.
  const append = (n: number) => () => {
    const events = Array.from({ length: n }, usageEvent);
    return () => store.append('usage-bench', events, { expected: 'any', metadata: { actor: 'gateway' } });
  };
  const query = (sql: string, n?: number) => () => {
    const parameters = n === undefined ? undefined : appendParameters(n);
    return () => driver.query(sql, parameters);
  };
  const cases: [string, () => () => Promise<unknown>][] = [
    ['`SELECT 1` through the PGlite thread', query('SELECT 1')],
    [
      'the parameters of an append of 16 events, alone',
      query(
        'SELECT cardinality($1::text[]) + cardinality($2::text[]) + cardinality($3::integer[]) + cardinality($4::uuid[])' +
          ' + cardinality($5::text[]) + cardinality($6::text[]) + cardinality($7::text[]) AS n, $8::boolean AS notify',
        16,
      ),
    ],
    [
      'an append function with an empty body, 16 events',
      query(
        'SELECT * FROM bench_append_nothing($1::text[], $2::text[], $3::integer[], $4::uuid[], $5::text[], $6::text[], $7::text[], $8)',
        16,
      ),
    ],
    ['one append of 1 event', append(1)],
    ['one append of 16 events', append(16)],
    ['one append of 64 events', append(64)],
  ];
  const microseconds = new Map<string, number[]>();
  for (let round = 0; round < rounds; round++) {
    for (const [name, prepare] of cases) {
      for (let i = 0; i < WARM_UP; i++) await prepare()();
      const prepared = Array.from({ length: calls }, prepare);
      const before = process.cpuUsage();
      for (const call of prepared) await call();
      const used = process.cpuUsage(before);
      microseconds.set(name, [...(microseconds.get(name) ?? []), (used.user + used.system) / calls]);
    }
  }
  const median = (name: string) =>
    percentile(
      [...microseconds.get(name)!].sort((a, b) => a - b),
      50,
    );
  const one = median('one append of 1 event');
  const many = median('one append of 64 events');
  const perEvent = (many - one) / 63;
  process.stdout.write(
    [
      `PGlite, CPU µs per call (both threads), median of ${rounds} rounds of ${calls.toLocaleString('en-US')} calls:`,
      '',
      '| call | CPU µs | rounds |',
      '|---|---|---|',
      ...cases.map(
        ([name]) =>
          `| ${name} | ${round3(median(name))} | ${microseconds
            .get(name)!
            .map((us) => round3(us))
            .join(' / ')} |`,
      ),
      '',
      `Each event beyond the first: ${round3(perEvent)} µs; a transaction's fixed part: ${round3(one - perEvent)} µs.`,
      '',
      `RSS of this process: ${rssBefore} MB before PGlite opened, ${rssOpen} MB once open, ${Math.round(peakRssMb(process.pid))} MB at its peak.`,
      '',
    ].join('\n'),
  );
} finally {
  await driver.close();
  await rm(dir, { recursive: true, force: true });
}
