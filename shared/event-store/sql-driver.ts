/** The little the SQL adapter needs from a driver (`pg`, or a test's wrapper around it). */
export interface SqlExecutor {
  query<Row = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<{ rows: Row[] }>;
  /** Runs a script of several statements without parameters. */
  exec(sql: string): Promise<void>;
}

export interface SqlDriver extends SqlExecutor {
  /** Runs `work` in one transaction: commit when it resolves, roll back when it throws. */
  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** PostgreSQL's SQLSTATE for a unique violation. */
export const UNIQUE_VIOLATION = '23505';

export function sqlState(error: unknown): string | undefined {
  if (typeof error === 'object' && error !== null && 'code' in error) {
    const code = (error as { code: unknown }).code;
    return typeof code === 'string' ? code : undefined;
  }
  return undefined;
}

/**
 * Why a database could not do its part, when the cause is its machine and a retry may succeed once
 * that is fixed, in words a client may read (no file names); undefined for anything else.
 * PostgreSQL reports a file it could not read or write through one mapping of the system's error:
 * 53100 for a full disk, 42501 for a file it may not write (a file system gone read-only; the same
 * code as a missing privilege, told apart by the message, which for files begins "could not"), and
 * 58030 for any other I/O error. Classes 08 and 57 (and the socket's own errors) are a server that
 * cannot be reached or is shutting down; the rest of class 53 is one out of memory or connections.
 */
export function storageUnavailable(error: unknown): string | undefined {
  const code = sqlState(error);
  if (code === undefined) return undefined;
  if (code === '53100') return 'the disk is full';
  if (code === '58030' || (code === '42501' && /^could not /.test((error as Error).message ?? '')))
    return 'a file could not be read or written';
  if (code.startsWith('08') || code.startsWith('57') || UNREACHABLE.has(code))
    return 'the database cannot be reached';
  if (code.startsWith('53')) return 'the database is out of resources';
  return undefined;
}

const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EPIPE',
]);
