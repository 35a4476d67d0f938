import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinAiProviders } from '../../../services/ai/providers/index.ts';
import { UpstreamClient } from '../../../services/ai/upstream.ts';
import { waitUntil } from '../../../shared/testing/wait.ts';
import { adminOk, studioWithToken } from '../../support/admin.ts';
import { startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { FAST_UPSTREAM } from '../providers/support.ts';

// The request log: every generation request made with a known token is one record, answered,
// failed (with the upstream's own message) or refused before any upstream call (bad body, unknown
// or forbidden model, budget, rate limit); newest first, filtered, paged, as CSV; a user sees its
// own studio's; the read model is rebuilt equal from the log after a restart.

let gw: TestGateway;
let acme: { token: string; tokenId: string };
let narrow: { token: string; tokenId: string };
let other: { token: string; tokenId: string };

const client = (token: string) => new OpenAI({ baseURL: `${gw.url}/v1/ai`, apiKey: token, maxRetries: 0 });
const chat = (token: string, model: string) =>
  client(token)
    .chat.completions.create({ model, messages: [{ role: 'user', content: 'hello' }] })
    .then(
      () => 200,
      (error: { status?: number }) => error.status ?? 0,
    );
const requests = async (token: string, query = '') => {
  const answer = await gw.api('GET', `/v1/ai/requests${query}`, { token });
  expect(answer.status, answer.text).toBe(200);
  return answer.json as {
    items: Record<string, unknown>[];
    next_cursor: number | null;
    refusals_counted: number;
  };
};

beforeAll(async () => {
  gw = await startTestGateway({
    store: 'sqlite',
    logLevel: 'silent',
    // OpenAI's models point at a port nothing listens on: the upstream's failure is ECONNREFUSED.
    processEnv: { OPENAI_API_KEY: 'sk-test-0123456789abcdef', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' },
    ai: {
      upstream: new UpstreamClient({ ...FAST_UPSTREAM, retries: 0, allowPrivateUpstreams: true }),
      providers: builtinAiProviders,
    },
  });
  acme = await studioWithToken(gw, 'acme');
  narrow = await adminOk(gw, 'POST', '/v1/studios/tokens/apply', {
    studio_id: 'acme',
    name: 'narrow',
    models: ['dev/*'],
  }).then((issued) => ({ token: issued.json.user_token, tokenId: issued.json.token.id }));
  other = await studioWithToken(gw, 'globex');
  await adminOk(gw, 'POST', '/v1/studios/limits/set', {
    studio_id: 'acme',
    token_id: narrow.tokenId,
    rpm: 3,
  });
}, 60_000);
afterAll(async () => {
  await gw?.close();
});

describe('the request log', () => {
  it('records answered, failed and refused requests, each with what an operator needs', async () => {
    expect(await chat(acme.token, 'dev/echo')).toBe(200);
    expect(await chat(acme.token, 'nope/missing')).toBe(404);
    const bad = await gw.api('POST', '/v1/ai/chat/completions', {
      token: acme.token,
      body: { model: 'dev/echo', messages: 'not a list' },
    });
    expect(bad.status).toBe(400);
    expect(await chat(narrow.token, 'openai/gpt-4o-mini')).toBe(403);
    expect(await chat(acme.token, 'openai/gpt-4o-mini')).toBe(502);
    await chat(other.token, 'dev/echo');

    await waitUntil(
      async () => (await requests(acme.token)).items.length >= 5,
      "acme's five requests are listed",
    );
    const log = await requests(acme.token);
    expect(log.items.map((row) => [row.outcome, row.status, row.error_code, row.model])).toEqual([
      ['failed', 502, 'upstream_error', 'openai/gpt-4o-mini'],
      ['refused', 403, 'model_not_allowed', 'openai/gpt-4o-mini'],
      ['refused', 400, 'validation_failed', 'dev/echo'],
      ['refused', 404, 'model_not_found', 'nope/missing'],
      ['answered', 200, null, 'dev/echo'],
    ]);
    const [failed, forbidden, , , answered] = log.items;
    expect(String(failed!.error_message)).toMatch(/ECONNREFUSED|refused|could not reach/i);
    expect(failed).toMatchObject({
      token_id: acme.tokenId,
      format: 'chat/completions',
      target: 'openai/gpt-4o-mini',
    });
    expect(forbidden).toMatchObject({
      token_id: narrow.tokenId,
      studio_id: 'acme',
      target: null,
      cost_usd: 0,
    });
    expect(answered).toMatchObject({
      format: 'chat/completions',
      target: 'dev/echo',
      input_tokens: expect.any(Number),
      output_tokens: expect.any(Number),
      latency_ms: expect.any(Number),
    });
    expect(Number(answered!.output_tokens)).toBeGreaterThan(0);
    // Another studio's request is not in acme's log, nor reachable by its id.
    expect(log.items.some((row) => row.studio_id !== 'acme')).toBe(false);
    const theirs = (await requests(other.token)).items[0]!;
    expect((await gw.api('GET', `/v1/ai/requests/${theirs.id}`, { token: acme.token })).status).toBe(404);
    expect((await gw.api('GET', `/v1/ai/requests/${answered!.id}`, { token: acme.token })).json).toEqual({
      ...answered,
      payload: null,
    });
  });

  it('rate-limit refusals are on record, and Usage counts refusals as failed requests', async () => {
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push(await chat(narrow.token, 'dev/echo'));
    const refusals = statuses.filter((status) => status === 429).length;
    expect(refusals).toBeGreaterThan(0);
    const query = `?code=rate_limited&token_id=${narrow.tokenId}`;
    // Every refusal, not only the first: the tests below read the log as it stands.
    await waitUntil(
      async () => (await requests(acme.token, query)).items.length === refusals,
      'every 429 is listed',
    );
    const limited = await requests(acme.token, query);
    expect(limited.items[0]).toMatchObject({ status: 429, outcome: 'refused', model: 'dev/echo' });

    // Usage and the request log are two read models that catch up on their own: read the log, then
    // wait for usage to count at least as many failures (the refusals and the earlier upstream failure).
    const refusedSoFar = (await requests(acme.token, '?status=refused&limit=500')).items.length;
    const failures = async () =>
      (await gw.api('GET', '/v1/ai/usage?studio_id=acme', { token: gw.adminKey })).json.totals.failures;
    await waitUntil(
      async () => (await failures()) >= refusedSoFar + 1,
      'usage counts every refusal as a failure',
    );
    expect(await failures()).toBeGreaterThanOrEqual(refusedSoFar + 1);
  });

  it('filters by outcome, status, model and time; pages with a cursor; answers CSV', async () => {
    const refused = await requests(acme.token, '?status=refused');
    expect(refused.items.length).toBeGreaterThan(0);
    expect(refused.items.every((row) => row.outcome === 'refused')).toBe(true);
    expect((await requests(acme.token, '?status=404')).items.map((row) => row.model)).toEqual([
      'nope/missing',
    ]);
    expect((await requests(acme.token, '?model=nope/missing')).items).toHaveLength(1);
    expect((await requests(acme.token, '?from=2999-01-01T00:00:00Z')).items).toEqual([]);

    const all = await requests(acme.token, '?limit=500');
    const first = await requests(acme.token, '?limit=2');
    expect(first.items).toEqual(all.items.slice(0, 2));
    const second = await requests(acme.token, `?limit=2&cursor=${first.next_cursor}`);
    expect(second.items).toEqual(all.items.slice(2, 4));

    const csv = await gw.api('GET', '/v1/ai/requests?format=csv&status=refused', { token: acme.token });
    expect(csv.headers.get('content-type')).toContain('text/csv');
    const [header, ...lines] = csv.text.trim().split('\r\n');
    expect(header).toContain('at,id,studio_id,token_id,format,model,target,outcome,status,error_code');
    expect(lines).toHaveLength(refused.items.length);

    const wrong = await gw.api('GET', '/v1/ai/requests?status=sometimes', { token: acme.token });
    expect(wrong.status).toBe(400);
    const otherStudio = await gw.api('GET', '/v1/ai/requests?studio_id=globex', { token: acme.token });
    expect(otherStudio.status).toBe(403);
  });

  it('sums a window up: outcomes, error rate, an hourly series, latency per model, the tokens that spent most', async () => {
    const all = (await requests(acme.token, '?limit=500')).items;
    const summary = await gw.api('GET', '/v1/ai/requests/summary', { token: acme.token });
    expect(summary.status, summary.text).toBe(200);
    const s = summary.json;
    expect(s).toMatchObject({ studio_id: 'acme', requests: all.length, complete: true });
    expect(s.answered + s.failed + s.refused).toBe(all.length);
    expect(s.refused).toBe(all.filter((row) => row.outcome === 'refused').length);
    expect(s.error_rate).toBeCloseTo((s.failed + s.refused) / all.length);
    expect(s.series.reduce((sum: number, hour: { requests: number }) => sum + hour.requests, 0)).toBe(
      all.length,
    );
    const echo = s.models.find((m: { model: string }) => m.model === 'dev/echo');
    expect(echo.p50_ms).toEqual(expect.any(Number));
    expect(echo.p95_ms).toBeGreaterThanOrEqual(echo.p50_ms);
    expect(s.top_tokens.map((t: { token_id: string }) => t.token_id).sort()).toEqual(
      [acme.tokenId, narrow.tokenId].sort(),
    );
    const empty = await gw.api(
      'GET',
      '/v1/ai/requests/summary?from=2020-01-01T00:00:00Z&to=2020-01-02T00:00:00Z',
      {
        token: acme.token,
      },
    );
    expect(empty.json).toMatchObject({ requests: 0, error_rate: 0, series: [], models: [] });
  });

  it('says whether the response cache answered, missed, or was not asked', async () => {
    await adminOk(gw, 'POST', '/v1/studios/settings', { studio_id: 'globex', cache_ttl_s: 60 });
    const body = { model: 'dev/echo', messages: [{ role: 'user' as const, content: 'cache me' }] };
    await client(other.token).chat.completions.create(body);
    await client(other.token).chat.completions.create(body);
    await waitUntil(async () => (await requests(other.token)).items.length >= 3, 'both are listed');
    const [second, first, before] = (await requests(other.token)).items;
    expect([second!.cache, first!.cache, before!.cache]).toEqual(['hit', 'miss', null]);
    expect(second!.cost_usd).toBe(0);
  });

  it('is rebuilt equal from the log when the gateway starts again', async () => {
    const before = await requests(gw.adminKey, '?limit=500');
    await gw.restart();
    const after = await requests(gw.adminKey, '?limit=500');
    expect(after).toEqual(before);
  });
});
