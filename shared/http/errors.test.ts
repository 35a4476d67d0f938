import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import express from 'express';
import { describe, expect, it } from 'vitest';
import { UnstorableIdentifier } from '../event-store/types.ts';
import { createLogger } from '../logger.ts';
import { errorMiddleware, toApiError } from './errors.ts';

describe('toApiError', () => {
  it('a stream id or event type no store can keep is the request’s fault: 400 validation_failed', () => {
    const error = toApiError(new UnstorableIdentifier('stream id', 'chat-a\u0000b'));
    expect(error).toMatchObject({ status: 400, code: 'validation_failed' });
    expect(error?.message).toContain('chat-a\\u0000b');
  });

  // The stores' errors: PostgreSQL's (a message and a SQLSTATE `code`), SQLite's (better-sqlite3's
  // `SQLITE_*` codes) and the system's (the embedded store's own writes).
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
    ['SQLITE_FULL', 'database or disk is full', 'the disk is full'],
    ['ENOSPC', 'ENOSPC: no space left on device, write', 'the disk is full'],
    ['SQLITE_READONLY', 'attempt to write a readonly database', 'a file could not be read or written'],
    ['SQLITE_NOMEM', 'out of memory', 'the database is out of resources'],
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

describe('errorMiddleware', () => {
  it('answers a database that failed with 503 and Retry-After, and logs the database’s own words', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const app = express();
    app.get('/write', () => {
      throw Object.assign(new Error('could not extend file "base/5/16390": No space left on device'), {
        code: '53100',
      });
    });
    app.use(errorMiddleware(createLogger('info', sink)));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/write`);
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('5');
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error).toMatchObject({ code: 'unavailable' });
      expect(body.error.message).not.toContain('base/5');
      // The log's own rule for error messages applies: cut at the first quote, the code kept.
      const logged = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(logged).toEqual([
        expect.objectContaining({
          level: 50,
          msg: body.error.message,
          err: expect.objectContaining({ code: '53100', message: 'could not extend file …' }),
        }),
      ]);
    } finally {
      server.close();
    }
  });
});
