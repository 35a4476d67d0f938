import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  expectApiError,
  startTestGateway,
  type TestGateway,
  type TestStoreKind,
} from '../support/gateway.ts';
import { freshPostgresDatabase, postgresUnavailableReason } from '../support/postgres.ts';

// Text JSON allows but PostgreSQL's jsonb and text do not (a NUL, a lone surrogate) is kept by every
// store, over real HTTP; as a stream id or event type in a query it is a 400, never a 5xx.

const database = await freshPostgresDatabase();
afterAll(async () => {
  await database?.drop();
});

const AWKWARD = 'a\u0000b\ud800';

function textSuite(store: TestStoreKind, databaseUrl?: string) {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({ store, databaseUrl, logLevel: 'silent' });
  });
  afterAll(async () => {
    await gw?.close();
  });
  const admin = (method: string, path: string, body?: unknown) =>
    gw.api(method, path, { token: gw.adminKey, body });

  it('a studio, a token and an env value named with NUL and a lone surrogate come back identical', async () => {
    const created = await admin('POST', '/v1/studios/create', { name: AWKWARD });
    expect(created.status, created.text).toBe(201);
    expect(created.json.name).toBe(AWKWARD);
    const studioId = created.json.id as string;
    const listed = (await admin('GET', '/v1/studios/list')).json.items as { id: string; name: string }[];
    expect(listed.find((s) => s.id === studioId)?.name).toBe(AWKWARD);

    const token = await admin('POST', '/v1/studios/tokens/apply', { studio_id: studioId, name: AWKWARD });
    expect(token.status, token.text).toBe(201);
    expect(token.json.token.name).toBe(AWKWARD);

    const env = await admin('POST', '/v1/env/upsert', {
      key: 'AWKWARD_TEXT',
      value: `\\u0000${AWKWARD}`,
      secret: false,
    });
    expect(env.status, env.text).toBe(200);
    const envList = (await admin('GET', '/v1/env/list')).json.items as { key: string; value: string }[];
    expect(envList.find((e) => e.key === 'AWKWARD_TEXT')?.value).toBe(`\\u0000${AWKWARD}`);

    const audit = await admin('GET', `/v1/audit/events?stream=studio-${encodeURIComponent(studioId)}`);
    expect(audit.status, audit.text).toBe(200);
    expect(audit.json.items.map((e: { data: { name: string } }) => e.data.name)).toEqual([AWKWARD, AWKWARD]);
  });

  it.each([
    ['stream', '%00'],
    ['stream', 'studio-x%00'],
    ['type', 'StudioCreated%00'],
  ])('audit ?%s=%s answers 400 validation_failed naming the param', async (param, value) => {
    const res = await admin('GET', `/v1/audit/events?${param}=${value}`);
    const error = expectApiError(res, 400, 'validation_failed');
    expect(error.param).toBe(param);
  });
}

describe('text in events on SQLite', () => {
  textSuite('sqlite');
});

describe.skipIf(database === undefined)(
  database
    ? 'text in events on PostgreSQL'
    : `text in events on PostgreSQL (skipped: ${postgresUnavailableReason})`,
  () => {
    textSuite('postgres', database?.url);
  },
);
