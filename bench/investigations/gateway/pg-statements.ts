/**
 * What a governed gateway on PostgreSQL asks its database per request: Studio on a fresh database
 * (a budget and all three rate limits set), a closed loop of JSON chat completions (50 connections),
 * then the statements `pg_stat_statements` counted during it, per request, beside Studio's CPU and
 * the whole machine's per request. Needs `shared_preload_libraries = 'pg_stat_statements'` (a
 * restart) and the extension in the `postgres` database; it counts the whole cluster, so run it
 * with nothing else using that PostgreSQL.
 *   node --import tsx bench/investigations/gateway/pg-statements.ts
 *   BENCH_STATEMENTS_SECONDS=N (default 5, after 3 s of warm-up)
 */
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { baseDatabaseUrl } from '../../../test/support/postgres.ts';
import { cpuMs } from '../../gateway/processes.ts';
import { loadStudio, withStudioTarget } from '../../gateway/studio.ts';
import { positiveFromEnv } from '../../lib/env.ts';

const seconds = positiveFromEnv('BENCH_STATEMENTS_SECONDS') ?? 5;

/** CPU time of every CPU of the machine so far (user + nice + system), in ms. */
function machineCpuMs(): number {
  const [, user, nice, system] = readFileSync('/proc/stat', 'utf8')
    .split('\n')[0]!
    .trim()
    .split(/\s+/)
    .map(Number);
  return (user! + nice! + system!) * 10;
}

const admin = new pg.Client({ connectionString: baseDatabaseUrl() });
await admin.connect();
try {
  await admin.query('SELECT pg_stat_statements_reset()').catch((error: unknown) => {
    throw new Error(
      `pg_stat_statements is not available (${String(error)}): set shared_preload_libraries = 'pg_stat_statements', restart PostgreSQL, then CREATE EXTENSION pg_stat_statements in the postgres database`,
    );
  });
  await withStudioTarget(
    'statements',
    () => ({ store: 'postgres', governed: true }),
    async (studio) => {
      await loadStudio(studio, false, 3_000);
      await admin.query('SELECT pg_stat_statements_reset()');
      const [studioBefore, machineBefore] = [cpuMs(studio.child.pid), machineCpuMs()];
      const { ok, failed, ms } = await loadStudio(studio, false, seconds * 1_000);
      const [studioUsed, machineUsed] = [
        cpuMs(studio.child.pid) - studioBefore,
        machineCpuMs() - machineBefore,
      ];
      if (failed > 0) throw new Error(`${failed} requests failed`);
      const { rows } = await admin.query<{ calls: string; query: string }>(
        `SELECT calls, left(regexp_replace(query, '\\s+', ' ', 'g'), 100) AS query FROM pg_stat_statements
          WHERE calls > 0 AND query NOT LIKE '%pg_stat_statements%' ORDER BY calls DESC`,
      );
      const perRequest = (n: number) => (n / ok).toFixed(2);
      const total = rows.reduce((sum, row) => sum + Number(row.calls), 0);
      const lines = [
        `Studio (postgres, governed): ${Math.round(ok / (ms / 1_000))} req/s, Studio CPU ${(studioUsed / ok).toFixed(3)} ms/request, the machine's ${(machineUsed / ok).toFixed(3)} ms/request`,
        '',
        '| per request | statement |',
        '|---|---|',
        ...rows
          .filter((row) => Number(row.calls) / ok >= 0.01)
          .map((row) => `| ${perRequest(Number(row.calls))} | \`${row.query}\` |`),
        `| ${perRequest(total)} | all |`,
      ];
      process.stdout.write(`${lines.join('\n')}\n`);
    },
  );
} finally {
  await admin.end();
}
