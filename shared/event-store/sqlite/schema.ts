import type { Database } from 'better-sqlite3';

/**
 * The embedded log's tables. `position` is the rowid: dense and in commit order, since one writer
 * commits one transaction at a time. Each migration runs once, recorded in `user_version`.
 */
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE events (
     position   INTEGER PRIMARY KEY,
     stream_id  TEXT NOT NULL,
     revision   INTEGER NOT NULL,
     event_id   TEXT NOT NULL UNIQUE,
     type       TEXT NOT NULL,
     data       TEXT NOT NULL,
     metadata   TEXT NOT NULL,
     created_at TEXT NOT NULL
   ) STRICT;
   CREATE UNIQUE INDEX events_stream_revision ON events (stream_id, revision);
   CREATE INDEX events_type_position ON events (type, position);
   CREATE TABLE projection_checkpoints (
     name       TEXT PRIMARY KEY,
     version    INTEGER NOT NULL,
     position   INTEGER NOT NULL,
     state      TEXT,
     updated_at TEXT NOT NULL
   ) STRICT;`,
  // A large snapshot is kept deflated instead of as text (sqlite/checkpoints.ts).
  'ALTER TABLE projection_checkpoints ADD COLUMN state_deflated BLOB;',
];

/** Applies the migrations this file has not recorded yet; refuses a log written by a newer Studio. */
export function migrateSqlite(db: Database): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > MIGRATIONS.length) {
    throw new Error(
      `the log was written by a newer Studio (schema ${current}; this one knows ${MIGRATIONS.length})`,
    );
  }
  db.transaction(() => {
    for (let version = current; version < MIGRATIONS.length; version++) db.exec(MIGRATIONS[version]!);
    db.pragma(`user_version = ${MIGRATIONS.length}`);
  }).immediate();
}
