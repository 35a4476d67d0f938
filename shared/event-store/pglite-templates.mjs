// Plain JavaScript, imported by the PGlite thread and by the child process that runs initdb.

/**
 * initdb makes two template databases beside `postgres`, which PGlite opens; nothing here ever copies
 * them, and only a connection to a database can freeze its rows. Left alone, they would hold the
 * wraparound guard where initdb left it, so they are dropped: when a data directory is made (so a
 * first start does not pay for it), and at every open for one made before (a no-op once done).
 * @param {{ query: (sql: string) => Promise<{ rows: Array<{ datname: string }> }>, exec: (sql: string) => Promise<unknown> }} db
 */
export async function dropTemplateDatabases(db) {
  const { rows } = await db.query(
    "SELECT datname FROM pg_database WHERE datname IN ('template0', 'template1')",
  );
  for (const { datname } of rows) {
    await db.exec(`ALTER DATABASE ${datname} IS_TEMPLATE false`);
    await db.exec(`DROP DATABASE ${datname}`);
  }
}
