import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectApiError, sleep, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { freshPostgresDatabase, postgresUnavailableReason } from '../support/postgres.ts';

// The administration flow (studios, tokens, identities) over real HTTP,
// on every event store, and on the durable ones across a restart.

const TOKEN = /^stk_[A-Za-z0-9_-]{43}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const STUDIO_FIELDS = [
  'cache_ttl_s',
  'created_at',
  'id',
  'name',
  'paused_reason',
  'status',
  'updated_at',
  'version',
];
const TOKEN_FIELDS = ['created_at', 'expires_at', 'id', 'models', 'name', 'prefix', 'studio_id', 'tools'];

const database = await freshPostgresDatabase();
afterAll(async () => {
  await database?.drop();
});

interface KnownToken {
  label: string;
  token: string;
  /** What `GET /v1/services` answers with this token at the end of the flow. */
  expected: 200 | 401 | 403;
}

function expectStudioRecord(
  record: unknown,
  expected: { id?: string; name: string; status: string; paused_reason?: string | null },
) {
  const r = record as Record<string, unknown>;
  expect(Object.keys(r).sort()).toEqual(STUDIO_FIELDS);
  if (expected.id !== undefined) expect(r.id).toBe(expected.id);
  expect(r.id).toMatch(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/);
  expect(r.name).toBe(expected.name);
  expect(r.status).toBe(expected.status);
  expect(r.paused_reason).toBe(expected.paused_reason ?? null);
  expect(r.created_at).toMatch(ISO);
  expect(r.updated_at).toMatch(ISO);
  expect(Date.parse(r.updated_at as string)).toBeGreaterThanOrEqual(Date.parse(r.created_at as string));
  expect(Number.isInteger(r.version)).toBe(true);
}

function adminFlowSuite(store: 'memory' | 'sqlite' | 'postgres', databaseUrl?: string) {
  let gw: TestGateway;
  const known: KnownToken[] = [];

  beforeAll(async () => {
    gw = await startTestGateway({ store, databaseUrl });
  });
  afterAll(async () => {
    await gw?.close();
  });

  const admin = (method: string, path: string, body?: unknown) =>
    gw.api(method, path, { token: gw.adminKey, body });
  const services = (token: string) => gw.api('GET', '/v1/services', { token });
  const studioEvents = async (studioId: string) => {
    const res = await admin(
      'GET',
      `/v1/audit/events?stream=studio-${encodeURIComponent(studioId)}&limit=1000`,
    );
    expect(res.status).toBe(200);
    return res.json.items as { type: string; data: Record<string, unknown>; actor: string }[];
  };
  const applyToken = async (studioId: string, extra: Record<string, unknown> = {}) => {
    const res = await admin('POST', '/v1/studios/tokens/apply', { studio_id: studioId, ...extra });
    expect(res.status, res.text).toBe(201);
    return res;
  };

  it('create → apply → use → pause → activate → revoke → apply → remove', async () => {
    // create
    const created = await admin('POST', '/v1/studios/create', { name: 'Acme' });
    expect(created.status, created.text).toBe(201);
    expect(created.headers.get('x-request-id')).toBeTruthy();
    expectStudioRecord(created.json, { name: 'Acme', status: 'active' });
    const studioId = created.json.id as string;
    expect((await admin('GET', '/v1/studios/list')).json.items).toContainEqual(created.json);

    // apply a token: 201 {user_token, token}
    const applied = await applyToken(studioId, { name: 'ci' });
    expect(Object.keys(applied.json).sort()).toEqual(['token', 'user_token']);
    const first = applied.json.user_token as string;
    expect(first).toMatch(TOKEN);
    expect(Object.keys(applied.json.token).sort()).toEqual(TOKEN_FIELDS);
    expect(applied.json.token).toMatchObject({
      studio_id: studioId,
      name: 'ci',
      expires_at: null,
      models: null,
    });
    expect(applied.json.token.id).toEqual(expect.any(String));
    expect(applied.json.token.created_at).toMatch(ISO);
    expect(first.startsWith(applied.json.token.prefix)).toBe(true);
    expect(applied.json.token.prefix.length).toBeLessThan(16);
    const firstId = applied.json.token.id as string;

    // use it
    const used = await services(first);
    expect(used.status, used.text).toBe(200);
    expect((used.json.items as { id: string }[]).map((s) => s.id)).toEqual(
      expect.arrayContaining(['studios', 'env', 'audit']),
    );

    // pause: the token gets 403 studio_paused
    const paused = await admin('POST', '/v1/studios/pause', { studio_id: studioId, reason: 'billing' });
    expect(paused.status, paused.text).toBe(200);
    expectStudioRecord(paused.json, {
      id: studioId,
      name: 'Acme',
      status: 'paused',
      paused_reason: 'billing',
    });
    expect(paused.json.version).toBeGreaterThan(created.json.version);
    expectApiError(await services(first), 403, 'studio_paused');

    // activate: 200 again
    const activated = await admin('POST', '/v1/studios/activate', { studio_id: studioId });
    expect(activated.status, activated.text).toBe(200);
    expectStudioRecord(activated.json, { id: studioId, name: 'Acme', status: 'active', paused_reason: null });
    expect((await services(first)).status).toBe(200);

    // revoke: 401
    const revoked = await admin('POST', '/v1/studios/tokens/revoke', { token_id: firstId });
    expect(revoked.status, revoked.text).toBe(200);
    expect(revoked.json.token).toMatchObject({
      id: firstId,
      studio_id: studioId,
      revoked_at: expect.stringMatching(ISO),
    });
    expectApiError(await services(first), 401, 'unauthenticated');
    // revoking again changes nothing
    const before = (await studioEvents(studioId)).length;
    expect((await admin('POST', '/v1/studios/tokens/revoke', { token_id: firstId })).status).toBe(200);
    expect((await studioEvents(studioId)).length).toBe(before);

    // another token works
    const second = (await applyToken(studioId)).json;
    expect(second.user_token).toMatch(TOKEN);
    expect(second.user_token).not.toBe(first);
    expect(second.token.name).toEqual(expect.any(String));
    expect((await services(second.user_token)).status).toBe(200);

    // remove: 401, and every token of the studio is listed as revoked
    const removed = await admin('POST', '/v1/studios/remove', { studio_id: studioId });
    expect(removed.status, removed.text).toBe(200);
    expectStudioRecord(removed.json, { id: studioId, name: 'Acme', status: 'removed' });
    expectApiError(await services(second.user_token), 401, 'unauthenticated');
    const listed = await admin('GET', `/v1/studios/tokens/list?studio_id=${studioId}`);
    expect(listed.status).toBe(200);
    expect(listed.json.items).toHaveLength(2);
    for (const token of listed.json.items) {
      expect(token).toMatchObject({ studio_id: studioId, revoked_at: expect.stringMatching(ISO) });
      expect(JSON.stringify(token)).not.toContain(first);
      expect(JSON.stringify(token)).not.toContain(second.user_token);
    }
    expect((await studioEvents(studioId)).map((e) => e.type)).toEqual([
      'StudioCreated',
      'TokenIssued',
      'StudioPaused',
      'StudioActivated',
      'TokenRevoked',
      'TokenIssued',
      'StudioRemoved',
      'TokenRevoked',
    ]);
    const removedList = await admin('GET', '/v1/studios/list?status=removed');
    expect((removedList.json.items as { id: string }[]).map((s) => s.id)).toContain(studioId);

    known.push(
      { label: 'revoked token of the removed studio', token: first, expected: 401 },
      { label: 'token of the removed studio', token: second.user_token, expected: 401 },
    );
  });

  it('an expired token (expires_in_s: 1) answers 401 after a second', async () => {
    const created = await admin('POST', '/v1/studios/create', {
      name: 'Expiring',
      studio_id: `exp-${store}`,
    });
    expect(created.status, created.text).toBe(201);
    expect(created.json.id).toBe(`exp-${store}`);
    const applied = await applyToken(`exp-${store}`, { expires_in_s: 1 });
    const { user_token: token, token: record } = applied.json;
    expect(record.expires_at).toMatch(ISO);
    const lifetime = Date.parse(record.expires_at) - Date.parse(record.created_at);
    expect(lifetime).toBeGreaterThan(500);
    expect(lifetime).toBeLessThanOrEqual(1_500);
    expect((await services(token)).status).toBe(200);
    const wait = Date.parse(record.expires_at) + 100 - Date.now();
    if (wait > 0) await sleep(wait);
    expectApiError(await services(token), 401, 'unauthenticated');

    // an active studio with a live token and a paused one, for the restart check
    const live = (await applyToken(`exp-${store}`, { name: 'live' })).json.user_token as string;
    expect((await services(live)).status).toBe(200);
    const paused = await admin('POST', '/v1/studios/create', { name: 'On hold' });
    const pausedToken = (await applyToken(paused.json.id)).json.user_token as string;
    expect((await admin('POST', '/v1/studios/pause', { studio_id: paused.json.id })).status).toBe(200);
    expectApiError(await services(pausedToken), 403, 'studio_paused');
    known.push(
      { label: 'expired token', token, expected: 401 },
      { label: 'live token', token: live, expected: 200 },
      { label: 'token of a paused studio', token: pausedToken, expected: 403 },
    );
  });

  it('pause and activate are idempotent: no new event', async () => {
    const created = await admin('POST', '/v1/studios/create', { name: 'Twice' });
    const id = created.json.id as string;
    const events = async () => (await studioEvents(id)).map((e) => e.type);

    const p1 = await admin('POST', '/v1/studios/pause', { studio_id: id, reason: 'first' });
    expect(p1.status).toBe(200);
    expect(await events()).toEqual(['StudioCreated', 'StudioPaused']);
    const p2 = await admin('POST', '/v1/studios/pause', { studio_id: id, reason: 'second' });
    expect(p2.status, p2.text).toBe(200);
    expectStudioRecord(p2.json, { id, name: 'Twice', status: 'paused', paused_reason: 'first' });
    expect(p2.json.version).toBe(p1.json.version);
    expect(await events()).toEqual(['StudioCreated', 'StudioPaused']);

    const a1 = await admin('POST', '/v1/studios/activate', { studio_id: id });
    expect(a1.status).toBe(200);
    const a2 = await admin('POST', '/v1/studios/activate', { studio_id: id });
    expect(a2.status, a2.text).toBe(200);
    expect(a2.json).toEqual(a1.json);
    expect(await events()).toEqual(['StudioCreated', 'StudioPaused', 'StudioActivated']);
    // activating a studio that was never paused is a no-op too
    const fresh = await admin('POST', '/v1/studios/create', { name: 'Fresh' });
    expect((await admin('POST', '/v1/studios/activate', { studio_id: fresh.json.id })).status).toBe(200);
    expect((await studioEvents(fresh.json.id)).map((e) => e.type)).toEqual(['StudioCreated']);

    // every event names its actor and request
    const all = await admin('GET', `/v1/audit/events?stream=studio-${id}`);
    for (const event of all.json.items) {
      expect(event.actor).toBe('admin');
      expect(event.request_id).toEqual(expect.any(String));
    }
  });

  it('404 for an unknown studio or token, 409 when leaving removed or reusing an id', async () => {
    for (const [path, body] of [
      ['/v1/studios/pause', { studio_id: 'no-such-studio' }],
      ['/v1/studios/activate', { studio_id: 'no-such-studio' }],
      ['/v1/studios/remove', { studio_id: 'no-such-studio' }],
      ['/v1/studios/tokens/apply', { studio_id: 'no-such-studio' }],
      ['/v1/studios/tokens/revoke', { token_id: 'tok_nope' }],
    ] as const) {
      expectApiError(await admin('POST', path, body), 404, 'not_found');
    }
    expectApiError(await admin('GET', '/v1/studios/tokens/list?studio_id=no-such-studio'), 404, 'not_found');
    // ids that happen to be names of Object.prototype members are unknown ids like any other
    for (const id of ['constructor', 'toString', 'hasOwnProperty', 'valueOf']) {
      const list = await admin('GET', `/v1/studios/tokens/list?studio_id=${id}`);
      expect(expectApiError(list, 404, 'not_found').message).toContain(id);
      const revoke = await admin('POST', '/v1/studios/tokens/revoke', { token_id: id });
      expect(expectApiError(revoke, 404, 'not_found').message).toBe(`token ${id} does not exist`);
      expectApiError(await admin('POST', '/v1/studios/pause', { studio_id: id }), 404, 'not_found');
    }

    const created = await admin('POST', '/v1/studios/create', { name: 'Gone', studio_id: `gone-${store}` });
    expect(created.status).toBe(201);
    expectApiError(
      await admin('POST', '/v1/studios/create', { name: 'Again', studio_id: `gone-${store}` }),
      409,
      'conflict',
    );
    expect((await admin('POST', '/v1/studios/remove', { studio_id: `gone-${store}` })).status).toBe(200);
    const eventsAfterRemove = (await studioEvents(`gone-${store}`)).length;
    expectApiError(await admin('POST', '/v1/studios/pause', { studio_id: `gone-${store}` }), 409, 'conflict');
    expectApiError(
      await admin('POST', '/v1/studios/activate', { studio_id: `gone-${store}` }),
      409,
      'conflict',
    );
    expectApiError(
      await admin('POST', '/v1/studios/tokens/apply', { studio_id: `gone-${store}` }),
      409,
      'conflict',
    );
    // removing again: still removed, nothing appended
    const again = await admin('POST', '/v1/studios/remove', { studio_id: `gone-${store}` });
    expect(again.status, again.text).toBe(200);
    expect(again.json.status).toBe('removed');
    expect((await studioEvents(`gone-${store}`)).length).toBe(eventsAfterRemove);
  });

  if (store === 'memory') return;

  it('after a restart the studios, their status and tokens are all still there', async () => {
    expect(known.length).toBe(5);
    const snapshot = async () => {
      const studios = (await admin('GET', '/v1/studios/list')).json.items as { id: string }[];
      const tokens: Record<string, unknown> = {};
      for (const s of studios)
        tokens[s.id] = (await admin('GET', `/v1/studios/tokens/list?studio_id=${s.id}`)).json.items;
      const auth: Record<string, number> = {};
      for (const k of known) auth[k.label] = (await services(k.token)).status;
      // The sealer may seal the tail at any moment (before or after the restart): seals are not what changed.
      const events = (
        (await admin('GET', '/v1/audit/events?limit=1000')).json.items as { stream: string }[]
      ).filter((event) => event.stream !== 'audit-seals');
      return { studios, tokens, auth, events };
    };
    const before = await snapshot();
    expect(before.auth).toEqual(Object.fromEntries(known.map((k) => [k.label, k.expected])));
    expect(before.studios.length).toBeGreaterThanOrEqual(6);

    const urlBefore = gw.url;
    await gw.restart();
    expect(gw.url).not.toBe(urlBefore);

    const after = await snapshot();
    expect(after.studios).toEqual(before.studios);
    expect(after.tokens).toEqual(before.tokens);
    expect(after.auth).toEqual(before.auth);
    expect(after.events).toEqual(before.events);

    // and the restarted gateway keeps working: a new token for the live studio
    const fresh = await applyToken(`exp-${store}`);
    expect((await services(fresh.json.user_token)).status).toBe(200);
  });
}

describe('admin flow on the memory store', () => {
  adminFlowSuite('memory');
});

describe('admin flow on SQLite, surviving a restart', () => {
  adminFlowSuite('sqlite');
});

describe.skipIf(database === undefined)(
  database
    ? 'admin flow on PostgreSQL, surviving a restart'
    : `admin flow on PostgreSQL (skipped: ${postgresUnavailableReason})`,
  () => {
    adminFlowSuite('postgres', database?.url);
  },
);
