import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { studioDecider, studioStreamId } from '../../services/studios/studio.ts';
import { newId, newUserToken, sha256Hex } from '../../shared/crypto.ts';
import { handleCommand } from '../../shared/decider.ts';
import { FailingReads } from '../../shared/event-store/testing.ts';
import { waitUntil } from '../../shared/testing/wait.ts';
import { expectApiError, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { freshPostgresDatabase, postgresUnavailableReason } from '../support/postgres.ts';

// The gateway's read models (tokens, studios) stop following the log when its reads fail (a reset
// connection): it must keep retrying, refuse to answer from the stale state, say so on /health and
// /ready, and be right again, revocations included, once reads succeed.

const STALE_AFTER_MS = 300;
const database = await freshPostgresDatabase();
afterAll(async () => {
  await database?.drop();
});

function failClosedSuite(store: 'memory' | 'postgres', databaseUrl?: string) {
  const reads = new FailingReads();
  let gw: TestGateway;

  beforeAll(async () => {
    gw = await startTestGateway({
      store,
      databaseUrl,
      logLevel: 'warn',
      storeHooks: reads.hooks,
      readModels: { staleAfterMs: STALE_AFTER_MS, retry: { initialMs: 10, maxMs: 50 } },
    });
  });
  afterAll(async () => {
    reads.failing = false;
    await gw?.close();
  });

  const admin = (method: string, path: string, body?: unknown) =>
    gw.api(method, path, { token: gw.adminKey, body });
  const asUser = (token: string) => gw.api('GET', '/v1/services', { token });

  /** Issues a token the way another gateway process sharing the log would: straight into the log. */
  async function issueElsewhere(studioId: string): Promise<string> {
    const token = newUserToken();
    await handleCommand(
      gw.running.ctx.events,
      studioStreamId(studioId),
      studioDecider,
      {
        type: 'IssueToken',
        studioId,
        tokenId: newId('tok'),
        name: 'elsewhere',
        prefix: token.slice(0, 8),
        tokenHash: sha256Hex(token),
        expiresAt: null,
        models: null,
      },
      { actor: 'admin' },
    );
    return token;
  }

  it('refuses every /v1 request while stalled, reports it, then catches up: revoked refused, issued accepted', async () => {
    expect((await admin('POST', '/v1/studios/create', { name: 'Stall', studio_id: 'stall' })).status).toBe(
      201,
    );
    const kept = (await admin('POST', '/v1/studios/tokens/apply', { studio_id: 'stall' })).json;
    const doomed = (await admin('POST', '/v1/studios/tokens/apply', { studio_id: 'stall' })).json;
    expect((await asUser(kept.user_token)).status).toBe(200);
    expect((await asUser(doomed.user_token)).status).toBe(200);
    expect((await gw.api('GET', '/ready')).status).toBe(200);
    expect((await gw.api('GET', '/health')).json).toMatchObject({
      status: 'ok',
      read_models: { state: 'live' },
    });

    // Reads of the log fail from now on. The revocation is stored, but the read models cannot show it:
    // a clear 503, not a 200 built from a state without it (nor a 500).
    reads.failing = true;
    const [revoked, applied] = await Promise.all([
      admin('POST', '/v1/studios/tokens/revoke', { token_id: doomed.token.id }),
      admin('POST', '/v1/studios/tokens/apply', { studio_id: 'stall', name: 'unshown' }),
    ]);
    expect(expectApiError(revoked, 503, 'unavailable').message).toMatch(/was stored/);
    expect(revoked.headers.get('retry-after')).toMatch(/^\d+$/);
    // Issued, but its secret is never sent in an error: the id is, so an admin can revoke it.
    const unshown = expectApiError(applied, 503, 'unavailable');
    expect(unshown.details).toEqual({ token_id: expect.stringMatching(/^tok_/) });
    expect(applied.text).not.toMatch(/stk_/);
    const issuedElsewhere = await issueElsewhere('stall');

    // Stalled beyond the bound: no identity is answered from the stale read models.
    await waitUntil(() => gw.running.ctx.projections.liveness.isStale(), 'stale read models');
    for (const token of [kept.user_token, doomed.user_token, issuedElsewhere, gw.adminKey]) {
      const res = await asUser(token);
      expectApiError(res, 503, 'unavailable');
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
    expectApiError(
      await admin('POST', '/v1/studios/tokens/apply', { studio_id: 'stall' }),
      503,
      'unavailable',
    );
    expectApiError(await gw.api('GET', '/v1/services'), 503, 'unavailable');

    // /health answers (200) and says what is wrong; /ready says not now.
    const health = await gw.api('GET', '/health');
    expect(health.status).toBe(200);
    expect(health.json).toMatchObject({
      status: 'degraded',
      read_models: { state: 'stalled', stale: true, last_error: 'Error (ECONNRESET)' },
    });
    const since = Date.parse(health.json.read_models.stalled_since);
    expect(Date.now() - since).toBeGreaterThanOrEqual(STALE_AFTER_MS);
    for (const name of ['studios', 'tokens']) {
      expect(health.json.projections).toContainEqual(
        expect.objectContaining({
          name,
          state: 'stalled',
          stalled_since: health.json.read_models.stalled_since,
        }),
      );
    }
    const notReady = await gw.api('GET', '/ready');
    expect(notReady.status).toBe(503);
    expect(notReady.json).toMatchObject({ status: 'not_ready', read_models: { state: 'stalled' } });

    // Reads succeed again: the runner resubscribes from its checkpoint and catches up on its own.
    reads.failing = false;
    await waitUntil(async () => (await gw.api('GET', '/ready')).status === 200, 'ready again');
    expect((await gw.api('GET', '/health')).json).toMatchObject({
      status: 'ok',
      read_models: { state: 'live', stalled_since: null, stale: false },
    });
    // Live is not "every event applied": another database's open transaction (other suites share the
    // cluster) can hold the newest events back for a moment; the subscription reads them once they show.
    await waitUntil(
      async () => (await asUser(issuedElsewhere)).status === 200,
      'the token from elsewhere accepted',
    );
    expectApiError(await asUser(doomed.user_token), 401, 'unauthenticated');
    expect((await asUser(kept.user_token)).status).toBe(200);
    // The apply refused while stale issued nothing: the two before, the unshown one, the one from elsewhere.
    const listed = await admin('GET', '/v1/studios/tokens/list?studio_id=stall');
    expect(listed.json.items.map((t: { name: string }) => t.name).sort()).toEqual([
      'elsewhere',
      'token',
      'token',
      'unshown',
    ]);
    expect(listed.json.items.find((t: { id: string }) => t.id === unshown.details.token_id)?.name).toBe(
      'unshown',
    );
  });
}

describe('read models fail closed (memory store)', () => failClosedSuite('memory'));

describe.skipIf(database === undefined)(
  database
    ? 'read models fail closed (PostgreSQL)'
    : `read models fail closed (skipped: ${postgresUnavailableReason})`,
  () => failClosedSuite('postgres', database?.url),
);
