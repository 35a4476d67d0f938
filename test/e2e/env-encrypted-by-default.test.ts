import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENV_STREAM } from '../../services/env/env.ts';
import { EnvReader } from '../../services/env/reader.ts';
import { expectApiError, startTestGateway, type TestGateway } from '../support/gateway.ts';

// Every env value is encrypted unless the admin marks it public, whatever its key is called: a
// DATABASE_URL, an SMTP_PASS or a SENTRY_DSN never reaches the log, a log line or a response in clear.

const random = () => randomBytes(18).toString('base64url');

describe('env values are encrypted by default', () => {
  let gw: TestGateway;
  const admin = (method: string, path: string, body?: unknown) =>
    gw.api(method, path, { token: gw.adminKey, body });

  const upserted = {
    DATABASE_URL: `postgres://app:${random()}@db.internal:5432/app`,
    SMTP_PASS: random(),
    SENTRY_DSN: `https://${random()}@o1.ingest.sentry.io/42`,
  };
  const imported = {
    IMPORTED_DATABASE_URL: `postgres://app:${random()}@db.internal/app`,
    MAIL_PASS: random(),
  };

  beforeAll(async () => {
    gw = await startTestGateway({ store: 'memory', logLevel: 'trace' });
  });
  afterAll(async () => {
    await gw?.close();
  });

  const rawEnvEvents = async () =>
    (await gw.running.ctx.events.readStream(ENV_STREAM)).filter((e) => e.type === 'EnvVariableSet');
  const listed = async () => {
    const res = await admin('GET', '/v1/env/list');
    expect(res.status, res.text).toBe(200);
    return new Map(
      (res.json.items as { key: string; value: string; secret: boolean }[]).map((i) => [i.key, i]),
    );
  };
  const clearIn = (text: string, values: Record<string, string>) =>
    Object.keys(values).filter((k) => text.includes(values[k]!));

  it('upsert without a flag seals, whatever the key is called; list masks; no log line holds the value', async () => {
    for (const [key, value] of Object.entries(upserted)) {
      const res = await admin('POST', '/v1/env/upsert', { key, value });
      expect(res.status, res.text).toBe(200);
      expect(res.json.item).toMatchObject({ key, secret: true });
      expect(res.json.item.value).toMatch(/^••••/);
    }
    const events = await rawEnvEvents();
    for (const key of Object.keys(upserted)) {
      const event = events.find((e) => (e.data as { key: string }).key === key);
      expect(event?.data, key).toMatchObject({ secret: true, sealed: expect.stringMatching(/^v1\./) });
      expect(event?.data, key).not.toHaveProperty('value');
    }
    expect(clearIn(JSON.stringify(events), upserted)).toEqual([]);
    const list = await listed();
    for (const key of Object.keys(upserted)) expect(list.get(key)).toMatchObject({ secret: true });
    expect(clearIn(JSON.stringify([...list.values()]), upserted)).toEqual([]);
    expect(gw.logs.some((line) => line.includes('/v1/env/upsert'))).toBe(true);
    expect(clearIn(gw.logs.join('\n'), upserted)).toEqual([]);
  });

  it('the gateway itself still reads the plaintext of an encrypted value', () => {
    const reader = new EnvReader(gw.running.ctx);
    for (const [key, value] of Object.entries(upserted)) expect(reader.get(key)).toBe(value);
  });

  it('a value marked public (`secret: false`) is stored and shown in clear', async () => {
    const res = await admin('POST', '/v1/env/upsert', { key: 'LOG_LEVEL', value: 'debug', secret: false });
    expect(res.json.item).toMatchObject({ key: 'LOG_LEVEL', value: 'debug', secret: false });
    expect((await listed()).get('LOG_LEVEL')).toMatchObject({ value: 'debug', secret: false });
    const event = (await rawEnvEvents()).find((e) => (e.data as { key: string }).key === 'LOG_LEVEL');
    expect(event?.data).toEqual({ key: 'LOG_LEVEL', secret: false, value: 'debug' });
  });

  it('a URL with a password, or a token parameter, is encrypted even when marked public', async () => {
    const password = random();
    const token = random();
    for (const [key, value] of [
      ['PUBLIC_DB_URL', `postgres://app:${password}@db/app`],
      ['PUBLIC_HOOK_URL', `https://hooks.example/x?access_token=${token}`],
    ] as const) {
      const res = await admin('POST', '/v1/env/upsert', { key, value, secret: false });
      expect(res.json.item, key).toMatchObject({ key, secret: true });
    }
    const events = JSON.stringify(await rawEnvEvents());
    expect(clearIn(events, { password, token })).toEqual([]);
    expect(clearIn(JSON.stringify([...(await listed()).values()]), { password, token })).toEqual([]);
  });

  it('import seals every value but the keys listed in `public`', async () => {
    const res = await admin('POST', '/v1/env/import', {
      content: [
        `IMPORTED_DATABASE_URL=${imported.IMPORTED_DATABASE_URL}`,
        `MAIL_PASS="${imported.MAIL_PASS}"`,
        'REGION=eu-west-1',
        'FEATURE_FLAGS=a,b',
      ].join('\n'),
      public: ['REGION', 'FEATURE_FLAGS', 'NOT_IN_FILE'],
    });
    expect(res.status, res.text).toBe(200);
    expect(res.json.imported).toEqual(['IMPORTED_DATABASE_URL', 'MAIL_PASS', 'REGION', 'FEATURE_FLAGS']);
    expect(res.json.errors).toEqual([
      { line: 0, message: 'NOT_IN_FILE: listed in public but not in the file' },
    ]);

    const events = await rawEnvEvents();
    const stored = (key: string) => events.findLast((e) => (e.data as { key: string }).key === key)?.data;
    expect(stored('IMPORTED_DATABASE_URL')).toMatchObject({ secret: true, sealed: expect.any(String) });
    expect(stored('MAIL_PASS')).toMatchObject({ secret: true, sealed: expect.any(String) });
    expect(stored('REGION')).toEqual({ key: 'REGION', secret: false, value: 'eu-west-1' });
    expect(clearIn(JSON.stringify(events), imported)).toEqual([]);

    const list = await listed();
    expect(list.get('REGION')).toMatchObject({ value: 'eu-west-1', secret: false });
    expect(list.get('FEATURE_FLAGS')).toMatchObject({ value: 'a,b', secret: false });
    expect(list.get('MAIL_PASS')).toMatchObject({ secret: true });
    expect(clearIn(JSON.stringify([...list.values()]), imported)).toEqual([]);
    expect(clearIn(gw.logs.join('\n'), imported)).toEqual([]);
    const reader = new EnvReader(gw.running.ctx);
    expect(reader.get('MAIL_PASS')).toBe(imported.MAIL_PASS);
  });

  it('100 KB of newlines is refused with 413 naming the line limit, at once', async () => {
    const res = await admin('POST', '/v1/env/import', { content: '\n'.repeat(100_000) });
    const error = expectApiError(res, 413, 'payload_too_large');
    expect(error.param).toBe('content');
    expect(error.message).toMatch(/100001 lines; at most 10000 lines/);
  });

  it('content over the byte limit is refused with 413 naming it', async () => {
    const res = await admin('POST', '/v1/env/import', { content: `A=${'x'.repeat(600 * 1024)}` });
    const error = expectApiError(res, 413, 'payload_too_large');
    expect(error.message).toMatch(/at most 524288 bytes/);
  });

  it('a file at the line limit, blank lines around its assignments, imports every assignment', async () => {
    const lines = Array.from({ length: 10_000 }, (_, i) => (i % 100 === 99 ? `BULK_${i}=v${i}` : ' \t'));
    const res = await admin('POST', '/v1/env/import', { content: lines.join('\n') });
    expect(res.status, res.text).toBe(200);
    expect(res.json.imported).toHaveLength(100);
    expect(res.json.errors).toEqual([]);
  });
});
