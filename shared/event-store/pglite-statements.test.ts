import { randomUUID } from 'node:crypto';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PreparedStatements } from './pglite-statements.mjs';
import { UNIQUE_VIOLATION } from './sql-driver.ts';

describe('PGlite statements prepared once', () => {
  let db: PGlite;
  beforeAll(async () => {
    db = new PGlite();
    await db.waitReady;
    await db.exec(`CREATE TABLE items (id uuid PRIMARY KEY, names text[], counts integer[], doc jsonb, flag boolean, big bigint);
      CREATE TABLE shapes (id integer PRIMARY KEY);`);
  });
  afterAll(() => db.close());

  it('answers the rows, types and values PGlite’s own query does, run after run', async () => {
    const statements = new PreparedStatements(db);
    const insert =
      'INSERT INTO items (id, names, counts, doc, flag, big) VALUES ($1, $2::text[], $3::integer[], $4::jsonb, $5, $6) RETURNING *';
    const values = (i: number) => [
      randomUUID(),
      ['a "quoted" name', 'back\\slash', `n${i}`],
      [i, 2, 3],
      JSON.stringify({ i, nested: { text: 'é' } }),
      i % 2 === 0,
      null,
    ];
    for (let i = 0; i < 8; i++) {
      const [mine] = await statements.query(insert, values(i));
      const [theirs] = (await db.query(insert, values(i))).rows;
      expect({ ...(mine as object), id: undefined }).toEqual({ ...(theirs as object), id: undefined });
      expect(mine).toMatchObject({ counts: [i, 2, 3], doc: { i }, flag: i % 2 === 0, big: null });
    }
    const select = 'SELECT count(*)::int AS n, sum(counts[1])::bigint AS s FROM items WHERE flag = $1';
    expect(await statements.query(select, [true])).toEqual((await db.query(select, [true])).rows);
    expect(await statements.query('SELECT 1 AS one WHERE false')).toEqual([]);
  });

  it('throws PostgreSQL’s error, and the statement still works after it', async () => {
    const statements = new PreparedStatements(db);
    const id = randomUUID();
    const insert = 'INSERT INTO items (id) VALUES ($1)';
    await statements.query(insert, [id]);
    await expect(statements.query(insert, [id])).rejects.toMatchObject({ code: UNIQUE_VIOLATION });
    await expect(statements.query(insert, [randomUUID()])).resolves.toEqual([]);
    await expect(statements.query('SELEC 1')).rejects.toMatchObject({ code: '42601' });
    await expect(statements.query('SELECT 2 AS two')).resolves.toEqual([{ two: 2 }]);
  });

  it('prepares again a statement whose columns changed under it', async () => {
    const statements = new PreparedStatements(db);
    await statements.query('INSERT INTO shapes (id) VALUES ($1)', [1]);
    expect(await statements.query('SELECT * FROM shapes')).toEqual([{ id: 1 }]);
    await db.exec('ALTER TABLE shapes ADD COLUMN label text DEFAULT $$x$$');
    expect(await statements.query('SELECT * FROM shapes')).toEqual([{ id: 1, label: 'x' }]);
  });

  it('runs texts past its limit through PGlite’s query, with the same answers', async () => {
    const statements = new PreparedStatements(db, 2);
    for (let i = 1; i <= 5; i++) {
      expect(await statements.query(`SELECT $1::int + ${i} AS n`, [10])).toEqual([{ n: 10 + i }]);
    }
    expect(await statements.query('SELECT $1::int + 1 AS n', [20])).toEqual([{ n: 21 }]);
  });

  it('waits for a transaction that holds PGlite, as PGlite’s query does', async () => {
    const statements = new PreparedStatements(db);
    const id = randomUUID();
    let commit = () => {};
    const committed = new Promise<void>((resolve) => {
      commit = resolve;
    });
    let inserted = () => {};
    const insertedInTransaction = new Promise<void>((resolve) => {
      inserted = resolve;
    });
    const transaction = db.transaction(async (tx) => {
      await tx.query('INSERT INTO items (id) VALUES ($1)', [id]);
      inserted();
      await committed;
    });
    await insertedInTransaction;
    let settled = false;
    const count = statements
      .query<{ n: number }>('SELECT count(*)::int AS n FROM items WHERE id = $1', [id])
      .finally(() => {
        settled = true;
      });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(settled).toBe(false);
    commit();
    await transaction;
    expect(await count).toEqual([{ n: 1 }]);
  });
});
