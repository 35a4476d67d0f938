import { readdir, readFile } from 'node:fs/promises';
import { fromRoot } from '../paths.ts';
import type { SqlDriver } from './sql-driver.ts';

const MIGRATIONS_DIR = `${fromRoot('infra', 'sql')}/`;
/** Any constant shared by every process: serializes concurrent migrators on one database. */
const MIGRATION_LOCK = 8_600_001;

export interface MigrationReport {
  applied: string[];
}

/** Applies `infra/sql/NNN_name.sql` files not yet recorded in `schema_migrations`, in order. */
export async function migrate(db: SqlDriver): Promise<MigrationReport> {
  const files = (await readdir(MIGRATIONS_DIR)).filter((f) => /^\d{3}_.+\.sql$/.test(f)).sort();
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await tx.query(
      'CREATE TABLE IF NOT EXISTS schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    const done = new Set(
      (await tx.query<{ name: string }>('SELECT name FROM schema_migrations')).rows.map((r) => r.name),
    );
    const applied: string[] = [];
    for (const file of files) {
      if (done.has(file)) continue;
      await tx.exec(await readFile(`${MIGRATIONS_DIR}${file}`, 'utf8'));
      await tx.query('INSERT INTO schema_migrations (name) VALUES ($1)', [file]);
      applied.push(file);
    }
    return { applied };
  });
}
