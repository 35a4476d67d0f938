import Anthropic, { type APIError } from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ProviderGateway, startProviderGateway } from '../providers/support.ts';
import { anthropicClient, usageEvents, weatherTool } from './support.ts';

// Anthropic's official SDK against the gateway, on a model that is not Anthropic's (dev/echo): the
// Messages API translated to chat and back.

let pg: ProviderGateway;
let client: Anthropic;

beforeAll(async () => {
  pg = await startProviderGateway({});
  client = anthropicClient(pg.gw, { apiKey: pg.token });
});
afterAll(async () => {
  await pg?.close();
});

const hello = {
  model: 'dev/echo',
  max_tokens: 100,
  messages: [{ role: 'user' as const, content: 'hello there' }],
};

describe('Messages API on dev/echo (translated)', () => {
  it('messages.create answers a message, its usage recorded like a chat completion', async () => {
    const before = (await usageEvents(pg.gw, 'p')).length;
    const message = await client.messages.create({
      ...hello,
      system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
      metadata: { user_id: 'u-1' },
    });
    expect(message).toEqual({
      id: expect.stringMatching(/^msg_/),
      type: 'message',
      role: 'assistant',
      model: 'dev/echo',
      content: [{ type: 'text', text: 'Echo: hello there' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 4, output_tokens: 3 },
    });
    expect(message._request_id).toBeTruthy();
    const events = await usageEvents(pg.gw, 'p');
    expect(events.slice(before)).toEqual([
      expect.objectContaining({
        type: 'GenerationCompleted',
        model: 'dev/echo',
        modality: 'chat',
        inputTokens: 4,
        outputTokens: 3,
        // dev/echo: 1 micro-dollar an input token, 2 an output token
        costMicroUsd: 10,
        requestId: message._request_id,
        status: 200,
      }),
    ]);
  });

  it('messages.stream: message_start, a text block, message_delta with the usage, message_stop', async () => {
    const stream = client.messages.stream(hello);
    const types: string[] = [];
    let text = '';
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') text += event.delta.text;
    }
    expect(text).toBe('Echo: hello there');
    expect(types).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    const final = await stream.finalMessage();
    expect(final).toMatchObject({
      model: 'dev/echo',
      content: [{ type: 'text', text: 'Echo: hello there' }],
      stop_reason: 'end_turn',
      usage: { input_tokens: 2, output_tokens: 3 },
    });
  });

  it('stream: true gives the raw events', async () => {
    const stream = await client.messages.create({ ...hello, stream: true });
    const events = [];
    for await (const event of stream) events.push(event);
    expect(events.at(0)).toMatchObject({
      type: 'message_start',
      message: { model: 'dev/echo', role: 'assistant' },
    });
    expect(events.at(-2)).toEqual({
      type: 'message_delta',
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { input_tokens: 2, output_tokens: 3 },
    });
    expect(events.at(-1)).toEqual({ type: 'message_stop' });
  });

  it('tools: tool_use, then the tool_result sent back is answered', async () => {
    const ask = { role: 'user' as const, content: 'tool:weather {"city":"Bergen"}' };
    const first = await client.messages.create({ ...hello, messages: [ask], tools: [weatherTool] });
    expect(first.stop_reason).toBe('tool_use');
    expect(first.content).toEqual([
      { type: 'tool_use', id: expect.any(String), name: 'weather', input: { city: 'Bergen' } },
    ]);
    const call = first.content[0] as Anthropic.ToolUseBlock;
    const second = await client.messages.create({
      ...hello,
      tools: [weatherTool],
      messages: [
        ask,
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'rain' }] },
      ],
    });
    expect(second.content).toEqual([{ type: 'text', text: 'Tool weather returned: rain' }]);
    expect(second.stop_reason).toBe('end_turn');
  });

  it('tools streamed: a tool_use block whose input arrives as input_json_delta', async () => {
    const stream = client.messages.stream({
      ...hello,
      messages: [{ role: 'user', content: 'tool:weather {"city":"Oslo"}' }],
      tools: [weatherTool],
      tool_choice: { type: 'any' },
    });
    const final = await stream.finalMessage();
    expect(final.stop_reason).toBe('tool_use');
    expect(final.content).toEqual([
      { type: 'tool_use', id: expect.any(String), name: 'weather', input: { city: 'Oslo' } },
    ]);
  });

  it('messages.countTokens estimates at four characters a token', async () => {
    const counted = await client.messages.countTokens({
      model: 'dev/echo',
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'hello there, how are you?' }],
    });
    // "Be brief.\nhello there, how are you?": 35 characters
    expect(counted).toEqual({ input_tokens: 9 });
  });

  it('a key in x-api-key, as Claude Code and the AI SDK send it, and a bearer token (authToken)', async () => {
    for (const credential of [{ xApiKey: pg.token }, { authToken: pg.token }]) {
      const message = await anthropicClient(pg.gw, credential).messages.create(hello);
      expect(message.content).toEqual([{ type: 'text', text: 'Echo: hello there' }]);
    }
  });
});

describe('errors in Anthropic shape, as the SDK classifies them', () => {
  it('a bad key is an AuthenticationError, in either header', async () => {
    for (const credential of [{ apiKey: 'stk_bad' }, { xApiKey: 'stk_bad' }, { authToken: 'not-a-key' }]) {
      const error = await anthropicClient(pg.gw, credential)
        .messages.create(hello)
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Anthropic.AuthenticationError);
      expect(error).toMatchObject({
        status: 401,
        type: 'authentication_error',
        errorCode: 'unauthenticated',
      });
      expect((error as APIError).requestID).toBeTruthy();
    }
  });

  it('no credential at all is a 401 too', async () => {
    const res = await fetch(`${pg.gw.url}/v1/ai/anthropic/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(hello),
    });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
  });

  it('an unknown model is a NotFoundError', async () => {
    const error = await client.messages.create({ ...hello, model: 'dev/nope' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.NotFoundError);
    expect(error).toMatchObject({ type: 'not_found_error', errorCode: 'model_not_found' });
  });

  it('a request without max_tokens is a BadRequestError naming the field', async () => {
    const { max_tokens: _, ...body } = hello;
    const error = await client.messages
      .create(body as Anthropic.MessageCreateParamsNonStreaming)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect(error).toMatchObject({ type: 'invalid_request_error', errorCode: 'validation_failed' });
    expect((error as APIError).details).toMatchObject({ param: 'max_tokens' });
  });

  it("Anthropic's own tools are refused on a model that is not Anthropic's", async () => {
    const error = await client.messages
      .create({ ...hello, tools: [{ type: 'web_search_20250305', name: 'web_search' }] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect((error as Error).message).toMatch(/anthropic\/\* models only/);
  });

  it('a wrong method is a 405 in Anthropic shape', async () => {
    const res = await pg.gw.api('GET', '/v1/ai/anthropic/v1/messages', { token: pg.token });
    expect(res.status).toBe(405);
    expect(res.json).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    expect(res.headers.get('allow')).toBe('POST');
  });

  it('other routes keep the one envelope, and take no credential from x-api-key', async () => {
    const res = await pg.gw.api('POST', '/v1/ai/chat/completions', { token: 'stk_bad', body: {} });
    expect(res.json).toEqual({ error: expect.objectContaining({ code: 'unauthenticated' }) });
    const keyed = await pg.gw.api('POST', '/v1/ai/chat/completions', {
      headers: { 'x-api-key': pg.token },
      body: { model: 'dev/echo', messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(keyed.status).toBe(401);
    expect(keyed.headers.get('request-id')).toBeNull();
  });

  it('Authorization wins over x-api-key when a client sends both', async () => {
    const res = await pg.gw.api('POST', '/v1/ai/anthropic/v1/messages', {
      token: pg.token,
      headers: { 'x-api-key': 'stk_some-other-key' },
      body: hello,
    });
    expect(res.status).toBe(200);
  });
});
