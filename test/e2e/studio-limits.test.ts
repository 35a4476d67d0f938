import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITS_EVENT_TYPES } from '../../services/ai/rate-limits/limits.ts';
import { limitsProjection } from '../../services/ai/rate-limits/read-model.ts';
import { type ApiResponse, expectApiError, startTestGateway, type TestGateway } from '../support/gateway.ts';

// `studios/limits/*`: an admin sets, lists and removes the rate limits of a studio and of its tokens.
// Every change is an event of `limits-<studio>` with its actor and request id; the read model folded
// again from the log is the one the gateway holds.

let gw: TestGateway;
let tokenA: string;
let tokenB: string;

const admin = (method: string, path: string, body?: unknown) =>
  gw.api(method, path, { token: gw.adminKey, body });
const ok = (res: ApiResponse) => {
  if (res.status !== 200) throw new Error(`${res.status} ${res.text}`);
  return res.json;
};

beforeAll(async () => {
  gw = await startTestGateway({ store: 'memory', logLevel: 'silent' });
  for (const id of ['acme', 'beta', 'gone'])
    await admin('POST', '/v1/studios/create', { name: id, studio_id: id });
  tokenA = (await admin('POST', '/v1/studios/tokens/apply', { studio_id: 'acme' })).json.token.id;
  tokenB = (await admin('POST', '/v1/studios/tokens/apply', { studio_id: 'beta' })).json.token.id;
  await admin('POST', '/v1/studios/remove', { studio_id: 'gone' });
});
afterAll(async () => {
  await gw?.close();
});

describe('studios/limits', () => {
  it("sets a studio's limits and a token's, lists them studio first, and removes one", async () => {
    const studio = ok(
      await admin('POST', '/v1/studios/limits/set', { studio_id: 'acme', rpm: 60, tpm: 10_000 }),
    );
    expect(studio).toEqual({
      studio_id: 'acme',
      token_id: null,
      rpm: 60,
      tpm: 10_000,
      max_concurrent: null,
      updated_at: expect.any(String),
    });
    const token = ok(
      await admin('POST', '/v1/studios/limits/set', {
        studio_id: 'acme',
        token_id: tokenA,
        max_concurrent: 2,
      }),
    );
    expect(token).toMatchObject({ studio_id: 'acme', token_id: tokenA, rpm: null, max_concurrent: 2 });

    expect(ok(await admin('GET', '/v1/studios/limits/list?studio_id=acme')).items).toEqual([studio, token]);
    expect(ok(await admin('GET', '/v1/studios/limits/list?studio_id=beta')).items).toEqual([]);

    expect(
      ok(await admin('POST', '/v1/studios/limits/remove', { studio_id: 'acme', token_id: tokenA })),
    ).toEqual({
      studio_id: 'acme',
      token_id: tokenA,
      removed: true,
    });
    expect(ok(await admin('GET', '/v1/studios/limits/list?studio_id=acme')).items).toEqual([studio]);
    expectApiError(
      await admin('POST', '/v1/studios/limits/remove', { studio_id: 'acme', token_id: tokenA }),
      404,
      'not_found',
    );
  });

  it('a set replaces the scope whole: a limit left out is no longer set', async () => {
    ok(await admin('POST', '/v1/studios/limits/set', { studio_id: 'beta', rpm: 5, tpm: 100 }));
    const after = ok(await admin('POST', '/v1/studios/limits/set', { studio_id: 'beta', max_concurrent: 4 }));
    expect(after).toMatchObject({ rpm: null, tpm: null, max_concurrent: 4 });
  });

  it.each([
    [{ studio_id: 'acme' }, 'no limit at all'],
    [{ studio_id: 'acme', rpm: 0 }, 'zero'],
    [{ studio_id: 'acme', tpm: -5 }, 'negative'],
    [{ studio_id: 'acme', max_concurrent: 1.5 }, 'not an integer'],
    [{ studio_id: 'acme', rpm: '10' }, 'a string'],
    [{ studio_id: 'acme', rpm: 10, burst: 3 }, 'an unknown field'],
  ])('refuses %j (%s) with a 400', async (body, _why) => {
    expectApiError(await admin('POST', '/v1/studios/limits/set', body), 400, 'validation_failed');
  });

  it('answers 404 for an unknown studio, and for a token that is not of the studio', async () => {
    expectApiError(
      await admin('POST', '/v1/studios/limits/set', { studio_id: 'nope', rpm: 1 }),
      404,
      'not_found',
    );
    expectApiError(await admin('GET', '/v1/studios/limits/list?studio_id=nope'), 404, 'not_found');
    const other = expectApiError(
      await admin('POST', '/v1/studios/limits/set', { studio_id: 'acme', token_id: tokenB, rpm: 1 }),
      404,
      'not_found',
    );
    expect(other.param).toBe('token_id');
    expectApiError(
      await admin('POST', '/v1/studios/limits/set', { studio_id: 'acme', token_id: 'tok_nope', rpm: 1 }),
      404,
      'not_found',
    );
    expectApiError(await admin('POST', '/v1/studios/limits/remove', { studio_id: 'nope' }), 404, 'not_found');
  });

  it('a removed studio takes no new limits (409)', async () => {
    expectApiError(
      await admin('POST', '/v1/studios/limits/set', { studio_id: 'gone', rpm: 1 }),
      409,
      'conflict',
    );
  });

  it('every change is an event with its actor and request id', async () => {
    const set = await admin('POST', '/v1/studios/limits/set', {
      studio_id: 'beta',
      token_id: tokenB,
      tpm: 77,
    });
    const { items } = ok(await admin('GET', '/v1/audit/events?stream=limits-beta&limit=100'));
    expect(items.at(-1)).toMatchObject({
      type: 'LimitsSet',
      data: { studioId: 'beta', tokenId: tokenB, rpm: null, tpm: 77, maxConcurrent: null },
      actor: 'admin',
      request_id: set.headers.get('x-request-id'),
    });
  });

  it('setting what is set records nothing', async () => {
    const count = async () =>
      ok(await admin('GET', '/v1/audit/events?stream=limits-beta&limit=100')).items.length;
    const before = await count();
    ok(await admin('POST', '/v1/studios/limits/set', { studio_id: 'beta', token_id: tokenB, tpm: 77 }));
    expect(await count()).toBe(before);
  });

  it('the read model folded again from the log, and from its snapshot, is the live one', async () => {
    const { ctx } = gw.running;
    const live = ctx.projections.state(limitsProjection);
    const rebuilt = limitsProjection.initialState();
    for (const event of await ctx.events.readAll({ types: LIMITS_EVENT_TYPES, limit: 10_000 }))
      limitsProjection.apply(rebuilt, event as Parameters<typeof limitsProjection.apply>[1]);
    expect(rebuilt).toEqual(live);
    expect(live.size).toBeGreaterThan(0);
    const snapshot = JSON.parse(JSON.stringify(limitsProjection.toSnapshot(live)));
    expect(limitsProjection.fromSnapshot(snapshot)).toEqual(live);
  });
});
