import { describe, expect, it } from 'vitest';
import { failWith, useRoutedGateway } from '../ai/routes/support.ts';
import { expectApiError } from '../support/gateway.ts';
import { parsePrometheus, type Sample, sumOf } from '../support/prometheus.ts';

const r = useRoutedGateway();

async function scrape(): Promise<Sample[]> {
  const res = await fetch(`${r.pg.gw.url}/metrics`, { headers: { authorization: `Bearer ${r.pg.admin}` } });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parsePrometheus(await res.text());
}

async function studioToken(id: string): Promise<string> {
  expect((await r.admin('POST', '/v1/studios/create', { name: id, studio_id: id })).status).toBe(201);
  return (await r.admin('POST', '/v1/studios/tokens/apply', { studio_id: id })).json.user_token;
}

describe('GET /metrics on the gateway', () => {
  it('is for the admin key: no credential is 401, a user token 403, both in the error envelope', async () => {
    const none = await r.pg.gw.api('GET', '/metrics');
    expectApiError(none, 401, 'unauthenticated');
    expectApiError(await r.pg.gw.api('GET', '/metrics', { token: 'not-a-token' }), 401, 'unauthenticated');
    expectApiError(await r.pg.gw.api('GET', '/metrics', { token: r.pg.token }), 403, 'forbidden');
    const samples = await scrape();
    expect(sumOf(samples, 'studio_process_cpu_seconds_total')).toBeGreaterThan(0);
  });

  it('counts requests by route pattern and status code, never by raw URL', async () => {
    await r.pg.gw.api('GET', '/v1/ai/responses/resp_does_not_exist', { token: r.pg.token });
    await r.pg.gw.api('GET', '/v1/nothing/here?secret=1', { token: r.pg.token });
    const samples = await scrape();
    const routes = samples.filter((s) => s.name === 'studio_http_requests_total').map((s) => s.labels.route);
    expect(routes).toContain('/v1/ai/responses/:id');
    expect(routes.some((route) => route?.includes('resp_does_not_exist') || route?.includes('secret'))).toBe(
      false,
    );
    expect(
      sumOf(samples, 'studio_http_requests_total', { route: '/v1/:service/*action', status: '404' }),
    ).toBe(1);
    expect(
      sumOf(samples, 'studio_http_request_duration_seconds_count', {
        route: '/v1/ai/responses/:id',
        method: 'GET',
      }),
    ).toBe(1);
  });

  it('a route that falls back: the fallback, the cooldown, the upstream error, the generation and its tokens', async () => {
    const id = 'metrics-fallback';
    await r.upsert({
      id,
      strategy: 'fallback',
      targets: [{ model: 'compat/a' }, { model: 'compat/b' }],
      cooldown: { failures: 1, window_s: 60, cooldown_s: 60 },
    });
    r.script('a', failWith(503), failWith(503), failWith(503));
    const { response, events } = await r.pg.stream('/v1/ai/chat/completions', {
      model: id,
      stream: true,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(response.status).toBe(200);
    while ((await events.next()) !== undefined) {
      // read to the end
    }
    const samples = await scrape();
    expect(sumOf(samples, 'studio_ai_route_fallbacks_total', { route: id, target: 'compat/a' })).toBe(1);
    expect(sumOf(samples, 'studio_ai_route_cooldowns_total', { route: id, target: 'compat/a' })).toBe(1);
    expect(
      sumOf(samples, 'studio_ai_upstream_errors_total', { model: 'compat/a', reason: 'status_5xx' }),
    ).toBe(1);
    const generation = { studio: 'p', model: 'compat/b', modality: 'chat', outcome: 'completed' };
    expect(sumOf(samples, 'studio_ai_generations_total', generation)).toBe(1);
    expect(
      sumOf(samples, 'studio_ai_tokens_total', { studio: 'p', model: 'compat/b', direction: 'output' }),
    ).toBeGreaterThan(0);
    expect(sumOf(samples, 'studio_ai_stream_first_byte_seconds_count', { model: 'compat/b' })).toBe(1);
    expect(
      sumOf(samples, 'studio_http_requests_total', { route: '/v1/ai/chat/completions', status: '200' }),
    ).toBe(1);
    // The stream has ended: no SSE stream is left open.
    expect(sumOf(samples, 'studio_sse_open_streams', { stream: '/v1/ai/chat/completions' })).toBe(0);
    // Its usage went to the log in a group commit, timed.
    expect(sumOf(samples, 'studio_group_commit_size_count', { commit: 'usage' })).toBeGreaterThan(0);
    expect(sumOf(samples, 'studio_event_store_append_duration_seconds_count')).toBeGreaterThan(0);
  });

  it('an SSE stream is counted as open while it runs', async () => {
    const controller = new AbortController();
    r.script('a', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(
        `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 0, model: 'a', choices: [{ index: 0, delta: { content: 'x' }, finish_reason: null }] })}\n\n`,
      );
      controller.signal.addEventListener('abort', () => res.destroy());
    });
    const { events } = await r.pg.stream(
      '/v1/ai/chat/completions',
      { model: 'compat/a', stream: true, messages: [{ role: 'user', content: 'hi' }] },
      controller.signal,
    );
    await events.next();
    expect(sumOf(await scrape(), 'studio_sse_open_streams', { stream: '/v1/ai/chat/completions' })).toBe(1);
    controller.abort();
  });

  it('budget and rate-limit refusals, and response cache lookups', async () => {
    const budgeted = await studioToken('metrics-budget');
    await r.admin('POST', '/v1/studios/budgets/set', {
      studio_id: 'metrics-budget',
      amount_usd: 0.00001,
      window: 'day',
      mode: 'hard',
    });
    const text = { model: 'dev/echo', prompt: 'hello' };
    // dev/echo reserves a micro-dollar a byte of its input: more than this budget holds.
    const long = { model: 'dev/echo', prompt: 'w'.repeat(100) };
    const refused = await r.pg.gw.api('POST', '/v1/ai/text', { token: budgeted, body: long });
    expectApiError(refused, 402, 'budget_exceeded');

    const limited = await studioToken('metrics-limit');
    await r.admin('POST', '/v1/studios/limits/set', { studio_id: 'metrics-limit', rpm: 1 });
    expect((await r.pg.gw.api('POST', '/v1/ai/text', { token: limited, body: text })).status).toBe(200);
    expectApiError(
      await r.pg.gw.api('POST', '/v1/ai/text', { token: limited, body: text }),
      429,
      'rate_limited',
    );

    const samples = await scrape();
    expect(sumOf(samples, 'studio_ai_refusals_total', { studio: 'metrics-budget', reason: 'budget' })).toBe(
      1,
    );
    expect(
      sumOf(samples, 'studio_ai_refusals_total', { studio: 'metrics-limit', reason: 'rate_limit' }),
    ).toBe(1);
    expect(sumOf(samples, 'studio_ai_cache_lookups_total')).toBeGreaterThan(0);
  });

  it('reports each read model’s lag behind the log', async () => {
    const samples = await scrape();
    const lags = samples.filter((s) => s.name === 'studio_projection_lag_positions');
    expect(lags.map((s) => s.labels.projection)).toEqual(expect.arrayContaining(['studios', 'tokens']));
    for (const lag of lags) expect(lag.value).toBeGreaterThanOrEqual(0);
  });
});
