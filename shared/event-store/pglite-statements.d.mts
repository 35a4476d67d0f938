import type { PGlite } from '@electric-sql/pglite';

/**
 * Queries outside transactions: each SQL text prepared once, each run in one pass
 * (`pglite-statements.mjs`).
 */
export declare class PreparedStatements {
  constructor(db: PGlite, limit?: number);
  query<Row = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<Row[]>;
}
