import type { SqlExecutor } from './sql-driver.ts';
import {
  type AppendResult,
  DuplicateEventId,
  type ExpectedRevision,
  WrongExpectedRevision,
} from './types.ts';

/** How reads format `created_at` (as `toISOString` would); `now()` is the column's default. */
export const CREATED_AT_FORMAT = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;
const CREATED_AT_NOW = `to_char(now() AT TIME ZONE 'UTC', ${CREATED_AT_FORMAT})`;

/** One append, encoded for `studio_append_batch` (infra/sql/003_append_batch_function.sql). */
export interface PendingAppend {
  streamId: string;
  expected: ExpectedRevision;
  ids: string[];
  types: string[];
  /** JSON text of each event's data (`toJsonbText`). */
  data: string[];
  metadata: string;
}

export interface AppendRow {
  outcome: 'ok' | 'duplicate' | 'duplicate_id' | 'wrong_expected' | 'empty';
  revision: string | number | null;
  pos: string | number | null;
  clash: string | null;
  /** The events' `created_at` as `readAll` formats it: the transaction's time, `now()`. */
  at: string;
}

interface BatchRow extends AppendRow {
  k: number;
}

const APPEND_BATCH =
  `SELECT k, outcome, revision, pos, clash, ${CREATED_AT_NOW} AS at FROM studio_append_batch(` +
  '$1::text[], $2::text[], $3::integer[], $4::uuid[], $5::text[], $6::text[], $7::text[], $8)';

/** Runs the appends in one statement (so in one transaction); one row per append, in order. */
export async function appendBatch(
  db: SqlExecutor,
  batch: readonly PendingAppend[],
  notify: boolean,
): Promise<AppendRow[]> {
  const { rows } = await db.query<BatchRow>(APPEND_BATCH, [
    batch.map((a) => a.streamId),
    batch.map((a) => String(a.expected)),
    batch.map((a) => a.ids.length),
    batch.flatMap((a) => a.ids),
    batch.flatMap((a) => a.types),
    batch.flatMap((a) => a.data),
    batch.map((a) => a.metadata),
    notify,
  ]);
  const byAppend: AppendRow[] = new Array(batch.length);
  for (const row of rows) byAppend[row.k - 1] = row;
  for (let i = 0; i < batch.length; i++) {
    if (byAppend[i] === undefined) throw new Error(`studio_append_batch gave no outcome for append ${i + 1}`);
  }
  return byAppend;
}

/** What an append's outcome row means for its caller. */
export function appendResult(append: PendingAppend, row: AppendRow): AppendResult {
  switch (row.outcome) {
    case 'ok':
    case 'duplicate':
    case 'empty':
      return { nextExpectedRevision: Number(row.revision), position: Number(row.pos) };
    case 'duplicate_id':
      throw new DuplicateEventId(row.clash ?? 'unknown');
    case 'wrong_expected':
      throw new WrongExpectedRevision(append.streamId, append.expected, Number(row.revision));
    default:
      throw new Error(`studio_append_batch answered ${JSON.stringify(row)}`);
  }
}
