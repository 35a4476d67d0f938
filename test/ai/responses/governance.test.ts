import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { builtinAiProviders } from '../../../services/ai/providers/index.ts';
import { UpstreamClient } from '../../../services/ai/upstream.ts';
import { recordedSpend, usageLog } from '../../governance/support.ts';
import { adminOk, studioWithToken } from '../../support/admin.ts';
import { expectApiError, startTestGateway, type TestGateway } from '../../support/gateway.ts';
import {
  faults,
  openAiMock,
  openAiResponsesStream,
  openAiResponsesWire,
  openAiStream,
  openAiWire,
  type WireMock,
} from '../../support/mock-ai-upstreams.ts';

// The Responses API meets the gates a chat completion meets, on both of its paths: `compat/m`
// (OpenAI-compatible, answered through chat) and `openai/gpt-4.1-mini` (native), one mock behind both.

const TRANSLATED = 'compat/m';
const NATIVE = 'openai/gpt-4.1-mini';
let mock: WireMock;
let gw: TestGateway;
let studios = 0;

beforeAll(async () => {
  mock = await openAiMock();
  gw = await startTestGateway({
    store: 'memory',
    logLevel: 'silent',
    processEnv: {
      OPENAI_COMPATIBLE_BASE_URL: `${mock.url}/v1`,
      OPENAI_COMPATIBLE_MODELS: 'm',
      OPENAI_BASE_URL: `${mock.url}/v1`,
      OPENAI_API_KEY: 'sk-governance-0123456789abcdef',
    },
    ai: {
      upstream: new UpstreamClient({ timeoutMs: 10_000, idleTimeoutMs: 10_000, retries: 0, retryBaseMs: 1 }),
      providers: builtinAiProviders,
    },
  });
  // Both priced alike so budgets bite the same: 10 and 20 micro-dollars a token.
  for (const model of [TRANSLATED, NATIVE])
    await adminOk(gw, 'POST', '/v1/ai/prices/upsert', { model, input_per_mtok: 10, output_per_mtok: 20 });
});
beforeEach(() => mock.reset());
afterAll(() => Promise.all([gw?.close(), mock?.close()]));

const respond = (token: string, body: Record<string, unknown>) =>
  gw.api('POST', '/v1/ai/responses', { token, body: { input: 'hi', ...body } });

async function studio(budget?: number) {
  const id = `g${++studios}`;
  const { token } = await studioWithToken(gw, id);
  if (budget !== undefined)
    await adminOk(gw, 'POST', '/v1/studios/budgets/set', {
      studio_id: id,
      amount_usd: budget,
      window: 'day',
      mode: 'hard',
    });
  return { id, token };
}

describe.each([
  ['through chat', TRANSLATED, 'max_tokens'],
  ['natively', NATIVE, 'max_output_tokens'],
])('responses %s', (_how, model, capField) => {
  it('usage is recorded as a chat generation, priced, with the tokens the response reports', async () => {
    const { id, token } = await studio();
    const res = await respond(token, { model });
    expect(res.status, res.text).toBe(200);
    const events = await gw.running.ctx.events.readStream(`usage-${id}`);
    expect(events.map((e) => e.type)).toEqual(['GenerationCompleted']);
    const usage = res.json.usage;
    expect(events[0]!.data).toMatchObject({
      model,
      modality: 'chat',
      inputTokens: usage.input_tokens,
      outputTokens: usage.output_tokens,
      costMicroUsd: usage.input_tokens * 10 + usage.output_tokens * 20,
      status: 200,
    });
  });

  it('a hard budget refuses with 402 before any upstream call', async () => {
    const { token } = await studio(0.000_1);
    const res = await respond(token, { model, input: 'x'.repeat(200) });
    expectApiError(res, 402, 'budget_exceeded');
    expect(mock.requests).toHaveLength(0);
  });

  it(`a hard budget lowers the cap sent upstream (${capField}) and settles to the actual cost`, async () => {
    // The input bound is the bytes of the items' JSON (~60 → 600 micro): ~20 output tokens are left.
    const { id, token } = await studio(0.001);
    const res = await respond(token, { model, max_output_tokens: 500 });
    expect(res.status, res.text).toBe(200);
    const sent = mock.body()[capField];
    expect(sent).toBeGreaterThan(0);
    expect(sent).toBeLessThan(25);
    const { input_tokens, output_tokens } = res.json.usage;
    expect(await recordedSpend(gw, id)).toBe(input_tokens * 10 + output_tokens * 20);
  });

  it('a stream whose upstream ignores the lowered cap is cut off with an error event', async () => {
    const { id, token } = await studio(0.001);
    const words = Array.from({ length: 200 }, (_, i) => `word${i} `);
    mock.reply(
      model === NATIVE
        ? openAiResponsesStream(openAiResponsesWire.events(words))
        : openAiStream(words.map((content) => openAiWire.chunk({ content }))),
    );
    const res = await respond(token, { model, stream: true });
    expect(res.status).toBe(200);
    const frames = res.text.split('\n\n').filter(Boolean);
    expect(frames.at(-1)).toMatch(/^event: error\n/);
    expect(frames.at(-1)).toContain('"code":"budget_exceeded"');
    expect(res.text).not.toContain('response.completed');
    expect(frames.length).toBeLessThan(60);
    expect(await usageLog(gw, id)).toEqual(['GenerationFailed (reserved)']);
    expect(await recordedSpend(gw, id)).toBeLessThanOrEqual(1000);
    // A response that did not complete is not stored.
    const stored = await gw.running.ctx.events.readAll({ types: ['ResponseCreated'] });
    expect(stored.filter((e) => (e.data as { studioId: string }).studioId === id)).toEqual([]);
  });

  it('a generation that fails upstream releases its reservation and is recorded failed', async () => {
    const { id, token } = await studio(1);
    mock.reply(faults.status(500, openAiWire.error('boom', 'server_error')));
    expectApiError(await respond(token, { model }), 502, 'upstream_error');
    expect(await usageLog(gw, id)).toEqual(['GenerationFailed (reserved)']);
    const [budget] = (await adminOk(gw, 'GET', `/v1/studios/budgets/list?studio_id=${id}`)).json.items;
    expect(budget).toMatchObject({ spent_usd: 0, reserved_usd: 0 });
  });

  it('rate limits count it as a generation: over rpm it is a 429 that never goes upstream', async () => {
    const { id, token } = await studio();
    await adminOk(gw, 'POST', '/v1/studios/limits/set', { studio_id: id, rpm: 1 });
    const first = await respond(token, { model });
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-remaining-requests')).toBe('0');
    mock.reset();
    const refused = await respond(token, { model, stream: true });
    expectApiError(refused, 429, 'rate_limited');
    expect(refused.headers.get('retry-after')).toBeTruthy();
    expect(mock.requests).toHaveLength(0);
  });
});
