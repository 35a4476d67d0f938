// Statements prepared once and run in one pass into PostgreSQL: the PGlite worker's queries outside
// transactions. Plain JavaScript, imported by the worker (pglite-worker.mjs).
import { parse, protocol } from '@electric-sql/pglite';

const { serialize } = protocol;

/** How many statements this thread has named: each gets a name never used before in any session. */
let named = 0;

/** SQLSTATE "feature not supported": what a prepared statement raises once its result's columns changed. */
const CACHED_PLAN_CHANGED = '0A000';

/**
 * PGlite's `query` walks the extended protocol one message at a time (parse, describe the statement,
 * bind, describe the portal, execute, sync): six passes into PostgreSQL's WASM and through PGlite's
 * protocol code for each query, and the statement parsed every time. Here each SQL text is prepared
 * once under its own name (its parameters' types and its result's columns asked once: the types to
 * encode the values as PGlite would), and each query is one message (bind, execute, sync) in one
 * pass. Results and errors are PGlite's own: its serializers encode the parameters, its parser reads
 * the rows, and a failed statement throws PGlite's `DatabaseError`. PostgreSQL refuses to run a
 * prepared statement whose columns changed since (`CACHED_PLAN_CHANGED`): it is prepared again.
 *
 * At most `limit` texts are prepared: the store's statements are a fixed set, and a text beyond the
 * limit (SQL built with a varying shape) runs through PGlite's `query`, so no statement is kept
 * that will not be used again.
 */
export class PreparedStatements {
  #db;
  #limit;
  /**
   * SQL text → { name, types, columns }: its name in this session, its parameters' type oids and its
   * result's description (none for a statement that returns no rows).
   */
  #statements = new Map();

  constructor(db, limit = 64) {
    this.#db = db;
    this.#limit = limit;
  }

  /** The rows of `sql` run with `params`, as `db.query(sql, params).rows` would give them. */
  async query(sql, params = []) {
    const db = this.#db;
    if (!this.#statements.has(sql) && this.#statements.size >= this.#limit)
      return (await db.query(sql, params)).rows;
    // What `db.query` holds: no transaction and no other query runs between the messages.
    return db._runExclusiveTransaction(() =>
      db._runExclusiveQuery(async () => {
        const statement = this.#statements.get(sql) ?? (await this.#prepare(sql));
        try {
          return await this.#run(statement, params);
        } catch (error) {
          if (error?.code !== CACHED_PLAN_CHANGED) throw error;
          // The schema changed under the statement (its columns): prepared again, run once more.
          await this.#forget(sql, statement);
          return this.#run(await this.#prepare(sql), params);
        }
      }),
    );
  }

  async #prepare(sql) {
    const name = `studio_${++named}`;
    const { messages } = await this.#db.execProtocol(
      concat([
        serialize.parse({ name, text: sql }),
        serialize.describe({ type: 'S', name }),
        serialize.sync(),
      ]),
      { syncToFs: false },
    );
    const statement = {
      name,
      types: parse.parseDescribeStatementResults(messages),
      // The statement's columns, as its runs will return them: each run need not ask again.
      columns: messages.find((message) => message.name === 'rowDescription'),
    };
    this.#statements.set(sql, statement);
    return statement;
  }

  async #forget(sql, statement) {
    this.#statements.delete(sql);
    await this.#db.execProtocol(
      concat([serialize.close({ type: 'S', name: statement.name }), serialize.sync()]),
      { syncToFs: false },
    );
  }

  async #run({ name, types, columns }, params) {
    const db = this.#db;
    // As PGlite's `query` encodes a value: by its parameter's type, else as text.
    const values = params.map((value, i) => {
      if (value === null || value === undefined) return null;
      const encode = db.serializers[types[i]];
      return encode ? encode(value) : value.toString();
    });
    const { messages } = await db.execProtocol(
      concat([serialize.bind({ statement: name, values }), serialize.execute({}), serialize.sync()]),
    );
    return parse.parseResults(columns ? [columns, ...messages] : messages, db.parsers)[0]?.rows ?? [];
  }
}

function concat(parts) {
  const out = new Uint8Array(parts.reduce((length, part) => length + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}
