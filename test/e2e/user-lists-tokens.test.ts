import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asAdmin } from '../support/admin.ts';
import { expectApiError, startTestGateway, type TestGateway } from '../support/gateway.ts';

// A user token lists the tokens of its own studio (what the console shows a studio's user), never
// another studio's, and never a secret.

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway({ store: 'memory', logLevel: 'silent' });
  for (const id of ['acme', 'globex'])
    await asAdmin(gw, 'POST', '/v1/studios/create', { studio_id: id, name: id });
});
afterAll(async () => gw?.close());

describe('GET /v1/studios/tokens/list for a user token', () => {
  it("answers its own studio's tokens without a studio_id, and refuses another studio", async () => {
    const mine = (await asAdmin(gw, 'POST', '/v1/studios/tokens/apply', { studio_id: 'acme', name: 'mine' }))
      .json;
    await asAdmin(gw, 'POST', '/v1/studios/tokens/apply', {
      studio_id: 'acme',
      name: 'sibling',
      models: ['dev/*'],
    });
    await asAdmin(gw, 'POST', '/v1/studios/tokens/apply', { studio_id: 'globex', name: 'theirs' });

    const listed = await gw.api('GET', '/v1/studios/tokens/list', { token: mine.user_token });
    expect(listed.status).toBe(200);
    expect(listed.json.items.map((t: { name: string }) => t.name)).toEqual(['mine', 'sibling']);
    expect(listed.text).not.toContain(mine.user_token);
    expect(listed.text).not.toMatch(/hash/i);
    const named = await gw.api('GET', '/v1/studios/tokens/list?studio_id=acme', { token: mine.user_token });
    expect(named.json).toEqual(listed.json);

    const other = await gw.api('GET', '/v1/studios/tokens/list?studio_id=globex', { token: mine.user_token });
    expectApiError(other, 403, 'studio_mismatch');
  });

  it('still needs a studio_id from the admin, and issuing or revoking stays the admin’s', async () => {
    const err = expectApiError(await asAdmin(gw, 'GET', '/v1/studios/tokens/list'), 400, 'validation_failed');
    expect(err.param).toBe('studio_id');
    const user = (await asAdmin(gw, 'POST', '/v1/studios/tokens/apply', { studio_id: 'acme' })).json;
    const apply = await gw.api('POST', '/v1/studios/tokens/apply', {
      token: user.user_token,
      body: { studio_id: 'acme' },
    });
    expectApiError(apply, 403, 'forbidden');
    const revoke = await gw.api('POST', '/v1/studios/tokens/revoke', {
      token: user.user_token,
      body: { token_id: user.token.id },
    });
    expectApiError(revoke, 403, 'forbidden');
  });
});
