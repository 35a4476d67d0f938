import { describe, expect, it } from 'vitest';
import { expectApiError } from '../../support/gateway.ts';
import { gate, type Json, openAiStream, openAiWire } from '../../support/mock-ai-upstreams.ts';
import { failWith, generations, useRoutedGateway } from './support.ts';

/**
 * Routes under load and under the studio's rules: least-busy picks, a route removed while its
 * requests run, budgets reserved against the target tried, rate limits counted once a request.
 */
const r = useRoutedGateway();
let n = 0;

/** A studio of its own with a user token, so budgets and limits set on it touch no other test. */
async function studio(): Promise<{ id: string; token: string }> {
  const id = `s${++n}`;
  await r.admin('POST', '/v1/studios/create', { name: id, studio_id: id });
  const issued = await r.admin('POST', '/v1/studios/tokens/apply', { studio_id: id });
  return { id, token: issued.json.user_token };
}

/** A stream held after its first chunk until `open` is called. */
function heldStream(model: string) {
  const held = gate();
  const handler = openAiStream(
    [
      openAiWire.chunk({ role: 'assistant', content: 'held ' }, null, model),
      openAiWire.chunk({ content: 'then done' }, 'stop', model),
    ],
    { after: 0, wait: held.wait },
  );
  return { handler, open: held.open };
}

const streamChat = (model: string) =>
  r.pg.stream('/v1/ai/chat/completions', {
    model,
    stream: true,
    messages: [{ role: 'user', content: 'hi' }],
  });

describe('least_busy', () => {
  it('sends each request to the target with the fewest generations in flight', async () => {
    const id = `busy${++n}`;
    await r.upsert({
      id,
      strategy: 'least_busy',
      targets: [{ model: 'compat/a' }, { model: 'compat/b' }, { model: 'compat/c' }],
    });
    const onA = heldStream('a');
    const onB = heldStream('b');
    r.script('a', onA.handler);
    r.script('b', onB.handler);
    const first = await streamChat(id);
    expect((await first.events.next())?.data.model).toBe('compat/a');
    const second = await streamChat(id);
    expect((await second.events.next())?.data.model).toBe('compat/b');
    // a and b each have one in flight: c has none.
    expect((await r.pg.post('/v1/ai/text', { model: id, prompt: 'x' })).json.model).toBe('compat/c');
    onA.open();
    await first.events.rest();
    // a's stream has ended: a (declared first) and c are idle again, b still busy.
    expect((await r.pg.post('/v1/ai/text', { model: id, prompt: 'y' })).json.model).toBe('compat/a');
    onB.open();
    await second.events.rest();
    expect(r.calls()).toEqual(['a', 'b', 'c', 'a']);
  });
});

describe('a route removed while its requests run', () => {
  it('lets them finish as they started, and refuses new ones', async () => {
    const id = `doomed${++n}`;
    await r.upsert({ id, strategy: 'fallback', targets: [{ model: 'compat/a' }] });
    const onA = heldStream('a');
    r.script('a', onA.handler);
    const running = await streamChat(id);
    expect((await running.events.next())?.data.model).toBe('compat/a');

    expect((await r.admin('POST', '/v1/ai/routes/remove', { id })).status).toBe(200);
    expectApiError(await r.pg.post('/v1/ai/text', { model: id, prompt: 'hi' }), 404, 'model_not_found');
    expect(await r.pg.userModelIds()).not.toContain(id);

    onA.open();
    const rest = await running.events.rest();
    expect(rest.at(-1)!.data).toBe('[DONE]');
    const usage = generations(await r.usageOf(running.response.headers.get('x-request-id')!));
    expect(usage.map((e) => [e.type, (e.data as Json).route])).toEqual([['GenerationCompleted', id]]);
  });
});

describe('budgets and rate limits through a route', () => {
  it('reserve against each target tried, give back what a failed target held, and settle at the one that answered', async () => {
    const { id: studioId, token } = await studio();
    await r.admin('POST', '/v1/ai/prices/upsert', {
      model: 'compat/a',
      input_per_mtok: 50,
      output_per_mtok: 50,
    });
    await r.admin('POST', '/v1/ai/prices/upsert', {
      model: 'compat/b',
      input_per_mtok: 10,
      output_per_mtok: 10,
    });
    await r.admin('POST', '/v1/studios/budgets/set', {
      studio_id: studioId,
      amount_usd: 1,
      window: 'day',
      mode: 'hard',
    });
    const id = `budgeted${++n}`;
    await r.upsert({ id, strategy: 'fallback', targets: [{ model: 'compat/a' }, { model: 'compat/b' }] });
    r.script('a', failWith(503));
    const res = await r.pg.gw.api('POST', '/v1/ai/chat/completions', {
      token,
      body: { model: id, max_tokens: 100, messages: [{ role: 'user', content: 'hi there' }] },
    });
    expect(res.status, res.text).toBe(200);

    const events = await r.usageOf(res.headers.get('x-request-id')!, studioId);
    // a's reservation is written ahead of its release; b's, held in the process, is recorded by
    // the generation's event (a log with one writer).
    expect(events.map((e) => e.type)).toEqual(['BudgetReserved', 'BudgetReleased', 'GenerationCompleted']);
    const [reservedA, released, completed] = events.map((e) => e.data as Json);
    expect(reservedA.model).toBe('compat/a');
    expect(released.reservationId).toBe(reservedA.reservationId);
    expect(completed).toMatchObject({ model: 'compat/b', costMicroUsd: (2 + 3) * 10 });
    expect(completed.reservationId).not.toBe(reservedA.reservationId);
    // The worst case at each target's own price: a's five times b's.
    expect(reservedA.amountMicroUsd).toBe(5 * completed.reservedMicroUsd);

    const [budget] = (await r.admin('GET', `/v1/studios/budgets/list?studio_id=${studioId}`)).json.items;
    expect(budget).toMatchObject({ spent_usd: 0.00005, reserved_usd: 0 });
  });

  it('refuse a target the budget cannot pay for with 402, recorded once', async () => {
    const { id: studioId, token } = await studio();
    await r.admin('POST', '/v1/ai/prices/upsert', { model: 'compat/c', input_per_mtok: 1_000_000 });
    await r.admin('POST', '/v1/studios/budgets/set', {
      studio_id: studioId,
      amount_usd: 0.001,
      window: 'day',
      mode: 'hard',
    });
    const id = `priced-out${++n}`;
    await r.upsert({ id, strategy: 'fallback', targets: [{ model: 'compat/a' }, { model: 'compat/c' }] });
    r.script('a', failWith(503));
    const res = await r.pg.gw.api('POST', '/v1/ai/text', { token, body: { model: id, prompt: 'hi' } });
    expectApiError(res, 402, 'budget_exceeded');
    expect(r.calls()).toEqual(['a']);
    const usage = generations(await r.usageOf(res.headers.get('x-request-id')!, studioId));
    expect(usage.map((e) => e.data as Json)).toEqual([
      expect.objectContaining({
        model: 'compat/c',
        status: 402,
        costMicroUsd: 0,
        attempts: [expect.objectContaining({ model: 'compat/a', outcome: 'moved_on' })],
      }),
    ]);
    const [budget] = (await r.admin('GET', `/v1/studios/budgets/list?studio_id=${studioId}`)).json.items;
    expect(budget).toMatchObject({ spent_usd: 0, reserved_usd: 0 });
  });

  it('count a request once against rpm, however many targets it tried', async () => {
    const { id: studioId, token } = await studio();
    await r.admin('POST', '/v1/studios/limits/set', { studio_id: studioId, rpm: 1 });
    const id = `limited${++n}`;
    await r.upsert({ id, strategy: 'fallback', targets: [{ model: 'compat/a' }, { model: 'compat/b' }] });
    r.script('a', failWith(503));
    const call = () => r.pg.gw.api('POST', '/v1/ai/text', { token, body: { model: id, prompt: 'hi' } });
    const first = await call();
    expect(first.status, first.text).toBe(200);
    expect(first.headers.get('x-ratelimit-remaining-requests')).toBe('0');
    expectApiError(await call(), 429, 'rate_limited');
  });
});

describe('the response cache through a route', () => {
  it('keeps answers under the route id; a hit tries no target and costs nothing', async () => {
    const id = `cached${++n}`;
    await r.upsert({ id, strategy: 'fallback', targets: [{ model: 'compat/a' }, { model: 'compat/b' }] });
    const call = (model: string) =>
      r.pg.gw.api('POST', '/v1/ai/chat/completions', {
        token: r.pg.token,
        headers: { 'x-studio-cache': 'ttl=60' },
        body: { model, messages: [{ role: 'user', content: `cache me ${id}` }] },
      });
    r.script('a', failWith(503));
    const miss = await call(id);
    expect(miss.headers.get('x-studio-cache')).toBe('miss');
    expect(miss.json.model).toBe('compat/b');
    const hit = await call(id);
    expect(hit.headers.get('x-studio-cache')).toBe('hit');
    expect(hit.json.choices).toEqual(miss.json.choices);
    expect(r.calls()).toEqual(['a', 'b']);
    // The target asked for itself is another entry.
    expect((await call('compat/b')).headers.get('x-studio-cache')).toBe('miss');

    const [event] = generations(await r.usageOf(hit.headers.get('x-request-id')!));
    expect(event!.data).toMatchObject({ cached: true, costMicroUsd: 0, route: id, attempts: [] });
  });
});
