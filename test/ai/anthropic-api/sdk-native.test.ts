import Anthropic, { type APIError } from '@anthropic-ai/sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ok } from '../../governance/support.ts';
import { studioWithToken } from '../../support/admin.ts';
import { expectAnthropicError } from '../../support/anthropic-errors.ts';
import {
  anthropicEvents,
  anthropicMock,
  anthropicStream,
  anthropicWire,
  faults,
  gate,
  sendJson,
  type WireMock,
} from '../../support/mock-ai-upstreams.ts';
import { type ProviderGateway, startProviderGateway } from '../providers/support.ts';
import { anthropicClient, usageEvents, weatherTool } from './support.ts';

// Anthropic's official SDK against the gateway on anthropic/* models: the Messages API passes
// through to the upstream (a mock of Anthropic's), its body as sent but `model`, its events relayed.

const KEY = 'sk-ant-api03-native-test-key-0123456789';
let mock: WireMock;
let pg: ProviderGateway;
let client: Anthropic;

beforeAll(async () => {
  mock = await anthropicMock();
  pg = await startProviderGateway({ processEnv: { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: mock.url } });
  client = anthropicClient(pg.gw, { apiKey: pg.token });
});
beforeEach(() => mock.reset());
afterAll(async () => {
  await pg?.close();
  await mock?.close();
});

const MODEL = 'anthropic/claude-sonnet-4-5';
/** Usage with prompt-cache reads and writes, which count as input. */
const CACHED_USAGE = {
  input_tokens: 50,
  output_tokens: 12,
  cache_read_input_tokens: 8,
  cache_creation_input_tokens: 4,
};
const hello = {
  model: MODEL,
  max_tokens: 256,
  messages: [{ role: 'user' as const, content: 'hello there' }],
};

describe('Messages API on anthropic/* (native)', () => {
  it('messages.create: the body goes upstream as sent (model renamed), the answer comes back as it is', async () => {
    mock.reply((_req, res) =>
      sendJson(res, 200, {
        ...anthropicWire.message([{ type: 'text', text: 'Hi.' }], {
          usage: CACHED_USAGE,
        }),
        container: null,
      }),
    );
    const before = (await usageEvents(pg.gw, 'p')).length;
    const body = {
      ...hello,
      system: [{ type: 'text' as const, text: 'Be brief.', cache_control: { type: 'ephemeral' as const } }],
      temperature: 0.2,
      top_k: 5,
      metadata: { user_id: 'u-1' },
      thinking: { type: 'enabled' as const, budget_tokens: 128 },
    };
    const message = await client.messages.create(body, {
      headers: { 'anthropic-beta': 'context-1m-2025-08-07', 'anthropic-version': '2099-01-01' },
    });

    const sent = mock.requests[0]!;
    expect(sent.path).toBe('/v1/messages');
    expect(sent.headers['x-api-key']).toBe(KEY);
    expect(sent.headers.authorization).toBeUndefined();
    expect(sent.headers['anthropic-beta']).toBe('context-1m-2025-08-07');
    // the client's own API version goes with its body
    expect(sent.headers['anthropic-version']).toBe('2099-01-01');
    expect(mock.body()).toEqual({ ...body, model: 'claude-sonnet-4-5', stream: false });

    expect(message).toEqual({
      id: 'msg_mock',
      type: 'message',
      role: 'assistant',
      model: MODEL,
      content: [{ type: 'text', text: 'Hi.' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: CACHED_USAGE,
      container: null,
    });
    const [recorded] = (await usageEvents(pg.gw, 'p')).slice(before);
    // cache reads and writes are input the model read
    expect(recorded).toMatchObject({ model: MODEL, modality: 'chat', inputTokens: 62, outputTokens: 12 });
  });

  it('messages.stream: the upstream events relayed in order, model renamed, usage recorded before message_stop', async () => {
    mock.reply(
      anthropicStream(anthropicEvents([{ text: ['Hel', 'lo'] }], { input_tokens: 21, output_tokens: 5 })),
    );
    const before = (await usageEvents(pg.gw, 'p')).length;
    const stream = client.messages.stream(hello);
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    expect(types).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    const final = await stream.finalMessage();
    expect(final).toMatchObject({
      model: MODEL,
      content: [{ type: 'text', text: 'Hello' }],
      usage: { input_tokens: 21, output_tokens: 5 },
    });
    expect(mock.body()).toEqual({ ...hello, model: 'claude-sonnet-4-5', stream: true });
    const [recorded] = (await usageEvents(pg.gw, 'p')).slice(before);
    expect(recorded).toMatchObject({ type: 'GenerationCompleted', inputTokens: 21, outputTokens: 5 });
  });

  it('raw frames: event names and data as the upstream sent them, ping included', async () => {
    const events = anthropicEvents([{ text: ['a'] }]);
    mock.reply(anthropicStream(events));
    const { response, events: read } = await pg.stream('/v1/ai/anthropic/v1/messages', {
      ...hello,
      stream: true,
    });
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const got = await read.rest();
    const expected = events.map(([event, data]) =>
      event === 'message_start'
        ? { event, data: { ...data, message: { ...(data.message as object), model: MODEL } } }
        : { event, data },
    );
    expect(got).toEqual(expected);
  });

  it('tools: tool_use from upstream, tool_result back through the gateway', async () => {
    mock.script(
      (_req, res) =>
        sendJson(
          res,
          200,
          anthropicWire.message(
            [{ type: 'tool_use', id: 'toolu_01', name: 'weather', input: { city: 'Bergen' } }],
            {
              stop_reason: 'tool_use',
            },
          ),
        ),
      (_req, res) => sendJson(res, 200, anthropicWire.message([{ type: 'text', text: 'Rain in Bergen.' }])),
    );
    const ask = { role: 'user' as const, content: 'Weather in Bergen?' };
    const first = await client.messages.create({ ...hello, messages: [ask], tools: [weatherTool] });
    expect(first.stop_reason).toBe('tool_use');
    const second = await client.messages.create({
      ...hello,
      tools: [weatherTool],
      messages: [
        ask,
        { role: 'assistant', content: first.content },
        {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: 'toolu_01', content: 'rain', is_error: false }],
        },
      ],
    });
    expect(second.content).toEqual([{ type: 'text', text: 'Rain in Bergen.' }]);
    expect(mock.body(1).messages).toEqual([
      ask,
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'toolu_01', name: 'weather', input: { city: 'Bergen' } }],
      },
      {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'toolu_01', content: 'rain', is_error: false }],
      },
    ]);
  });

  it("messages.countTokens asks the upstream's own count", async () => {
    mock.reply((req, res) =>
      req.path === '/v1/messages/count_tokens'
        ? sendJson(res, 200, { input_tokens: 42 })
        : sendJson(res, 404, anthropicWire.error('no', 'not_found_error')),
    );
    const counted = await client.messages.countTokens({
      model: MODEL,
      system: 'Be brief.',
      messages: hello.messages,
      tools: [weatherTool],
    });
    expect(counted).toEqual({ input_tokens: 42 });
    expect(mock.requests[0]!.headers['x-api-key']).toBe(KEY);
    expect(mock.body()).toEqual({
      model: 'claude-sonnet-4-5',
      system: 'Be brief.',
      messages: hello.messages,
      tools: [weatherTool],
    });
  });

  it('a hard budget lowers max_tokens before it goes upstream', async () => {
    const { token } = await studioWithToken(pg.gw, 'native-budget');
    ok(
      await pg.gw.api('POST', '/v1/studios/budgets/set', {
        token: pg.admin,
        body: { studio_id: 'native-budget', amount_usd: 0.01, window: 'day', mode: 'hard' },
      }),
    );
    await anthropicClient(pg.gw, { apiKey: token })
      .messages.stream({ ...hello, max_tokens: 64_000 })
      .done();
    // claude-sonnet-4-5 at $3 / $15 a million: $0.01 pays for the input and some 650 output tokens
    const sent = mock.body().max_tokens;
    expect(sent).toBeLessThan(700);
    expect(sent).toBeGreaterThan(600);
  });
});

describe('a client that walks away', () => {
  it('mid-stream: the upstream call is cancelled and the generation recorded as 499', async () => {
    const held = gate();
    mock.reply(anthropicStream(anthropicEvents([{ text: ['one ', 'two'] }]), { after: 2, wait: held.wait }));
    const before = (await usageEvents(pg.gw, 'p')).length;
    const controller = new AbortController();
    const { events } = await pg.stream(
      '/v1/ai/anthropic/v1/messages',
      { ...hello, stream: true },
      controller.signal,
    );
    expect((await events.next())?.event).toBe('message_start');
    controller.abort();
    let failed: Record<string, unknown> | undefined;
    for (let i = 0; i < 200 && failed === undefined; i++) {
      [failed] = (await usageEvents(pg.gw, 'p')).slice(before);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    held.open();
    expect(failed).toMatchObject({
      type: 'GenerationFailed',
      status: 499,
      errorCode: 'client_closed_request',
    });
  });
});

describe('upstream failures in Anthropic shape', () => {
  it("the upstream refusing the client's own body is the client's 400, with the upstream's message", async () => {
    mock.reply(faults.status(400, anthropicWire.error('prompt is too long: 210000 tokens > 200000 maximum')));
    const res = await pg.gw.api('POST', '/v1/ai/anthropic/v1/messages', { token: pg.token, body: hello });
    const error = expectAnthropicError(res, 400, 'validation_failed', 'invalid_request_error');
    expect(error.message).toBe('upstream answered 400: prompt is too long: 210000 tokens > 200000 maximum');
    expect(error.details.upstream_status).toBe(400);
    // the SDK does not retry it
    const thrown = await client.messages.create(hello).catch((e: unknown) => e);
    expect(thrown).toBeInstanceOf(Anthropic.BadRequestError);
  });

  it('any other upstream failure (our key refused, say) is a 502 api_error carrying its status', async () => {
    mock.reply(faults.status(401, anthropicWire.error('invalid x-api-key', 'authentication_error')));
    const res = await pg.gw.api('POST', '/v1/ai/anthropic/v1/messages', { token: pg.token, body: hello });
    const error = expectAnthropicError(res, 502, 'upstream_error', 'api_error');
    expect(error.message).toBe('upstream answered 401: invalid x-api-key');
    expect(error.details.upstream_status).toBe(401);
  });

  it('a stream that breaks off ends with an error event; the SDK throws it, the failure is recorded', async () => {
    const events = anthropicEvents([{ text: ['par', 'tial'] }]);
    mock.reply(
      anthropicStream([
        ...events.slice(0, 4),
        anthropicWire.event('error', anthropicWire.error('Overloaded', 'overloaded_error')),
      ]),
    );
    const before = (await usageEvents(pg.gw, 'p')).length;
    const { events: read } = await pg.stream('/v1/ai/anthropic/v1/messages', { ...hello, stream: true });
    const got = await read.rest();
    expect(got.at(-1)).toEqual({
      event: 'error',
      data: {
        type: 'error',
        error: { type: 'api_error', message: 'Overloaded', details: { error_code: 'upstream_error' } },
        request_id: expect.any(String),
      },
    });
    const [failed] = (await usageEvents(pg.gw, 'p')).slice(before);
    expect(failed).toMatchObject({ type: 'GenerationFailed', errorCode: 'upstream_error', status: 502 });

    const error = await client.messages
      .stream(hello)
      .finalMessage()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.APIError);
    expect((error as APIError).type).toBe('api_error');
  });
});
