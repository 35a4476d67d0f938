import { access } from 'node:fs/promises';
import { join } from 'node:path';
import { EVENT_COLUMNS, type EventRow, toStoredEvent } from './sql-store.ts';
import { EventLogWontOpen, type StoredEvent } from './types.ts';

/** The log of an earlier Studio, whose embedded store was PGlite, read in position order. */
export interface EarlierLog {
  readAll(options: { after: number; limit: number }): Promise<StoredEvent[]>;
  headPosition(): Promise<number>;
  close(): Promise<void>;
}

const READ = `SELECT ${EVENT_COLUMNS} FROM events WHERE position > $1 ORDER BY position LIMIT $2`;

/**
 * Opens PGlite's data directory (`<data dir>/pglite`, or that folder itself) to read its log. PGlite
 * is an optional dependency, loaded only here: Studio itself no longer runs on it.
 */
export async function openEarlierLog(dir: string): Promise<EarlierLog> {
  const pgliteDir = (await exists(join(dir, 'PG_VERSION'))) ? dir : join(dir, 'pglite');
  if (!(await exists(join(pgliteDir, 'PG_VERSION')))) {
    throw new EventLogWontOpen(
      `${dir} holds no PGlite data directory (no PG_VERSION in it or in its pglite/)`,
    );
  }
  let PGlite: typeof import('@electric-sql/pglite').PGlite;
  try {
    ({ PGlite } = await import('@electric-sql/pglite'));
  } catch (error) {
    throw new EventLogWontOpen(
      `reading a PGlite log needs the optional package @electric-sql/pglite (npm install @electric-sql/pglite): ${(error as Error).message}`,
    );
  }
  const db = await PGlite.create(pgliteDir);
  return {
    async readAll({ after, limit }) {
      const { rows } = await db.query<EventRow>(READ, [after, limit]);
      return rows.map(toStoredEvent);
    },
    async headPosition() {
      const { rows } = await db.query<{ head: string | number | null }>(
        'SELECT max(position) AS head FROM events',
      );
      return Number(rows[0]?.head ?? 0);
    },
    close: () => db.close(),
  };
}

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );
