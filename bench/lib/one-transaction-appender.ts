import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import {
  type AppendOptions,
  type AppendResult,
  type NewEvent,
  WrongExpectedRevision,
} from '../../shared/event-store/types.ts';
import type { Appender } from './measures.ts';

/**
 * The PostgreSQL append as it was before group commit, the "before" of the append benchmarks: every
 * append its own transaction, one call of `studio_append` (infra/sql/002_append_function.sql, still
 * installed), with pg_notify.
 */
export function oneTransactionPerAppend(pool: pg.Pool): Appender {
  return {
    async append(
      streamId: string,
      events: readonly NewEvent[],
      options: AppendOptions,
    ): Promise<AppendResult> {
      const expected = options.expected ?? 'any';
      const { rows } = await pool.query<{ outcome: string; revision: string; pos: string }>(
        'SELECT outcome, revision, pos FROM studio_append($1, $2, $3::uuid[], $4::text[], $5::text[], $6, $7)',
        [
          streamId,
          String(expected),
          events.map((e) => e.id ?? randomUUID()),
          events.map((e) => e.type),
          events.map((e) => JSON.stringify(e.data ?? null)),
          JSON.stringify(options.metadata),
          true,
        ],
      );
      const row = rows[0]!;
      if (row.outcome === 'wrong_expected')
        throw new WrongExpectedRevision(streamId, expected, Number(row.revision));
      return { nextExpectedRevision: Number(row.revision), position: Number(row.pos) };
    },
  };
}
