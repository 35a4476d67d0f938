import { describe, expect, it } from 'vitest';
import { UnstorableIdentifier } from '../event-store/types.ts';
import { toApiError } from './errors.ts';

describe('toApiError', () => {
  it('a stream id or event type no store can keep is the request’s fault: 400 validation_failed', () => {
    const error = toApiError(new UnstorableIdentifier('stream id', 'chat-a\u0000b'));
    expect(error).toMatchObject({ status: 400, code: 'validation_failed' });
    expect(error?.message).toContain('chat-a\\u0000b');
  });

  // PostgreSQL's errors, as PGlite and pg raise them: a message and a SQLSTATE `code`.
  const databaseError = (code: string, message: string) => Object.assign(new Error(message), { code });

  it.each([
    ['53100', 'could not extend file "base/5/16390": No space left on device', 'the disk is full'],
    [
      '42501',
      'could not write blocks 3796..3796 in file "base/5/16390": Read-only file system',
      'a file could not be read or written',
    ],
    [
      '58030',
      'could not fsync file "base/5/16390": Input/output error',
      'a file could not be read or written',
    ],
    ['08006', 'connection failure', 'the database cannot be reached'],
    ['57P01', 'terminating connection due to administrator command', 'the database cannot be reached'],
    ['ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432', 'the database cannot be reached'],
    ['53300', 'sorry, too many clients already', 'the database is out of resources'],
  ])(
    'a database whose machine fails (%s) is 503 unavailable with Retry-After, naming no file',
    (code, message, reason) => {
      const error = toApiError(databaseError(code, message));
      expect(error).toMatchObject({ status: 503, code: 'unavailable' });
      expect(error?.message).toBe(`storage is unavailable (${reason}); retry shortly`);
      expect(error?.options.headers).toEqual({ 'Retry-After': '5' });
    },
  );

  it('a missing privilege or a statement the database refuses stays unexpected: a 500 logged whole', () => {
    expect(toApiError(databaseError('42501', 'permission denied for table events'))).toBeUndefined();
    expect(toApiError(databaseError('42P01', 'relation "events" does not exist'))).toBeUndefined();
    expect(toApiError(new Error('no code'))).toBeUndefined();
  });
});
