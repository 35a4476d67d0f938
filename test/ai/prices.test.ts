import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningGateway, startGateway } from '../../services/gateway/gateway.ts';
import { loadConfig } from '../../shared/config.ts';

const adminKey = 'admin-key-for-prices-tests-0123456789';
let dataDir: string;
let gw: RunningGateway;
let token: string;

// biome-ignore lint/suspicious/noExplicitAny: parsed JSON, checked by the assertions that read it.
type Json = any;

async function request(method: string, path: string, body?: unknown, auth = adminKey) {
  const res = await fetch(`${gw.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${auth}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, json: (await res.json()) as Json };
}

const post = (path: string, body: unknown, auth = adminKey) => request('POST', path, body, auth);
const get = (path: string, auth = adminKey) => request('GET', path, undefined, auth);

async function usageEvents(count: number): Promise<{ type: string; data: Json }[]> {
  for (let i = 0; i < 200; i++) {
    const { json } = await get('/v1/audit/events?stream=usage-acme&limit=1000');
    if (json.items.length >= count) return json.items;
    await sleep(25);
  }
  throw new Error(`fewer than ${count} usage events`);
}

const echo = () =>
  post(
    '/v1/ai/chat/completions',
    { model: 'dev/echo', messages: [{ role: 'user', content: 'one two' }] },
    token,
  );

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'studio-prices-'));
  const config = loadConfig({
    STUDIO_EVENT_STORE: 'memory',
    STUDIO_DATA_DIR: dataDir,
    ADMIN_SECRET_KEY: adminKey,
    STUDIO_MASTER_KEY: 'b'.repeat(64),
    STUDIO_GATEWAY_PORT: '0',
    LOG_LEVEL: 'silent',
  });
  gw = await startGateway({ config, processEnv: {} });
  await post('/v1/studios/create', { name: 'Acme', studio_id: 'acme' });
  token = (await post('/v1/studios/tokens/apply', { studio_id: 'acme' })).json.user_token;
});
afterAll(async () => {
  await gw?.close();
  await rm(dataDir, { recursive: true, force: true });
});

describe('prices', () => {
  it('lists the built-in defaults', async () => {
    const { status, json } = await get('/v1/ai/prices');
    expect(status).toBe(200);
    const byModel = new Map(json.items.map((p: Json) => [p.model, p]));
    expect(byModel.get('dev/echo')).toMatchObject({
      input_per_mtok: 1,
      output_per_mtok: 2,
      source: 'default',
    });
    expect(byModel.get('dev/image')).toMatchObject({ per_image: 0.01 });
    expect(byModel.get('openai/gpt-5')).toMatchObject({ input_per_mtok: 1.25, output_per_mtok: 10 });
  });

  it('shows a user only the prices of the models it may call', async () => {
    const { status, json } = await get('/v1/ai/prices', token);
    expect(status).toBe(200);
    const models = json.items.map((p: Json) => p.model);
    expect(models).toContain('dev/echo');
    // No OPENAI_API_KEY: its models cannot be called.
    expect(models.some((m: string) => m.startsWith('openai/'))).toBe(false);
  });

  it('charges each generation the price in force when it started; remove restores the default', async () => {
    expect((await echo()).status).toBe(200);
    const upsert = await post('/v1/ai/prices/upsert', { model: 'dev/echo', output_per_mtok: 10 });
    expect(upsert.status).toBe(200);
    expect(upsert.json).toMatchObject({ input_per_mtok: 1, output_per_mtok: 10, source: 'override' });
    expect((await echo()).status).toBe(200);

    const removed = await post('/v1/ai/prices/remove', { model: 'dev/echo' });
    expect(removed.json).toMatchObject({ input_per_mtok: 1, output_per_mtok: 2, source: 'default' });
    expect((await echo()).status).toBe(200);

    const events = await usageEvents(3);
    const costs = events.map((e) => e.data.costMicroUsd);
    const cost = (e: Json, outPerMtok: number) => e.data.inputTokens * 1 + e.data.outputTokens * outPerMtok;
    expect(events[0]!.data.outputTokens).toBeGreaterThan(0);
    expect(costs).toEqual([cost(events[0], 2), cost(events[1], 10), cost(events[2], 2)]);

    const usage = await get('/v1/ai/usage?studio_id=acme', token);
    const total = costs.reduce((s: number, c: number) => s + c, 0);
    expect(usage.json.totals.cost_usd).toBeCloseTo(total / 1e6, 9);
    expect(usage.json.items[0]).toMatchObject({ model: 'dev/echo', cost_usd: expect.any(Number) });
  });

  it('refuses a negative price or an unknown model with 400 in the envelope', async () => {
    const negative = await post('/v1/ai/prices/upsert', { model: 'dev/echo', per_image: -1 });
    expect(negative.status).toBe(400);
    expect(negative.json.error).toMatchObject({ code: 'validation_failed' });
    for (const path of ['/v1/ai/prices/upsert', '/v1/ai/prices/remove']) {
      const unknown = await post(path, { model: 'nobody/nothing', input_per_mtok: 1 }, adminKey);
      expect(unknown.status).toBe(400);
    }
    const unknownRemove = await post('/v1/ai/prices/remove', { model: 'nobody/nothing' });
    expect(unknownRemove.json.error).toMatchObject({ code: 'validation_failed', param: 'model' });
  });

  it('is for admins to change', async () => {
    expect((await post('/v1/ai/prices/upsert', { model: 'dev/echo', input_per_mtok: 0 }, token)).status).toBe(
      403,
    );
  });
});
