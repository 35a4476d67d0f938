import { createHash } from 'node:crypto';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../../shared/testing/wait.ts';
import { expectApiError, startTestGateway, type TestGateway } from '../support/gateway.ts';

let gw: TestGateway;
let token: string;
let otherToken: string;

async function sse(path: string, body: unknown, auth = token): Promise<EventSourceMessage[]> {
  const res = await fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${auth}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const events: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (e) => events.push(e) });
  parser.feed(await res.text());
  return events;
}

beforeAll(async () => {
  gw = await startTestGateway({ store: 'memory', logLevel: 'silent' });
  const admin = gw.adminKey;
  for (const id of ['acme', 'other']) {
    await gw.api('POST', '/v1/studios/create', { token: admin, body: { name: id, studio_id: id } });
  }
  token = (await gw.api('POST', '/v1/studios/tokens/apply', { token: admin, body: { studio_id: 'acme' } }))
    .json.user_token;
  otherToken = (
    await gw.api('POST', '/v1/studios/tokens/apply', { token: admin, body: { studio_id: 'other' } })
  ).json.user_token;
});
afterAll(() => gw?.close());

describe('the official openai client against the gateway, unchanged', () => {
  const client = () => new OpenAI({ baseURL: `${gw.url}/v1/ai`, apiKey: token, maxRetries: 0 });

  it('models.list shows the callable dev models', async () => {
    const ids = (await client().models.list()).data.map((m) => m.id);
    expect(ids).toEqual(expect.arrayContaining(['dev/echo', 'dev/image', 'dev/tts', 'dev/asr', 'dev/video']));
  });

  it('chat.completions.create, plain', async () => {
    const completion = await client().chat.completions.create({
      model: 'dev/echo',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'hello gateway' },
      ],
    });
    expect(completion.object).toBe('chat.completion');
    expect(completion.model).toBe('dev/echo');
    expect(completion.choices[0]?.message).toMatchObject({
      role: 'assistant',
      content: 'Echo: hello gateway',
    });
    expect(completion.choices[0]?.finish_reason).toBe('stop');
    expect(completion.usage).toEqual({ prompt_tokens: 4, completion_tokens: 3, total_tokens: 7 });
  });

  it('chat.completions.create, streamed chunk by chunk and ended by [DONE]', async () => {
    const stream = await client().chat.completions.create({
      model: 'dev/echo',
      messages: [{ role: 'user', content: 'one two three' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const deltas: string[] = [];
    let usage: unknown;
    for await (const chunk of stream) {
      expect(chunk.object).toBe('chat.completion.chunk');
      for (const choice of chunk.choices) if (choice.delta.content) deltas.push(choice.delta.content);
      if (chunk.usage) usage = chunk.usage;
    }
    expect(deltas).toEqual(['Echo: ', 'one ', 'two ', 'three']);
    expect(usage).toEqual({ prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 });
  });

  it('a tool call, its result, and the answer that uses it', async () => {
    const tools = [
      {
        type: 'function' as const,
        function: { name: 'get_time', parameters: { type: 'object', properties: {} } },
      },
    ];
    const first = await client().chat.completions.create({
      model: 'dev/echo',
      messages: [{ role: 'user', content: 'what time is it? tool:get_time {"tz":"UTC"}' }],
      tools,
    });
    const call = first.choices[0]?.message.tool_calls?.[0];
    expect(first.choices[0]?.finish_reason).toBe('tool_calls');
    expect(call).toMatchObject({
      type: 'function',
      function: { name: 'get_time', arguments: '{"tz":"UTC"}' },
    });
    if (call?.type !== 'function') throw new Error('expected a function call');

    const second = await client().chat.completions.create({
      model: 'dev/echo',
      messages: [
        { role: 'user', content: 'what time is it? tool:get_time {"tz":"UTC"}' },
        { role: 'assistant', content: null, tool_calls: [call] },
        { role: 'tool', tool_call_id: call.id, content: '12:00' },
      ],
      tools,
    });
    expect(second.choices[0]?.message.content).toBe('Tool get_time returned: 12:00');
  });

  it('a streamed tool call arrives as tool-call deltas the client can assemble', async () => {
    const stream = await client().chat.completions.create({
      model: 'dev/echo',
      messages: [{ role: 'user', content: 'tool:lookup {"q":"x"}' }],
      tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }],
      stream: true,
    });
    let name = '';
    let args = '';
    let finish: string | null = null;
    for await (const chunk of stream) {
      for (const choice of chunk.choices) {
        for (const t of choice.delta.tool_calls ?? []) {
          name += t.function?.name ?? '';
          args += t.function?.arguments ?? '';
        }
        finish = choice.finish_reason ?? finish;
      }
    }
    expect({ name, args, finish }).toEqual({ name: 'lookup', args: '{"q":"x"}', finish: 'tool_calls' });
  });

  it('errors reach the client as OpenAI errors', async () => {
    const error = await client()
      .chat.completions.create({ model: 'no/such-model', messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    expect((error as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('model_not_found');
  });
});

describe('generation in every modality', () => {
  it('text returns an assistant message with model, usage and finish_reason', async () => {
    const res = await gw.api('POST', '/v1/ai/text', {
      token,
      body: { model: 'dev/echo', prompt: 'a b c', system: 'sys', max_tokens: 2 },
    });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      id: expect.stringMatching(/^msg_/),
      role: 'assistant',
      parts: [{ type: 'text', text: 'Echo: a ' }],
      model: 'dev/echo',
      usage: { input_tokens: 4, output_tokens: 2 },
      // max_tokens cut the echo short
      finish_reason: 'length',
    });
  });

  it('stream sends delta events then done with the whole message', async () => {
    const events = await sse('/v1/ai/stream', { model: 'dev/echo', prompt: 'x y' });
    expect(events.map((e) => e.event)).toEqual(['delta', 'delta', 'delta', 'done']);
    expect(events.slice(0, 3).map((e) => JSON.parse(e.data).text)).toEqual(['Echo: ', 'x ', 'y']);
    const done = JSON.parse(events.at(-1)!.data);
    expect(done.message.parts).toEqual([{ type: 'text', text: 'Echo: x y' }]);
    expect(done.usage).toEqual({ input_tokens: 2, output_tokens: 3 });
  });

  it('image returns PNGs', async () => {
    const res = await gw.api('POST', '/v1/ai/image', {
      token,
      body: { model: 'dev/image', prompt: 'a cat', n: 2 },
    });
    expect(res.status).toBe(200);
    expect(res.json.images).toHaveLength(2);
    for (const image of res.json.images) {
      expect(image.mime_type).toBe('image/png');
      expect(Buffer.from(image.b64_json, 'base64').subarray(0, 8)).toEqual(
        Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      );
    }
    expect(res.json.images[0].b64_json).not.toBe(res.json.images[1].b64_json);
  });

  it('tts audio transcribes back to its text through asr', async () => {
    const speech = await gw.api('POST', '/v1/ai/tts', {
      token,
      body: { model: 'dev/tts', input: 'hello studio' },
    });
    expect(speech.status).toBe(200);
    expect(speech.json.mime_type).toBe('audio/wav');
    expect(Buffer.from(speech.json.audio, 'base64').toString('ascii', 0, 4)).toBe('RIFF');
    const text = await gw.api('POST', '/v1/ai/asr', {
      token,
      body: { model: 'dev/asr', audio: speech.json.audio, mime_type: 'audio/wav', language: 'en' },
    });
    expect(text.status).toBe(200);
    expect(text.json).toEqual({ text: 'hello studio', language: 'en' });
  });

  it('video is a job: 202, then jobs/get until completed, then its content', async () => {
    const started = await gw.api('POST', '/v1/ai/video', {
      token,
      body: { model: 'dev/video', prompt: 'waves' },
    });
    expect(started.status).toBe(202);
    expect(started.json.job).toMatchObject({
      id: expect.stringMatching(/^job_/),
      status: 'queued',
      model: 'dev/video',
    });
    const id = started.json.job.id;
    let job = { status: '', result: { sha256: '', bytes: 0, content_url: '' } };
    await waitUntil(
      async () => {
        job = (await gw.api('GET', `/v1/ai/jobs/get?id=${id}`, { token })).json.job;
        return job.status === 'completed';
      },
      'the video job completes',
      2_000,
    );
    const content = await fetch(`${gw.url}${job.result.content_url}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(content.headers.get('content-type')).toBe('image/apng');
    const bytes = Buffer.from(await content.arrayBuffer());
    expect(bytes.length).toBe(job.result.bytes);
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(job.result.sha256);

    // Another studio cannot see it, and cannot tell it exists.
    expectApiError(await gw.api('GET', `/v1/ai/jobs/get?id=${id}`, { token: otherToken }), 404, 'not_found');
  });
});

describe('bad input gets a clear 4xx', () => {
  it.each([
    ['an unknown model', '/v1/ai/text', { model: 'nope/x', prompt: 'p' }, 404, 'model_not_found'],
    [
      'a model without that modality',
      '/v1/ai/text',
      { model: 'dev/image', prompt: 'p' },
      404,
      'model_not_found',
    ],
    ['an empty prompt', '/v1/ai/text', { model: 'dev/echo', prompt: '' }, 400, 'validation_failed'],
    ['a missing model', '/v1/ai/image', { prompt: 'p' }, 400, 'validation_failed'],
    ['a wrong type', '/v1/ai/text', { model: 'dev/echo', prompt: 5 }, 400, 'validation_failed'],
    [
      'audio that is not base64',
      '/v1/ai/asr',
      { model: 'dev/asr', audio: 'no*base64!', mime_type: 'audio/wav' },
      400,
      'validation_failed',
    ],
    [
      'a studio_id of another studio',
      '/v1/ai/text',
      { model: 'dev/echo', prompt: 'p', studio_id: 'other' },
      403,
      'studio_mismatch',
    ],
    [
      'chat with no messages',
      '/v1/ai/chat/completions',
      { model: 'dev/echo', messages: [] },
      400,
      'validation_failed',
    ],
  ])('%s', async (_name, path, body, status, code) => {
    expectApiError(await gw.api('POST', path, { token, body }), status, code);
  });

  it('a body over 1 MiB is 413', async () => {
    const res = await gw.api('POST', '/v1/ai/text', {
      token,
      body: { model: 'dev/echo', prompt: 'x'.repeat(1024 * 1024) },
    });
    expectApiError(res, 413, 'payload_too_large');
  });

  it('asr accepts audio above 1 MiB (up to its own limit)', async () => {
    const audio = Buffer.alloc(2 * 1024 * 1024, 7).toString('base64');
    const res = await gw.api('POST', '/v1/ai/asr', {
      token,
      body: { model: 'dev/asr', audio, mime_type: 'audio/wav' },
    });
    expect(res.status).toBe(200);
    expect(res.json.text).toBe(`[${2 * 1024 * 1024} bytes of audio/wav]`);
  });

  it('generation is for users: guests get 401, the admin key 403', async () => {
    expectApiError(
      await gw.api('POST', '/v1/ai/text', { body: { model: 'dev/echo', prompt: 'p' } }),
      401,
      'unauthenticated',
    );
    expectApiError(
      await gw.api('POST', '/v1/ai/text', { token: gw.adminKey, body: { model: 'dev/echo', prompt: 'p' } }),
      403,
      'forbidden',
    );
  });

  it('a paused studio cannot generate, and can again once activated', async () => {
    const admin = gw.adminKey;
    await gw.api('POST', '/v1/studios/pause', { token: admin, body: { studio_id: 'other' } });
    const paused = await gw.api('POST', '/v1/ai/text', {
      token: otherToken,
      body: { model: 'dev/echo', prompt: 'p' },
    });
    expectApiError(paused, 403, 'studio_paused');
    await gw.api('POST', '/v1/studios/activate', { token: admin, body: { studio_id: 'other' } });
    const again = await gw.api('POST', '/v1/ai/text', {
      token: otherToken,
      body: { model: 'dev/echo', prompt: 'p' },
    });
    expect(again.status).toBe(200);
  });
});
