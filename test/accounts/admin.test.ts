import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminOk, createStudio } from '../support/admin.ts';
import { expectApiError, startTestGateway, type TestGateway } from '../support/gateway.ts';

// The admin side of accounts: create, list, remove, over real HTTP.

let gw: TestGateway;
const studio = 'admin-a';

const create = (body: Record<string, unknown>) =>
  gw.api('POST', '/v1/accounts/create', { token: gw.adminKey, body: { studio_id: studio, ...body } });

beforeAll(async () => {
  gw = await startTestGateway({ store: 'memory', logLevel: 'silent' });
  await createStudio(gw, studio);
  await createStudio(gw, 'admin-b');
});

afterAll(async () => {
  await gw?.close();
});

describe('create', () => {
  it('201 with the account; a password is stored encrypted and never shown', async () => {
    const res = await create({ email: 'Grace@Example.com', password: 'hopper-1906', name: 'Grace Hopper' });
    expect(res.status, res.text).toBe(201);
    expect(res.json).toEqual({
      id: expect.stringMatching(/^acc_[A-Za-z0-9_-]{16}$/),
      studio_id: studio,
      email: 'Grace@Example.com',
      name: 'Grace Hopper',
      status: 'active',
      has_password: true,
      identities: [],
      created_at: expect.any(String),
      updated_at: expect.any(String),
      last_login_at: null,
    });
    const events = (await adminOk(gw, 'GET', `/v1/audit/events?stream=account-${res.json.id}`)).json.items;
    expect(events.map((e: { type: string }) => e.type)).toEqual(['AccountCreated', 'PasswordSet']);
    expect(events[0].data).toEqual({
      accountId: res.json.id,
      studioId: studio,
      email: 'Grace@Example.com',
      name: 'Grace Hopper',
      origin: 'admin',
    });
    expect(Object.keys(events[1].data).sort()).toEqual(['accountId', 'sealedHash', 'studioId']);
    expect(events[1].data.sealedHash).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(JSON.stringify(events)).not.toContain('hopper-1906');
    expect(JSON.stringify(events)).not.toContain('$argon2');
  });

  it('without a password or a name', async () => {
    const res = await create({ email: 'nopass@example.com' });
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({ has_password: false, name: null });
  });

  it('the email is unique in a studio, in any case; another studio may have it', async () => {
    const error = expectApiError(await create({ email: 'GRACE@example.COM' }), 409, 'conflict');
    expect(error.param).toBe('email');
    const other = await gw.api('POST', '/v1/accounts/create', {
      token: gw.adminKey,
      body: { studio_id: 'admin-b', email: 'grace@example.com' },
    });
    expect(other.status).toBe(201);
  });

  it('concurrent creations of one email: exactly one wins', async () => {
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => create({ email: `Race@Example.com`, name: `racer ${i}` })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
    const list = await adminOk(gw, 'GET', `/v1/accounts/list?studio_id=${studio}`);
    expect(
      list.json.items.filter((a: { email: string }) => a.email.toLowerCase() === 'race@example.com'),
    ).toHaveLength(1);
  });

  it.each([
    [{ email: 'not-an-email' }, 'email'],
    [{ email: 'short@example.com', password: 'short' }, 'password'],
    [{ email: 'long@example.com', password: 'x'.repeat(1025) }, 'password'],
    [{ email: 'name@example.com', name: '   ' }, 'name'],
    [{ email: 'extra@example.com', role: 'admin' }, 'role'],
    [{ studio_id: 'bad id!', email: 'id@example.com' }, 'studio_id'],
  ])('%j is a 400 naming %s', async (body, param) => {
    expect(expectApiError(await create(body), 400, 'validation_failed').param).toBe(param);
  });

  it('an unknown studio is a 404, a removed one a 409', async () => {
    expectApiError(await create({ studio_id: 'no-such-studio', email: 'a@example.com' }), 404, 'not_found');
    await createStudio(gw, 'admin-removed');
    await adminOk(gw, 'POST', '/v1/studios/remove', { studio_id: 'admin-removed' });
    expectApiError(await create({ studio_id: 'admin-removed', email: 'a@example.com' }), 409, 'conflict');
  });
});

describe('list', () => {
  it("lists a studio's accounts only, oldest first; filters by status", async () => {
    const res = await adminOk(gw, 'GET', `/v1/accounts/list?studio_id=${studio}`);
    const items = res.json.items as { studio_id: string; created_at: string; email: string }[];
    expect(items.length).toBeGreaterThanOrEqual(3);
    expect(items.every((a) => a.studio_id === studio)).toBe(true);
    expect(items.map((a) => a.created_at)).toEqual([...items.map((a) => a.created_at)].sort());
    const removed = await adminOk(gw, 'GET', `/v1/accounts/list?studio_id=${studio}&status=removed`);
    expect(removed.json.items).toEqual([]);
  });

  it('an unknown studio is a 404; the studio is required', async () => {
    expectApiError(
      await gw.api('GET', '/v1/accounts/list?studio_id=nope', { token: gw.adminKey }),
      404,
      'not_found',
    );
    expectApiError(
      await gw.api('GET', '/v1/accounts/list', { token: gw.adminKey }),
      400,
      'validation_failed',
    );
  });
});

describe('remove', () => {
  it('removes for good: status removed, the email free again, a second remove changes nothing', async () => {
    const made = await create({ email: 'leaving@example.com', password: 'goodbye-123' });
    const removed = await adminOk(gw, 'POST', '/v1/accounts/remove', { account_id: made.json.id });
    expect(removed.json).toMatchObject({ id: made.json.id, status: 'removed' });
    const again = await adminOk(gw, 'POST', '/v1/accounts/remove', { account_id: made.json.id });
    expect(again.json.status).toBe('removed');
    const events = (await adminOk(gw, 'GET', `/v1/audit/events?stream=account-${made.json.id}`)).json.items;
    expect(events.map((e: { type: string }) => e.type)).toEqual([
      'AccountCreated',
      'PasswordSet',
      'AccountRemoved',
    ]);

    const listed = await adminOk(gw, 'GET', `/v1/accounts/list?studio_id=${studio}&status=removed`);
    expect(listed.json.items.map((a: { id: string }) => a.id)).toEqual([made.json.id]);
    const recreated = await create({ email: 'leaving@example.com' });
    expect(recreated.status).toBe(201);
    expect(recreated.json.id).not.toBe(made.json.id);
  });

  it('an unknown account is a 404', async () => {
    expectApiError(
      await gw.api('POST', '/v1/accounts/remove', { token: gw.adminKey, body: { account_id: 'acc_nope' } }),
      404,
      'not_found',
    );
  });
});
