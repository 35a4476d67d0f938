import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../../shared/testing/wait.ts';
import { expectApiError } from '../support/gateway.ts';
import {
  gate,
  type Json,
  openAiMock,
  openAiWire,
  type Recorded,
  sendJson,
  sse,
  type WireMock,
} from '../support/mock-ai-upstreams.ts';
import { type ProviderGateway, startProviderGateway } from './providers/support.ts';

/**
 * One studio must not starve the others of upstream connections: a studio holds at most its share
 * of an origin's pool, a freed connection goes to the waiting studio holding the fewest, and a
 * request that waits too long is a 503 `overloaded` with `Retry-After`.
 */
const MODEL = 'openai/gpt-4o-mini';
let mock: WireMock;
/** One gate per held stream, by prompt; once `openAll` has run, streams are no longer held. */
let gates = new Map<string, ReturnType<typeof gate>>();
let allOpen = false;
const gateOf = (prompt: string) => {
  let g = gates.get(prompt);
  if (!g) {
    g = gate();
    gates.set(prompt, g);
  }
  if (allOpen) g.open();
  return g;
};
const openAll = () => {
  allOpen = true;
  for (const g of gates.values()) g.open();
};

/** Who sent a request: the prompt is `<studio>:<n>`. */
const promptOf = (req: Recorded): string => {
  const body: Json = JSON.parse(req.body.toString());
  return body.messages.at(-1).content;
};

beforeAll(async () => {
  mock = await openAiMock();
});
afterAll(async () => {
  await mock?.close();
});

/** Streams answer one chunk, then wait for their prompt's gate; anything else answers at once. */
function holdStreams(): void {
  gates = new Map();
  allOpen = false;
  mock.reply(async (req, res) => {
    const body: Json = JSON.parse(req.body.toString());
    if (!body.stream) return sendJson(res, 200, openAiWire.completion({ content: 'quick' }));
    const out = sse(res);
    out.send(openAiWire.chunk({ role: 'assistant', content: 'a' }));
    await gateOf(promptOf(req)).wait;
    out.send(openAiWire.chunk({}, 'stop'));
    out.send('[DONE]');
    out.end();
  });
}

async function gatewayWith(share: { connections: number; queueTimeoutMs: number }) {
  const pg = await startProviderGateway({
    processEnv: { OPENAI_API_KEY: 'sk-fairness-0123456789', OPENAI_BASE_URL: `${mock.url}/v1` },
    // Held streams must end by their gate only, never by a timeout.
    upstream: { ...share, timeoutMs: 60_000, idleTimeoutMs: 60_000 },
  });
  const admin = { token: pg.admin };
  await pg.gw.api('POST', '/v1/studios/create', { ...admin, body: { name: 'Other', studio_id: 'other' } });
  const applied = await pg.gw.api('POST', '/v1/studios/tokens/apply', {
    ...admin,
    body: { studio_id: 'other' },
  });
  return { pg, other: applied.json.user_token as string };
}

/** A chat stream as `token` (default: studio `p`), its body read to the end; resolves with the status. */
async function openStream(pg: ProviderGateway, prompt: string, token = pg.token): Promise<number> {
  const response = await fetch(`${pg.gw.url}/v1/ai/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: MODEL, stream: true, messages: [{ role: 'user', content: prompt }] }),
  });
  await response.text();
  return response.status;
}

const quick = (pg: ProviderGateway, token: string, prompt: string) =>
  pg.gw.api('POST', '/v1/ai/text', { token, body: { model: MODEL, prompt } });
const senders = () => mock.requests.map((r) => promptOf(r).split(':')[0]);

describe('upstream connections are shared fairly between studios', () => {
  let pg: ProviderGateway;
  let other: string;
  beforeAll(async () => {
    ({ pg, other } = await gatewayWith({ connections: 4, queueTimeoutMs: 30_000 }));
  });
  afterAll(async () => {
    openAll();
    await pg?.close();
  });
  afterEach(() => {
    openAll();
    mock.reset();
  });

  it("a studio holding long streams gets half the pool; another studio's request goes through at once, before its queued ones", async () => {
    holdStreams();
    // Studio p asks for five streams on a pool of four connections: it may hold two.
    const streams = [1, 2, 3, 4, 5].map((n) => openStream(pg, `p:${n}`));
    await waitUntil(() => mock.requests.length >= 2, 'two streams reach the upstream');
    await new Promise((r) => setTimeout(r, 200)); // room for a third, which must not come
    expect(mock.requests).toHaveLength(2);

    // Another studio, while p's streams are held and three more queue.
    const res = await quick(pg, other, 'other:1');
    expect(res.status, res.text).toBe(200);
    expect(senders()).toEqual(['p', 'p', 'other']);

    openAll();
    expect(await Promise.all(streams)).toEqual([200, 200, 200, 200, 200]);
    expect(senders()).toEqual(['p', 'p', 'other', 'p', 'p', 'p']);
  });

  it('when the pool is full, a freed connection goes to the waiting studio holding the fewest, not to the next in line', async () => {
    holdStreams();
    const admin = { token: pg.admin };
    await pg.gw.api('POST', '/v1/studios/create', { ...admin, body: { name: 'Third', studio_id: 'third' } });
    const third: string = (
      await pg.gw.api('POST', '/v1/studios/tokens/apply', { ...admin, body: { studio_id: 'third' } })
    ).json.user_token;

    // p: two held, three queued; third: two held. The pool (four) is full.
    const streams = [1, 2, 3, 4, 5].map((n) => openStream(pg, `p:${n}`));
    await waitUntil(() => mock.requests.length >= 2, 'p holds two connections');
    streams.push(openStream(pg, 'third:1', third), openStream(pg, 'third:2', third));
    await waitUntil(() => mock.requests.length >= 4, 'the pool is full');
    // other queues behind p's three.
    const answer = quick(pg, other, 'other:1');
    await new Promise((r) => setTimeout(r, 200));
    expect(mock.requests).toHaveLength(4);

    gateOf(promptOf(mock.requests[0]!)).open(); // one of p's streams ends
    expect((await answer).status).toBe(200);
    expect(senders().slice(4)).toEqual(['other']);

    openAll();
    expect(new Set(await Promise.all(streams))).toEqual(new Set([200]));
    expect(senders().filter((s) => s === 'p')).toHaveLength(5);
  });
});

describe('how long a request may wait for a connection', () => {
  let pg: ProviderGateway;
  let other: string;
  beforeAll(async () => {
    ({ pg, other } = await gatewayWith({ connections: 2, queueTimeoutMs: 300 }));
  });
  afterAll(async () => {
    openAll();
    await pg?.close();
  });

  it('a request that finds no connection within the bound is a 503 overloaded with Retry-After; other studios are served', async () => {
    holdStreams();
    const stream = openStream(pg, 'p:1'); // p's share of a pool of two: one connection
    await waitUntil(() => mock.requests.length >= 1, 'the stream reaches the upstream');

    const refused = await quick(pg, pg.token, 'p:2');
    expectApiError(refused, 503, 'overloaded');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(senders()).toEqual(['p']);

    expect((await quick(pg, other, 'other:1')).status).toBe(200);
    openAll();
    expect(await stream).toBe(200);
  });
});
