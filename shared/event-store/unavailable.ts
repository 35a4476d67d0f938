import { sqlState } from './sql-driver.ts';

/**
 * Why a store could not do its part, when the cause is its machine and a retry may succeed once
 * that is fixed, in words a client may read (no file names); undefined for anything else.
 *
 * PostgreSQL reports a file it could not read or write through one mapping of the system's error:
 * 53100 for a full disk, 42501 for a file it may not write (a file system gone read-only; the same
 * code as a missing privilege, told apart by the message, which for files begins "could not"), and
 * 58030 for any other I/O error. Classes 08 and 57 (and the socket's own errors) are a server that
 * cannot be reached or is shutting down; the rest of class 53 is one out of memory or connections.
 * SQLite says SQLITE_FULL for a full disk and SQLITE_READONLY for a file it may not write (its I/O
 * errors stop the log instead: `EventLogStopped`); the embedded store's own writes (the room made
 * ahead of its WAL) fail with the system's ENOSPC.
 */
export function storageUnavailable(error: unknown): string | undefined {
  const code = sqlState(error);
  if (code === undefined) return undefined;
  if (code === '53100' || code === 'SQLITE_FULL' || code === 'ENOSPC') return 'the disk is full';
  if (
    code === '58030' ||
    code.startsWith('SQLITE_READONLY') ||
    code === 'EROFS' ||
    (code === '42501' && /^could not /.test((error as Error).message ?? ''))
  )
    return 'a file could not be read or written';
  if (code.startsWith('08') || code.startsWith('57') || UNREACHABLE.has(code))
    return 'the database cannot be reached';
  if (code.startsWith('53') || code === 'SQLITE_NOMEM') return 'the database is out of resources';
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
