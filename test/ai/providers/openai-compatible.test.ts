import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { builtinProviders } from '../../../services/ai/providers/index.ts';
import { UpstreamClient } from '../../../services/ai/upstream.ts';
import { expectApiError, startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { mockUpstream, sendJson, startSse } from '../../support/mock-upstream.ts';

const KEY = 'sk-compat-secret-key-0123456789';
let mock: Awaited<ReturnType<typeof mockUpstream>>;
let gw: TestGateway;
let token: string;

const completion = (content: string) => ({
  id: 'chatcmpl-up',
  object: 'chat.completion',
  created: 1,
  model: 'llama3',
  choices: [
    { index: 0, message: { role: 'assistant', content }, finish_reason: 'stop', logprobs: { content: [] } },
  ],
  usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
});

beforeAll(async () => {
  mock = await mockUpstream((_req, res) => sendJson(res, 200, completion('hi')));
  const upstream = new UpstreamClient({ timeoutMs: 300, idleTimeoutMs: 1000, retries: 2, retryBaseMs: 5 });
  gw = await startTestGateway({
    store: 'memory',
    logLevel: 'silent',
    ai: { upstream, providers: builtinProviders },
  });
  const admin = gw.adminKey;
  await gw.api('POST', '/v1/studios/create', { token: admin, body: { name: 'P', studio_id: 'p' } });
  token = (await gw.api('POST', '/v1/studios/tokens/apply', { token: admin, body: { studio_id: 'p' } })).json
    .user_token;
  for (const [key, value] of [
    ['OPENAI_COMPATIBLE_BASE_URL', `${mock.url}/v1`],
    ['OPENAI_COMPATIBLE_MODELS', 'llama3, qwen'],
    ['OPENAI_COMPATIBLE_API_KEY', KEY],
  ]) {
    await gw.api('POST', '/v1/env/upsert', { token: admin, body: { key, value } });
  }
});
beforeEach(() => {
  mock.requests.length = 0;
  mock.setHandler((_req, res) => sendJson(res, 200, completion('hi')));
});
afterAll(async () => {
  await gw?.close();
  await mock?.close();
});

const client = () => new OpenAI({ baseURL: `${gw.url}/v1/ai`, apiKey: token, maxRetries: 0 });

describe('openai-compatible provider', () => {
  it('its models come from env and appear or disappear with env upsert/remove', async () => {
    const ids = async () =>
      (await gw.api('GET', '/v1/ai/models', { token })).json.items.map((m: { id: string }) => m.id);
    expect(await ids()).toEqual(expect.arrayContaining(['compat/llama3', 'compat/qwen']));
    await gw.api('POST', '/v1/env/remove', {
      token: gw.adminKey,
      body: { key: 'OPENAI_COMPATIBLE_BASE_URL' },
    });
    expect(await ids()).not.toContain('compat/llama3');
    const adminView = (await gw.api('GET', '/v1/ai/models', { token: gw.adminKey })).json.items.find(
      (m: { id: string }) => m.id === 'compat/llama3',
    );
    expect(adminView).toMatchObject({ available: false, missing_env: ['OPENAI_COMPATIBLE_BASE_URL'] });
    await gw.api('POST', '/v1/env/upsert', {
      token: gw.adminKey,
      body: { key: 'OPENAI_COMPATIBLE_BASE_URL', value: `${mock.url}/v1` },
    });
    expect(await ids()).toContain('compat/llama3');
  });

  it('passes the body through: only model changes; unknown fields survive both ways', async () => {
    const res = await gw.api('POST', '/v1/ai/chat/completions', {
      token,
      body: {
        model: 'compat/llama3',
        messages: [{ role: 'user', content: 'x' }],
        response_format: { type: 'json_object' },
        logprobs: true,
        seed: 7,
        tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }],
      },
    });
    expect(res.status).toBe(200);
    const sent = JSON.parse(mock.requests[0]!.body.toString());
    expect(sent).toEqual({
      model: 'llama3',
      messages: [{ role: 'user', content: 'x' }],
      response_format: { type: 'json_object' },
      logprobs: true,
      seed: 7,
      tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }],
      stream: false,
    });
    expect(mock.requests[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(mock.requests[0]!.path).toBe('/v1/chat/completions');
    expect(res.json.model).toBe('compat/llama3');
    expect(res.json.choices[0].logprobs).toEqual({ content: [] });
  });

  it('streams chunk by chunk: the client has the first chunk before the upstream sends the last', async () => {
    let releaseLast = () => {};
    const last = new Promise<void>((resolve) => {
      releaseLast = resolve;
    });
    mock.setHandler(async (_req, res) => {
      const send = startSse(res);
      send(
        JSON.stringify({
          id: 'c',
          object: 'chat.completion.chunk',
          created: 1,
          model: 'llama3',
          choices: [{ index: 0, delta: { role: 'assistant', content: 'first' }, finish_reason: null }],
        }),
      );
      await last;
      send(
        JSON.stringify({
          id: 'c',
          object: 'chat.completion.chunk',
          created: 1,
          model: 'llama3',
          choices: [{ index: 0, delta: { content: ' last' }, finish_reason: 'stop' }],
        }),
      );
      send('[DONE]');
      res.end();
    });
    const stream = await client().chat.completions.create({
      model: 'compat/llama3',
      messages: [{ role: 'user', content: 'x' }],
      stream: true,
    });
    const iterator = stream[Symbol.asyncIterator]();
    const first = await iterator.next();
    expect(first.value?.choices[0]?.delta.content).toBe('first');
    releaseLast();
    const rest: string[] = [];
    for (let next = await iterator.next(); !next.done; next = await iterator.next())
      rest.push(next.value.choices[0]?.delta.content ?? '');
    expect(rest).toEqual([' last']);
  });

  it('streamed tool-call deltas reach the openai client and assemble', async () => {
    mock.setHandler((_req, res) => {
      const send = startSse(res);
      const chunk = (delta: unknown, finish: string | null = null) =>
        JSON.stringify({
          id: 'c',
          object: 'chat.completion.chunk',
          created: 1,
          model: 'llama3',
          choices: [{ index: 0, delta, finish_reason: finish }],
        });
      send(
        chunk({
          role: 'assistant',
          content: null,
          tool_calls: [
            { index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '' } },
          ],
        }),
      );
      send(chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }));
      send(chunk({ tool_calls: [{ index: 0, function: { arguments: '"Oslo"}' } }] }));
      send(chunk({}, 'tool_calls'));
      send('[DONE]');
      res.end();
    });
    const stream = await client().chat.completions.create({
      model: 'compat/llama3',
      messages: [{ role: 'user', content: 'weather?' }],
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }],
      stream: true,
    });
    let args = '';
    let name = '';
    for await (const chunk of stream) {
      for (const call of chunk.choices[0]?.delta.tool_calls ?? []) {
        name += call.function?.name ?? '';
        args += call.function?.arguments ?? '';
      }
    }
    expect({ name, args: JSON.parse(args) }).toEqual({ name: 'get_weather', args: { city: 'Oslo' } });
  });

  it('an upstream 401 becomes 502 upstream_error with its message, the key scrubbed', async () => {
    mock.setHandler((_req, res) =>
      sendJson(res, 401, { error: { message: `Incorrect API key provided: ${KEY}` } }),
    );
    const res = await gw.api('POST', '/v1/ai/chat/completions', {
      token,
      body: { model: 'compat/llama3', messages: [{ role: 'user', content: 'x' }] },
    });
    const error = expectApiError(res, 502, 'upstream_error');
    expect(error.message).toContain('Incorrect API key provided');
    expect(res.text).not.toContain(KEY);
    expect(res.text).not.toContain(KEY.slice(3, 20));
  });

  it('a 429 is retried with backoff and then succeeds', async () => {
    let calls = 0;
    mock.setHandler((_req, res) =>
      ++calls === 1
        ? sendJson(res, 429, { error: { message: 'slow down' } })
        : sendJson(res, 200, completion('after retry')),
    );
    const res = await gw.api('POST', '/v1/ai/chat/completions', {
      token,
      body: { model: 'compat/llama3', messages: [{ role: 'user', content: 'x' }] },
    });
    expect(res.status).toBe(200);
    expect(res.json.choices[0].message.content).toBe('after retry');
    expect(calls).toBe(2);
  });

  it('5xx three times in a row is a 502 after the retries', async () => {
    mock.setHandler((_req, res) => sendJson(res, 500, { error: { message: 'upstream broke' } }));
    const res = await gw.api('POST', '/v1/ai/chat/completions', {
      token,
      body: { model: 'compat/llama3', messages: [{ role: 'user', content: 'x' }] },
    });
    expectApiError(res, 502, 'upstream_error');
    expect(mock.requests).toHaveLength(3);
  });

  it('an upstream that never answers is a 504 upstream_timeout', async () => {
    mock.setHandler(() => undefined);
    const res = await gw.api('POST', '/v1/ai/text', { token, body: { model: 'compat/llama3', prompt: 'x' } });
    expectApiError(res, 504, 'upstream_timeout');
  });

  it('a client that disconnects mid-stream cancels the upstream request', async () => {
    mock.setHandler((_req, res) => {
      const send = startSse(res);
      send(
        JSON.stringify({
          id: 'c',
          object: 'chat.completion.chunk',
          created: 1,
          model: 'llama3',
          choices: [{ index: 0, delta: { content: 'a' }, finish_reason: null }],
        }),
      );
      // …and never ends.
    });
    const controller = new AbortController();
    const res = await fetch(`${gw.url}/v1/ai/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'compat/llama3',
        messages: [{ role: 'user', content: 'x' }],
        stream: true,
      }),
      signal: controller.signal,
    });
    await res.body!.getReader().read();
    controller.abort();
    for (let i = 0; i < 100 && !mock.requests[0]?.aborted; i++) await new Promise((r) => setTimeout(r, 10));
    expect(mock.requests[0]?.aborted).toBe(true);
  });
});
