import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ok } from '../../governance/support.ts';
import { studioWithToken } from '../../support/admin.ts';
import {
  anthropicEvents,
  anthropicMock,
  anthropicStream,
  anthropicWire,
  faults,
  sendJson,
  type WireMock,
} from '../../support/mock-ai-upstreams.ts';
import { type ProviderGateway, startProviderGateway } from '../providers/support.ts';
import { anthropicClient, usageEvents } from './support.ts';

// Routes and the response cache apply to the Messages API as to chat completions: a route's
// targets may speak it natively (anthropic/*) or through chat (dev/echo); the cache keeps and
// replays the Messages form.

let mock: WireMock;
let pg: ProviderGateway;
let client: Anthropic;

beforeAll(async () => {
  mock = await anthropicMock();
  pg = await startProviderGateway({
    processEnv: { ANTHROPIC_API_KEY: 'sk-ant-api03-routes-0123456789', ANTHROPIC_BASE_URL: mock.url },
  });
  client = anthropicClient(pg.gw, { apiKey: pg.token });
  ok(
    await pg.gw.api('POST', '/v1/ai/routes/upsert', {
      token: pg.admin,
      body: {
        id: 'claude-or-echo',
        strategy: 'fallback',
        targets: [{ model: 'anthropic/claude-sonnet-4-5' }, { model: 'dev/echo' }],
      },
    }),
  );
});
beforeEach(() => mock.reset());
afterAll(async () => {
  await pg?.close();
  await mock?.close();
});

const hello = { max_tokens: 64, messages: [{ role: 'user' as const, content: 'hello there' }] };
const overloaded = () => faults.status(503, anthropicWire.error('Overloaded', 'overloaded_error'));

describe('routes on the Messages API', () => {
  it('a native target that fails hands over to a translated one; one generation names both attempts', async () => {
    mock.reply(overloaded());
    const message = await client.messages.create({ ...hello, model: 'claude-or-echo' });
    expect(message).toMatchObject({
      model: 'dev/echo',
      content: [{ type: 'text', text: 'Echo: hello there' }],
    });
    const [event] = (await usageEvents(pg.gw, 'p')).filter((e) => e.requestId === message._request_id);
    expect(event).toMatchObject({
      type: 'GenerationCompleted',
      model: 'dev/echo',
      route: 'claude-or-echo',
      attempts: [
        expect.objectContaining({
          model: 'anthropic/claude-sonnet-4-5',
          outcome: 'moved_on',
          reason: 'status 503',
        }),
        expect.objectContaining({ model: 'dev/echo', outcome: 'answered' }),
      ],
    });
  });

  it('streamed: the route moves on before the first event, and the answer streams from the next target', async () => {
    mock.reply(overloaded());
    const final = await client.messages.stream({ ...hello, model: 'claude-or-echo' }).finalMessage();
    expect(final).toMatchObject({
      model: 'dev/echo',
      content: [{ type: 'text', text: 'Echo: hello there' }],
    });
  });

  it('the first target answering natively', async () => {
    mock.reply(anthropicStream(anthropicEvents([{ text: ['Native.'] }])));
    const final = await client.messages.stream({ ...hello, model: 'claude-or-echo' }).finalMessage();
    expect(final).toMatchObject({
      model: 'anthropic/claude-sonnet-4-5',
      content: [{ type: 'text', text: 'Native.' }],
    });
    expect(mock.body().model).toBe('claude-sonnet-4-5');
  });

  it('count_tokens on a route counts as its first target; a token limited to the route may call both', async () => {
    mock.reply((_req, res) => sendJson(res, 200, { input_tokens: 11 }));
    const limited = ok(
      await pg.gw.api('POST', '/v1/studios/tokens/apply', {
        token: pg.admin,
        body: { studio_id: 'p', models: ['claude-or-echo'] },
      }),
    ).json.user_token;
    const routed = anthropicClient(pg.gw, { apiKey: limited });
    expect(await routed.messages.countTokens({ model: 'claude-or-echo', messages: hello.messages })).toEqual({
      input_tokens: 11,
    });
    const direct = await routed.messages
      .countTokens({ model: 'dev/echo', messages: hello.messages })
      .catch((e: unknown) => e);
    expect(direct).toBeInstanceOf(Anthropic.PermissionDeniedError);
  });
});

describe('the response cache on the Messages API', () => {
  let cachedClient: Anthropic;
  beforeAll(async () => {
    const { token } = await studioWithToken(pg.gw, 'cached');
    ok(
      await pg.gw.api('POST', '/v1/studios/settings', {
        token: pg.admin,
        body: { studio_id: 'cached', cache_ttl_s: 60 },
      }),
    );
    cachedClient = anthropicClient(pg.gw, { apiKey: token });
  });

  it('native: a second identical request is a hit, costs nothing and never reaches the upstream', async () => {
    mock.reply((_req, res) => sendJson(res, 200, anthropicWire.message([{ type: 'text', text: 'Once.' }])));
    const body = { ...hello, model: 'anthropic/claude-sonnet-4-5' };
    const first = await cachedClient.messages.create(body).withResponse();
    const second = await cachedClient.messages.create(body).withResponse();
    expect(first.response.headers.get('x-studio-cache')).toBe('miss');
    expect(second.response.headers.get('x-studio-cache')).toBe('hit');
    expect(second.data.content).toEqual([{ type: 'text', text: 'Once.' }]);
    expect(second.data.usage).toMatchObject({ cached: true });
    expect(mock.requests).toHaveLength(1);
    const [, hit] = await usageEvents(pg.gw, 'cached');
    expect(hit).toMatchObject({ type: 'GenerationCompleted', cached: true, costMicroUsd: 0 });
  });

  it('a stream replays its events; a different beta is a different request', async () => {
    mock.reply(anthropicStream(anthropicEvents([{ text: ['Str', 'eam'] }])));
    const body = {
      ...hello,
      model: 'anthropic/claude-sonnet-4-5',
      messages: [{ role: 'user' as const, content: 'streamed' }],
    };
    const events = async (headers: Record<string, string> = {}) => {
      const stream = await cachedClient.messages.create({ ...body, stream: true }, { headers });
      const all = [];
      for await (const event of stream) all.push(event);
      return all;
    };
    const first = await events();
    const replayed = await events();
    expect(mock.requests).toHaveLength(1);
    expect(replayed.map((e) => e.type)).toEqual(first.map((e) => e.type));
    expect(replayed.at(-2)).toMatchObject({ type: 'message_delta', usage: { cached: true } });
    await events({ 'anthropic-beta': 'context-1m-2025-08-07' });
    expect(mock.requests).toHaveLength(2);
  });

  it('translated (dev/echo): kept and replayed in Messages form', async () => {
    const body = { ...hello, model: 'dev/echo', messages: [{ role: 'user' as const, content: 'echo me' }] };
    const first = await cachedClient.messages.stream(body).finalMessage();
    const second = await cachedClient.messages.stream(body).finalMessage();
    expect(second.content).toEqual(first.content);
    const echoes = (await usageEvents(pg.gw, 'cached')).filter((e) => e.model === 'dev/echo');
    expect(echoes.map((e) => e.cached ?? false)).toEqual([false, true]);
  });
});
