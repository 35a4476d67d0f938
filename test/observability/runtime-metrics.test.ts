import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePrometheus, sumOf } from '../support/prometheus.ts';
import { startTestStack, type TestStack } from '../support/runtime.ts';

const METRICS_TOKEN = 'metrics-token-0123456789';
const RUNTIME_TOKEN = 'runtime-token-0123456789';
let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack({
    gateway: { settings: { STUDIO_METRICS_TOKEN: METRICS_TOKEN } },
    config: { STUDIO_METRICS_TOKEN: METRICS_TOKEN, STUDIO_RUNTIME_TOKEN: RUNTIME_TOKEN },
  });
});
afterAll(async () => {
  await stack?.close();
});

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

async function scrapeRuntime() {
  const res = await stack.call('GET', '/metrics', undefined, bearer(METRICS_TOKEN));
  expect(res.status).toBe(200);
  return parsePrometheus(res.text);
}

describe('GET /metrics with STUDIO_METRICS_TOKEN', () => {
  it('the gateway takes the metrics token as well as the admin key', async () => {
    const res = await fetch(`${stack.gw.url}/metrics`, { headers: bearer(METRICS_TOKEN) });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('studio_http_requests_total');
  });

  it('the runtime: the metrics token opens it; none is 401; the runtime token is 403', async () => {
    const none = await stack.call('GET', '/metrics');
    expect(none.status).toBe(401);
    expect(none.json.error.code).toBe('unauthenticated');
    const runtimeToken = await stack.call('GET', '/metrics', undefined, bearer(RUNTIME_TOKEN));
    expect(runtimeToken.status).toBe(403);
    expect(runtimeToken.json.error.code).toBe('forbidden');
    expect(sumOf(await scrapeRuntime(), 'studio_process_cpu_seconds_total')).toBeGreaterThan(0);
  });

  it('the runtime counts its routes by pattern and the session streams open', async () => {
    const created = await stack.call(
      'POST',
      '/api/sdk/sessions',
      { title: 'metrics' },
      bearer(RUNTIME_TOKEN),
    );
    expect(created.status).toBe(201);
    const id: string = created.json.id;
    await stack.call('GET', `/api/sdk/sessions/${id}`, undefined, bearer(RUNTIME_TOKEN));
    const controller = new AbortController();
    const events = await fetch(`${stack.runtime.url}/api/sdk/sessions/${id}/events`, {
      headers: bearer(RUNTIME_TOKEN),
      signal: controller.signal,
    });
    expect(events.status).toBe(200);
    const samples = await scrapeRuntime();
    expect(sumOf(samples, 'studio_sse_open_streams', { stream: '/api/sdk/sessions/:id/events' })).toBe(1);
    expect(
      sumOf(samples, 'studio_http_requests_total', { route: '/api/sdk/sessions/:id', status: '200' }),
    ).toBe(1);
    expect(samples.some((s) => Object.values(s.labels).some((value) => value.includes(id)))).toBe(false);
    expect(samples.some((s) => s.name === 'studio_projection_lag_positions')).toBe(true);
    controller.abort();
  });

  it('the gateway and the runtime keep registries of their own', async () => {
    const gateway = parsePrometheus(
      await (await fetch(`${stack.gw.url}/metrics`, { headers: bearer(METRICS_TOKEN) })).text(),
    );
    expect(gateway.some((s) => s.labels.route?.startsWith('/api/sdk/'))).toBe(false);
  });
});
