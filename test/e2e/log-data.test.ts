import { Writable } from 'node:stream';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../shared/logger.ts';
import { baseDatabaseUrl } from '../support/postgres.ts';

function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { logger: createLogger('info', stream), text: () => lines.join('') };
}

describe('errors in log lines carry no data', () => {
  it('a driver error keeps its class and code, not the statement, its parameters or the values', async () => {
    const client = new pg.Client({ connectionString: baseDatabaseUrl() });
    await client.connect();
    const error = await client
      .query('SELECT $1::uuid AS id, $2::text AS prompt', ['name-of-a-customer', 'a private prompt'])
      .catch((e: unknown) => e);
    await client.end();
    expect(error).toBeInstanceOf(Error);
    const { logger, text } = capture();
    logger.error({ err: error, requestId: 'req-1' }, 'append failed');
    const line = JSON.parse(text());
    expect(line.err.code).toBe('22P02');
    expect(line.err.type).toBe('DatabaseError');
    expect(line.requestId).toBe('req-1');
    expect(text()).not.toContain('name-of-a-customer');
    expect(text()).not.toContain('private prompt');
  });

  it('fields a library hangs on an error (query, params, detail, body) are dropped; quoted text is elided', () => {
    const error = Object.assign(new Error(`Unexpected token 'x', "{"prompt": "hush"}" is not valid JSON`), {
      code: 'E_PARSE',
      query: 'INSERT INTO events VALUES ($1)',
      params: ['{"prompt":"hush"}'],
      detail: 'Key (name)=(hush) already exists.',
      body: { prompt: 'hush' },
    });
    const { logger, text } = capture();
    logger.warn({ err: new Error('could not append', { cause: error }) }, 'failed');
    const line = JSON.parse(text());
    expect(line.err.cause.code).toBe('E_PARSE');
    expect(line.err.cause.message).toBe('Unexpected token …');
    expect(text()).not.toMatch(/hush|INSERT/);
  });
});
