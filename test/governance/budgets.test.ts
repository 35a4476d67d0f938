import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { budgetsProjection } from '../../services/ai/budgets/read-model.ts';
import { waitUntil } from '../../shared/testing/wait.ts';
import { adminOk, studioWithToken } from '../support/admin.ts';
import { expectApiError, type TestGateway } from '../support/gateway.ts';
import { gate, openAiMock, openAiStream, openAiWire, type WireMock } from '../support/mock-ai-upstreams.ts';
import { governedGateway, recordedSpend, usageLog } from './support.ts';

let mock: WireMock;
let gw: TestGateway;
let studioCount = 0;

beforeAll(async () => {
  mock = await openAiMock();
  gw = await governedGateway({ store: 'memory', upstreamUrl: mock.url });
  // compat/m is free by default: price it so budgets bite (10 and 20 micro-dollars a token).
  await adminOk(gw, 'POST', '/v1/ai/prices/upsert', {
    model: 'compat/m',
    input_per_mtok: 10,
    output_per_mtok: 20,
  });
});
beforeEach(() => mock.reset());
afterAll(async () => {
  await gw?.close();
  await mock?.close();
});

/** A new studio with a token, and a budget set on it. */
async function budgeted(budget: {
  amount_usd: number;
  mode?: 'hard' | 'soft';
  window?: string;
  token?: boolean;
}) {
  const id = `b${++studioCount}`;
  const { token, tokenId } = await studioWithToken(gw, id);
  await adminOk(gw, 'POST', '/v1/studios/budgets/set', {
    studio_id: id,
    ...(budget.token ? { token_id: tokenId } : {}),
    amount_usd: budget.amount_usd,
    window: budget.window ?? 'day',
    mode: budget.mode ?? 'hard',
  });
  return { id, token, tokenId };
}

const listBudgets = async (studioId: string) =>
  (await adminOk(gw, 'GET', `/v1/studios/budgets/list?studio_id=${studioId}`)).json.items;

const chat = (token: string, body: Record<string, unknown>) =>
  gw.api('POST', '/v1/ai/chat/completions', {
    token,
    body: { model: 'compat/m', messages: [{ role: 'user', content: 'hi' }], ...body },
  });

describe('budgets: set, list, remove', () => {
  it('sets a studio budget and a token budget, lists where they stand, removes them', async () => {
    const { id, tokenId } = await budgeted({ amount_usd: 5, window: 'month' });
    const set = await adminOk(gw, 'POST', '/v1/studios/budgets/set', {
      studio_id: id,
      token_id: tokenId,
      amount_usd: 1.5,
      window: 'total',
      mode: 'soft',
    });
    expect(set.json).toMatchObject({ studio_id: id, token_id: tokenId, amount_usd: 1.5, remaining_usd: 1.5 });
    const items = await listBudgets(id);
    expect(items).toEqual([
      expect.objectContaining({
        studio_id: id,
        token_id: null,
        amount_usd: 5,
        window: 'month',
        mode: 'hard',
        spent_usd: 0,
        reserved_usd: 0,
        remaining_usd: 5,
      }),
      expect.objectContaining({ token_id: tokenId, window: 'total', mode: 'soft', resets_at: null }),
    ]);
    const now = new Date();
    expect(items[0].resets_at).toBe(
      new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString(),
    );

    await adminOk(gw, 'POST', '/v1/studios/budgets/remove', { studio_id: id, token_id: tokenId });
    expect((await listBudgets(id)).map((b: { token_id: string | null }) => b.token_id)).toEqual([null]);
    expectApiError(
      await gw.api('POST', '/v1/studios/budgets/remove', {
        token: gw.adminKey,
        body: { studio_id: id, token_id: tokenId },
      }),
      404,
      'not_found',
    );
  });

  it('refuses bad input with the parameter named, and unknown studios and tokens', async () => {
    const { id } = await budgeted({ amount_usd: 1 });
    const bad = expectApiError(
      await gw.api('POST', '/v1/studios/budgets/set', {
        token: gw.adminKey,
        body: {
          studio_id: id,
          amount_usd: -1,
          window: 'day',
          mode: 'hard',
        },
      }),
      400,
      'validation_failed',
    );
    expect(bad.message).toMatch(/amount_usd/);
    expectApiError(
      await gw.api('POST', '/v1/studios/budgets/set', {
        token: gw.adminKey,
        body: {
          studio_id: id,
          amount_usd: 1,
          window: 'week',
          mode: 'hard',
        },
      }),
      400,
      'validation_failed',
    );
    expectApiError(
      await gw.api('POST', '/v1/studios/budgets/set', {
        token: gw.adminKey,
        body: {
          studio_id: 'nope',
          amount_usd: 1,
          window: 'day',
          mode: 'hard',
        },
      }),
      404,
      'not_found',
    );
    expectApiError(
      await gw.api('POST', '/v1/studios/budgets/set', {
        token: gw.adminKey,
        body: {
          studio_id: id,
          token_id: 'tok_other',
          amount_usd: 1,
          window: 'day',
          mode: 'hard',
        },
      }),
      404,
      'not_found',
    );
  });
});

describe('hard budgets', () => {
  it('refuse with 402 insufficient_quota / budget_exceeded before any upstream call', async () => {
    const { token } = await budgeted({ amount_usd: 0.000_1 }); // 100 micro-dollars: not even the input
    const res = await chat(token, { messages: [{ role: 'user', content: 'x'.repeat(200) }] });
    const error = expectApiError(res, 402, 'budget_exceeded');
    expect(error.type).toBe('insufficient_quota');
    expect(mock.requests).toHaveLength(0);
  });

  it('lower the output cap sent upstream to what is left, and settle to the actual cost', async () => {
    // The input bound is the bytes of the messages' JSON (~40 → 400 micro); 600 micro leaves 10 output tokens.
    const { id, token } = await budgeted({ amount_usd: 0.000_6 });
    const res = await chat(token, { max_tokens: 500 });
    expect(res.status).toBe(200);
    const sent = mock.body();
    expect(sent.max_tokens).toBeGreaterThan(0);
    expect(sent.max_tokens).toBeLessThan(20);
    // The mock reports 1 prompt and 2 completion tokens: 10 + 40 micro-dollars.
    expect(await recordedSpend(gw, id)).toBe(50);
    const [budget] = await listBudgets(id);
    expect(budget).toMatchObject({ spent_usd: 0.00005, reserved_usd: 0, remaining_usd: 0.00055 });
  });

  it('leave a request alone when the budget affords all it asks', async () => {
    const { token } = await budgeted({ amount_usd: 1 });
    expect((await chat(token, { max_tokens: 50 })).status).toBe(200);
    expect(mock.body().max_tokens).toBe(50);
    expect((await chat(token, {})).status).toBe(200);
    // compat/m's output limit is not known: under a budget, the assumed limit goes as the cap.
    expect(mock.body().max_tokens).toBe(4096);
  });

  it("end dev/echo's answer with finish_reason length when the lowered cap is reached", async () => {
    const { token } = await budgeted({ amount_usd: 0.000_08 });
    const res = await gw.api('POST', '/v1/ai/chat/completions', {
      token,
      body: { model: 'dev/echo', messages: [{ role: 'user', content: 'one two three four five six seven' }] },
    });
    expect(res.status).toBe(200);
    expect(res.json.choices[0].finish_reason).toBe('length');
    expect(res.json.usage.completion_tokens).toBeLessThan(8);
  });

  it('cut a stream off with a final error event when its upstream goes past the lowered cap', async () => {
    const { id, token } = await budgeted({ amount_usd: 0.000_6 });
    const words = Array.from({ length: 200 }, (_, i) => openAiWire.chunk({ content: `word${i} ` }));
    mock.reply(openAiStream(words)); // ignores max_tokens
    const res = await chat(token, { stream: true });
    expect(res.status).toBe(200);
    const frames = res.text.split('\n\n').filter(Boolean);
    expect(frames.at(-1)).toContain('"code":"budget_exceeded"');
    expect(res.text).not.toContain('[DONE]');
    expect(frames.length).toBeLessThan(50);
    expect(await usageLog(gw, id)).toEqual(['GenerationFailed (reserved)']);
    expect(await recordedSpend(gw, id)).toBeLessThanOrEqual(600);
  });

  it("apply a token's budget to that token only, and the studio's to all of them", async () => {
    const { id, token } = await budgeted({ amount_usd: 0.000_1, token: true });
    const other = (await adminOk(gw, 'POST', '/v1/studios/tokens/apply', { studio_id: id })).json.user_token;
    expectApiError(
      await chat(token, { messages: [{ role: 'user', content: 'x'.repeat(200) }] }),
      402,
      'budget_exceeded',
    );
    expect((await chat(other, { messages: [{ role: 'user', content: 'x'.repeat(200) }] })).status).toBe(200);
  });

  it("count a running generation's reservation, held in the process: the generation's event records it", async () => {
    const { id, token } = await budgeted({ amount_usd: 1 });
    const held = gate();
    mock.reply(
      openAiStream([openAiWire.chunk({ content: 'first ' }), openAiWire.chunk({ content: 'last' })], {
        after: 0,
        wait: held.wait,
      }),
    );
    const streaming = chat(token, { stream: true, max_tokens: 10_000 });
    await waitUntil(() => mock.requests.length === 1, 'the stream reached its upstream', 5_000);
    const usage = () => gw.running.ctx.events.readStream(`usage-${id}`);
    expect(await usage()).toEqual([]);
    // 10,000 output tokens at 20 micro-dollars and the input's upper bound, held for the stream
    const [during] = await listBudgets(id);
    expect(during.reserved_usd).toBeGreaterThanOrEqual(0.2);
    expect(during.remaining_usd).toBeCloseTo(1 - during.reserved_usd, 9);

    held.open();
    expect((await streaming).status).toBe(200);
    const [completed, ...rest] = await usage();
    expect(rest).toEqual([]);
    expect(completed).toMatchObject({ type: 'GenerationCompleted' });
    expect((completed!.data as { reservedMicroUsd: number }).reservedMicroUsd / 1e6).toBeCloseTo(
      during.reserved_usd,
      9,
    );
    const [after] = await listBudgets(id);
    expect(after.reserved_usd).toBe(0);
  });

  it('release the reservation of a generation that fails upstream', async () => {
    const { id, token } = await budgeted({ amount_usd: 1 });
    mock.reply((_req, res: ServerResponse) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify(openAiWire.error('boom', 'server_error')));
    });
    expect((await chat(token, {})).status).toBe(502);
    const [budget] = await listBudgets(id);
    expect(budget).toMatchObject({ spent_usd: 0, reserved_usd: 0, remaining_usd: 1 });
  });
});

describe('hard budgets on video jobs', () => {
  it('reserve when the job is queued and settle when it ends; refuse one the budget cannot pay', async () => {
    // dev/video costs 0.05 a second; a job without `seconds` is 4 s: 0.20.
    const poor = await budgeted({ amount_usd: 0.1 });
    const refused = await gw.api('POST', '/v1/ai/video', {
      token: poor.token,
      body: { model: 'dev/video', prompt: 'waves' },
    });
    expectApiError(refused, 402, 'budget_exceeded');

    const { id, token } = await budgeted({ amount_usd: 1 });
    const queued = await gw.api('POST', '/v1/ai/video', {
      token,
      body: { model: 'dev/video', prompt: 'waves' },
    });
    expect(queued.status).toBe(202);
    // A job outlives its process: its reservation is in the log before the job is queued.
    expect((await gw.running.ctx.events.readStream(`usage-${id}`))[0]?.type).toBe('BudgetReserved');
    for (let i = 0; i < 200; i++) {
      const job = await gw.api('GET', `/v1/ai/jobs/get?id=${queued.json.job.id}`, { token });
      if (job.json.job.status === 'completed') break;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    let budget = (await listBudgets(id))[0];
    for (let i = 0; i < 200 && budget.spent_usd === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      budget = (await listBudgets(id))[0];
    }
    expect(budget).toMatchObject({ spent_usd: 0.2, reserved_usd: 0, remaining_usd: 0.8 });
    const types = (await gw.running.ctx.events.readStream(`usage-${id}`)).map((e) => e.type);
    expect(types).toEqual(['BudgetReserved', 'GenerationCompleted']);
  });
});

describe('soft budgets', () => {
  it('let generations through and record BudgetExceeded once per window', async () => {
    const { id, token } = await budgeted({ amount_usd: 0.000_01, mode: 'soft' });
    for (let i = 0; i < 3; i++) expect((await chat(token, {})).status).toBe(200);
    const events = await gw.running.ctx.events.readStream(`usage-${id}`);
    const exceeded = events.filter((e) => e.type === 'BudgetExceeded');
    expect(exceeded).toHaveLength(1);
    expect(exceeded[0]!.data).toMatchObject({ studioId: id, tokenId: null, window: 'day' });
    const [budget] = await listBudgets(id);
    expect(budget.remaining_usd).toBe(0);
    expect(budget.spent_usd).toBeGreaterThan(budget.amount_usd);
  });
});

describe('balances come from the log', () => {
  it('a fold of the log from the start gives the live balances', async () => {
    const { id, token } = await budgeted({ amount_usd: 0.01 });
    for (let i = 0; i < 5; i++) await chat(token, {});
    const live = budgetsProjection.toSnapshot(gw.running.ctx.projections.state(budgetsProjection));
    const rebuilt = budgetsProjection.initialState();
    for (const event of await gw.running.ctx.events.readAll()) {
      if ((budgetsProjection.handles as readonly string[]).includes(event.type)) {
        budgetsProjection.apply(rebuilt, event as never);
      }
    }
    expect(budgetsProjection.toSnapshot(rebuilt)).toEqual(live);
    expect((await listBudgets(id))[0].spent_usd).toBeGreaterThan(0);
  });
});
