import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectApiError, startTestGateway, type TestGateway } from '../../support/gateway.ts';

// The official `openai` client's Responses API against the gateway, unchanged, on dev/echo: a model
// without a Responses API of its own, answered through chat completions.

let gw: TestGateway;
let token: string;
let otherToken: string;

const client = (apiKey = token) => new OpenAI({ baseURL: `${gw.url}/v1/ai`, apiKey, maxRetries: 0 });

beforeAll(async () => {
  gw = await startTestGateway({ store: 'memory', logLevel: 'silent' });
  const tokenOf = async (studio: string) => {
    await gw.api('POST', '/v1/studios/create', {
      token: gw.adminKey,
      body: { name: studio, studio_id: studio },
    });
    return (
      await gw.api('POST', '/v1/studios/tokens/apply', { token: gw.adminKey, body: { studio_id: studio } })
    ).json.user_token as string;
  };
  token = await tokenOf('acme');
  otherToken = await tokenOf('other');
});
afterAll(() => gw?.close());

const weather = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'The weather in a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  strict: false,
};

describe('responses.create', () => {
  it('answers a string input with a message, usage and the model asked for', async () => {
    const response = await client().responses.create({ model: 'dev/echo', input: 'hello gateway' });
    expect(response).toMatchObject({
      id: expect.stringMatching(/^resp_[0-9a-f]{24}$/),
      object: 'response',
      status: 'completed',
      model: 'dev/echo',
      error: null,
      incomplete_details: null,
      previous_response_id: null,
      store: true,
      output: [
        {
          type: 'message',
          id: expect.stringMatching(/^msg_/),
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: 'Echo: hello gateway', annotations: [] }],
        },
      ],
      usage: {
        input_tokens: 2,
        output_tokens: 3,
        total_tokens: 5,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens_details: { reasoning_tokens: 0 },
      },
    });
    expect(response.output_text).toBe('Echo: hello gateway');
  });

  it('reads instructions and message items with content parts', async () => {
    const response = await client().responses.create({
      model: 'dev/echo',
      instructions: 'be brief',
      input: [
        { role: 'user', content: 'first' },
        { type: 'message', role: 'assistant', content: 'Echo: first' },
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'second ' },
            { type: 'input_text', text: 'part' },
          ],
        },
      ],
    });
    expect(response.output_text).toBe('Echo: second part');
    expect(response.instructions).toBe('be brief');
    // every message was read: be brief (2) + first (1) + Echo: first (2) + second part (2)
    expect(response.usage?.input_tokens).toBe(7);
  });

  it('max_output_tokens cuts the answer short: incomplete, for max_output_tokens', async () => {
    const response = await client().responses.create({
      model: 'dev/echo',
      input: 'one two three four',
      max_output_tokens: 2,
    });
    expect(response.status).toBe('incomplete');
    expect(response.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect(response.output_text).toBe('Echo: one ');
  });

  it('errors reach the client as OpenAI errors', async () => {
    const error = await client()
      .responses.create({ model: 'no/such-model', input: 'x' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    expect((error as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('model_not_found');
  });

  it('hosted tools cannot reach a model answered through chat: 400 before any generation', async () => {
    const res = await gw.api('POST', '/v1/ai/responses', {
      token,
      body: { model: 'dev/echo', input: 'x', tools: [{ type: 'web_search' }] },
    });
    expect(expectApiError(res, 400, 'validation_failed').message).toMatch(/web_search.*chat completions/);
  });
});

describe('function calls', () => {
  it('a call, its output sent back as a function_call_output item, and the answer that uses it', async () => {
    const first = await client().responses.create({
      model: 'dev/echo',
      input: 'weather? tool:get_weather {"city":"Paris"}',
      tools: [weather],
    });
    expect(first.output).toEqual([
      {
        type: 'function_call',
        id: expect.stringMatching(/^fc_/),
        call_id: expect.stringMatching(/^call_/),
        name: 'get_weather',
        arguments: '{"city":"Paris"}',
        status: 'completed',
      },
    ]);
    const call = first.output[0]!;
    if (call.type !== 'function_call') throw new Error('expected a function call');

    // The client keeps the conversation itself.
    const second = await client().responses.create({
      model: 'dev/echo',
      input: [
        { role: 'user', content: 'weather? tool:get_weather {"city":"Paris"}' },
        call,
        { type: 'function_call_output', call_id: call.call_id, output: 'sunny, 21 °C' },
      ],
      tools: [weather],
    });
    expect(second.output_text).toBe('Tool get_weather returned: sunny, 21 °C');

    // The gateway keeps it: only the output goes back.
    const continued = await client().responses.create({
      model: 'dev/echo',
      previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: call.call_id, output: 'rain' }],
      tools: [weather],
    });
    expect(continued.output_text).toBe('Tool get_weather returned: rain');
    expect(continued.previous_response_id).toBe(first.id);
  });
});

describe('previous_response_id and retrieve', () => {
  it('a conversation continued past the body limit is refused (413), the gateway staying quick', async () => {
    // Responses of 5 MiB of input each: six continue one another; the seventh would make 35 MiB,
    // past the 32 MiB a request may carry.
    const big = 'word '.repeat((5 * 1024 * 1024) / 5);
    const respond = (previous?: string) =>
      gw.api('POST', '/v1/ai/responses', {
        token,
        body: {
          model: 'dev/echo',
          input: big,
          max_output_tokens: 16,
          ...(previous ? { previous_response_id: previous } : {}),
        },
      });
    let previous: string | undefined;
    for (let i = 0; i < 6; i++) {
      const res = await respond(previous);
      expect(res.status, res.text).toBe(200);
      previous = res.json.id;
    }
    const started = performance.now();
    const [refused, health] = await Promise.all([respond(previous), gw.api('GET', '/health')]);
    const error = expectApiError(refused, 413, 'payload_too_large');
    expect(error.param).toBe('previous_response_id');
    expect(error.message).toContain(
      'the conversation and this input come to more than the 32 MiB a request may carry',
    );
    expect(health.status).toBe(200);
    expect(performance.now() - started).toBeLessThan(5_000);
  }, 120_000);

  it('continues a conversation read back from the log, response after response', async () => {
    const one = await client().responses.create({ model: 'dev/echo', input: 'alpha', instructions: 'x y z' });
    const two = await client().responses.create({
      model: 'dev/echo',
      input: 'beta',
      previous_response_id: one.id,
    });
    const three = await client().responses.create({
      model: 'dev/echo',
      input: 'gamma',
      previous_response_id: two.id,
    });
    expect(three.output_text).toBe('Echo: gamma');
    // alpha, Echo: alpha, beta, Echo: beta, gamma; the first instructions are not carried over
    expect(three.usage?.input_tokens).toBe(7);
  });

  it('a continued conversation is charged for every earlier item the model reads', async () => {
    // dev/echo counts one token a word: 4,000 characters without a space are one word to it, and
    // at least 1,000 tokens to the gateway, which charges the larger.
    const first = await client().responses.create({ model: 'dev/echo', input: 'x'.repeat(4_000) });
    expect(first.usage?.input_tokens).toBe(1);
    const stream = await client().responses.create({
      model: 'dev/echo',
      input: 'y',
      previous_response_id: first.id,
      stream: true,
    });
    let charged: number | undefined;
    for await (const event of stream) {
      if (event.type === 'response.completed') charged = event.response.usage?.input_tokens;
    }
    // non-blank characters read, four a token: the first input, its echo ("Echo:" and the 4,000), "y"
    expect(charged).toBe(Math.floor((4_000 + 4_005 + 1) / 4));
  });

  it('retrieve answers the response as it was created', async () => {
    const created = await client().responses.create({ model: 'dev/echo', input: 'keep me' });
    expect(await client().responses.retrieve(created.id)).toEqual(created);
  });

  it('an unknown id is a 404, for retrieve and for previous_response_id', async () => {
    const missing = 'resp_000000000000000000000000';
    const retrieved = await client()
      .responses.retrieve(missing)
      .catch((e: unknown) => e);
    expect(retrieved).toBeInstanceOf(OpenAI.NotFoundError);
    const continued = await gw.api('POST', '/v1/ai/responses', {
      token,
      body: { model: 'dev/echo', input: 'x', previous_response_id: missing },
    });
    expect(expectApiError(continued, 404, 'not_found').param).toBe('previous_response_id');
    for (const odd of ['not-an-id', 'resp_', `resp_${'f'.repeat(200)}`])
      expectApiError(await gw.api('GET', `/v1/ai/responses/${odd}`, { token }), 404, 'not_found');
  });

  it("another studio's response does not exist for its tokens", async () => {
    const created = await client().responses.create({ model: 'dev/echo', input: 'private' });
    expectApiError(
      await gw.api('GET', `/v1/ai/responses/${created.id}`, { token: otherToken }),
      404,
      'not_found',
    );
    const continued = await gw.api('POST', '/v1/ai/responses', {
      token: otherToken,
      body: { model: 'dev/echo', input: 'x', previous_response_id: created.id },
    });
    expectApiError(continued, 404, 'not_found');
    // the admin sees every studio's
    expect((await gw.api('GET', `/v1/ai/responses/${created.id}`, { token: gw.adminKey })).json.id).toBe(
      created.id,
    );
  });

  it('store: false keeps nothing: the id cannot be retrieved or continued', async () => {
    const created = await client().responses.create({ model: 'dev/echo', input: 'forget me', store: false });
    expect(created).toMatchObject({ store: false });
    expectApiError(await gw.api('GET', `/v1/ai/responses/${created.id}`, { token }), 404, 'not_found');
    const stored = await gw.running.ctx.events.readStream(`response-${created.id}`);
    expect(stored).toEqual([]);
  });

  it('a response is one event of its own stream, with its studio, input and output', async () => {
    const created = await client().responses.create({ model: 'dev/echo', input: 'logged' });
    const [event, ...rest] = await gw.running.ctx.events.readStream(`response-${created.id}`);
    expect(rest).toEqual([]);
    expect(event).toMatchObject({
      type: 'ResponseCreated',
      data: {
        studioId: 'acme',
        native: false,
        input: [{ type: 'message', role: 'user', content: 'logged' }],
        response: { id: created.id, output: created.output, usage: created.usage },
      },
      metadata: { actor: expect.stringMatching(/^token:/) },
    });
  });

  it('an item_reference to an item of a stored response is that item', async () => {
    const first = await client().responses.create({ model: 'dev/echo', input: 'remember' });
    const reply = first.output[0]!;
    const next = await client().responses.create({
      model: 'dev/echo',
      input: [
        { role: 'user', content: 'remember' },
        { type: 'item_reference', id: reply.id! },
        { role: 'user', content: 'and this' },
      ],
    });
    // remember (1) + Echo: remember (2) + and this (2)
    expect(next.usage?.input_tokens).toBe(5);
    const unknown = await gw.api('POST', '/v1/ai/responses', {
      token: otherToken,
      body: { model: 'dev/echo', input: [{ type: 'item_reference', id: reply.id }] },
    });
    expectApiError(unknown, 404, 'not_found');
  });
});

describe('streaming', () => {
  it('stream: true sends the typed events in order, numbered, ending with response.completed', async () => {
    const stream = await client().responses.create({ model: 'dev/echo', input: 'one two', stream: true });
    const events = [];
    for await (const event of stream) events.push(event);
    expect(events.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const deltas = events.flatMap((e) => (e.type === 'response.output_text.delta' ? [e.delta] : []));
    expect(deltas).toEqual(['Echo: ', 'one ', 'two']);
    const created = events[0]!;
    const completed = events.at(-1)!;
    if (created.type !== 'response.created' || completed.type !== 'response.completed')
      throw new Error('order');
    expect(created.response).toMatchObject({ status: 'in_progress', output: [], model: 'dev/echo' });
    expect(completed.response).toMatchObject({
      id: created.response.id,
      status: 'completed',
      output: [{ type: 'message', content: [{ type: 'output_text', text: 'Echo: one two' }] }],
      usage: { input_tokens: 2, output_tokens: 3, total_tokens: 5 },
    });
    // the streamed response is stored as it completed
    expect(await client().responses.retrieve(created.response.id)).toMatchObject({
      output: completed.response.output,
      usage: completed.response.usage,
    });
  });

  it('responses.stream: text deltas as they come, then the final response', async () => {
    const deltas: string[] = [];
    const stream = client()
      .responses.stream({ model: 'dev/echo', input: 'streamed words here' })
      .on('response.output_text.delta', (event) => deltas.push(event.delta));
    const final = await stream.finalResponse();
    expect(deltas.join('')).toBe('Echo: streamed words here');
    expect(final.output_text).toBe('Echo: streamed words here');
    expect(final.status).toBe('completed');
  });

  it('a streamed function call: its item, its argument deltas, then its output sent back', async () => {
    const stream = client().responses.stream({
      model: 'dev/echo',
      input: 'tool:get_weather {"city":"Oslo"}',
      tools: [weather],
    });
    const types: string[] = [];
    let args = '';
    stream.on('event', (event) => types.push(event.type));
    stream.on('response.function_call_arguments.delta', (event) => {
      args += event.delta;
    });
    const final = await stream.finalResponse();
    expect(types).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(args).toBe('{"city":"Oslo"}');
    const call = final.output[0]!;
    expect(call).toMatchObject({ type: 'function_call', name: 'get_weather', arguments: '{"city":"Oslo"}' });
    if (call.type !== 'function_call') throw new Error('expected a function call');
    const answer = await client()
      .responses.stream({
        model: 'dev/echo',
        previous_response_id: final.id,
        input: [{ type: 'function_call_output', call_id: call.call_id, output: 'snow' }],
        tools: [weather],
      })
      .finalResponse();
    expect(answer.output_text).toBe('Tool get_weather returned: snow');
  });

  it('max_output_tokens in a stream: response.incomplete', async () => {
    const stream = await client().responses.create({
      model: 'dev/echo',
      input: 'a b c d e',
      max_output_tokens: 2,
      stream: true,
    });
    let last: { type: string; response?: unknown } | undefined;
    for await (const event of stream) last = event;
    expect(last).toMatchObject({
      type: 'response.incomplete',
      response: { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } },
    });
  });
});

describe('stored in the log', () => {
  it('a retrieve asking for a stream is refused: a stored response is answered as JSON', async () => {
    const created = await client().responses.create({ model: 'dev/echo', input: 'json only' });
    const res = await gw.api('GET', `/v1/ai/responses/${created.id}?stream=true`, { token });
    expect(expectApiError(res, 400, 'validation_failed').param).toBe('stream');
  });

  it('after a restart (SQLite) a response is read back from the log, retrieved and continued', async () => {
    const durable = await startTestGateway({ store: 'sqlite', logLevel: 'silent' });
    try {
      await durable.api('POST', '/v1/studios/create', {
        token: durable.adminKey,
        body: { name: 'd', studio_id: 'd' },
      });
      const issued = await durable.api('POST', '/v1/studios/tokens/apply', {
        token: durable.adminKey,
        body: { studio_id: 'd' },
      });
      const open = () =>
        new OpenAI({ baseURL: `${durable.url}/v1/ai`, apiKey: issued.json.user_token, maxRetries: 0 });
      const first = await open().responses.create({ model: 'dev/echo', input: 'before \u0000 the restart' });
      await durable.restart();
      expect(await open().responses.retrieve(first.id)).toEqual(first);
      const next = await open().responses.create({
        model: 'dev/echo',
        input: 'after',
        previous_response_id: first.id,
      });
      expect(next.output_text).toBe('Echo: after');
      // before, NUL, the, restart (4); Echo: and those (5); after (1): the NUL came back whole
      expect(next.usage?.input_tokens).toBe(10);
    } finally {
      await durable.close();
    }
  });
});
