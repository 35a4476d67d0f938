/**
 * `node --import tsx bench/investigations/postgres-appends.ts`: where the time of a PostgreSQL append goes.
 * A diagnosis aid beside `npm run bench`, not part of it. On one fresh database it runs the append
 * measurement of bench/event-store.ts, interleaved, against:
 *   - the adapter exactly as `openStore` builds it (group commit: appends submitted in one turn of
 *     the event loop share one transaction, up to 2 such batches at once);
 *   - group commit with 1, 4 and 8 batches in flight;
 *   - group commit with `synchronous_commit=off` for its sessions (no fsync wait).
 * Beside events/s it prints CPU per append: this Node process (process.cpuUsage) and the database
 * backends serving it (/proc/<pid>/stat, so only when the server runs on this machine).
 *
 * Environment: DATABASE_URL (as bench/event-store.ts), BENCH_REPS (default 3), BENCH_APPEND_MS (default 3,000).
 */
import { readFile } from 'node:fs/promises';
import pg from 'pg';
import { postgresDriver } from '../../shared/event-store/postgres.ts';
import { SqlEventStore } from '../../shared/event-store/sql-store.ts';
import { positiveFromEnv } from '../lib/env.ts';
import { type Appender, measureAppends } from '../lib/measures.ts';
import { round3, summarize } from '../lib/stats.ts';
import { baseDatabaseUrl, openPostgres } from '../lib/targets.ts';

const REPS = positiveFromEnv('BENCH_REPS', { integer: true }) ?? 3;
const APPEND_MS = positiveFromEnv('BENCH_APPEND_MS', { integer: true }) ?? 3_000;
const log = (message: string) => process.stderr.write(`[pg-appends] ${message}\n`);

interface Variant {
  name: string;
  store: Appender;
  pool?: pg.Pool;
  close(): Promise<void>;
}

function sqlStoreVariant(
  name: string,
  url: string,
  options: { notify: boolean; syncCommit: boolean; batchesInFlight?: number },
): Variant {
  const pool = new pg.Pool({
    connectionString: url,
    max: 20,
    ...(options.syncCommit ? {} : { options: '-c synchronous_commit=off' }),
  });
  pool.on('error', () => undefined);
  const store = new SqlEventStore(postgresDriver(pool), {
    notifyOnCommit: options.notify,
    ...(options.batchesInFlight ? { batchesInFlight: options.batchesInFlight } : {}),
  });
  return { name, store, pool, close: () => store.close() };
}

/** utime + stime of a process, in ms (clock ticks of 10 ms on Linux). */
async function processCpuMs(pid: number): Promise<number> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return Number.NaN;
  }
}

/** CPU ms so far of every backend connected to `database`, by pid. */
async function backendsCpuMs(admin: pg.Client, database: string): Promise<Map<number, number>> {
  const { rows } = await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1', [
    database,
  ]);
  return new Map(await Promise.all(rows.map(async (r) => [r.pid, await processCpuMs(r.pid)] as const)));
}

/** CPU ms the backends used between two readings (a backend that started in between counts from 0). */
function cpuDelta(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0;
  for (const [pid, ms] of after) if (Number.isFinite(ms)) total += ms - (before.get(pid) ?? 0);
  return total;
}

interface Sample {
  perSecond: number;
  nodeCpuUsPerAppend: number;
  serverCpuUsPerAppend: number;
}

async function main(): Promise<void> {
  const target = await openPostgres();
  if (!target.store) {
    log(target.skipped ?? 'not run');
    return;
  }
  const variants: Variant[] = [];
  const admin = new pg.Client({ connectionString: baseDatabaseUrl() });
  try {
    await admin.connect();
    const dbName = target.facts[0]?.match(/database (\S+)/)?.[1];
    if (!dbName) throw new Error('could not tell the bench database name');
    const url = new URL(baseDatabaseUrl());
    url.pathname = `/${dbName}`;
    variants.push({
      name: 'adapter as is (group commit, 2 batches in flight, pg_notify, synchronous_commit=on)',
      store: target.store.events,
      close: async () => undefined,
    });
    for (const batchesInFlight of [1, 4, 8]) {
      variants.push(
        sqlStoreVariant(`group commit, ${batchesInFlight} batches in flight`, url.toString(), {
          notify: true,
          syncCommit: true,
          batchesInFlight,
        }),
      );
    }
    variants.push(
      sqlStoreVariant('group commit, synchronous_commit=off', url.toString(), {
        notify: true,
        syncCommit: false,
      }),
    );

    const results = new Map<string, { one: Sample[]; many: Sample[] }>(
      variants.map((v) => [v.name, { one: [], many: [] }]),
    );
    const run = async (v: Variant, tag: string, writers: number, streams: number): Promise<Sample> => {
      const node0 = process.cpuUsage();
      const server0 = await backendsCpuMs(admin, dbName);
      const result = await measureAppends(v.store, tag, writers, streams, { ms: APPEND_MS, maxOps: 1e9 });
      const node1 = process.cpuUsage(node0);
      const server1 = await backendsCpuMs(admin, dbName);
      return {
        perSecond: result.perSecond,
        nodeCpuUsPerAppend: (node1.user + node1.system) / result.ops,
        serverCpuUsPerAppend: (cpuDelta(server0, server1) * 1000) / result.ops,
      };
    };
    for (const [i, v] of variants.entries())
      await measureAppends(v.store, `warm-${i}`, 16, 1, { ms: 300, maxOps: 2_000 });
    for (let rep = 1; rep <= REPS; rep++) {
      for (const [i, v] of variants.entries()) {
        const one = await run(v, `r${rep}-v${i}-one`, 1, 4);
        const many = await run(v, `r${rep}-v${i}-many`, 16, 1);
        results.get(v.name)!.one.push(one);
        results.get(v.name)!.many.push(many);
        log(
          `rep ${rep} ${v.name}: 1 writer ${round3(one.perSecond)}/s, 16 writers ${round3(many.perSecond)}/s`,
        );
      }
    }
    const fmt = (samples: Sample[]) => {
      const rate = summarize(samples.map((s) => s.perSecond))!;
      const nodeCpu = summarize(samples.map((s) => s.nodeCpuUsPerAppend))!;
      const serverCpu = summarize(samples.map((s) => s.serverCpuUsPerAppend))!;
      return `${round3(rate.median)} (${round3(rate.min)}–${round3(rate.max)}) | ${round3(nodeCpu.median)} + ${round3(serverCpu.median)}`;
    };
    const lines = [
      `PostgreSQL append variants: events/s, median of ${REPS} (min–max), ${round3(APPEND_MS / 1000)} s each; ` +
        'CPU µs per append, Node + database backends (medians)',
      '',
      '| variant | 1 writer | CPU µs/append | 16 writers | CPU µs/append |',
      '|---|---|---|---|---|',
      ...variants.map(
        (v) => `| ${v.name} | ${fmt(results.get(v.name)!.one)} | ${fmt(results.get(v.name)!.many)} |`,
      ),
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    for (const v of variants.slice(1)) await v.close().catch(() => undefined);
    await admin.end().catch(() => undefined);
    await target.dispose();
  }
}

main().catch((error: unknown) => {
  log(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exitCode = 1;
});
