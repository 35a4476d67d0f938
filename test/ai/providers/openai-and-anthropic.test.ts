import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { builtinProviders } from '../../../services/ai/providers/index.ts';
import { UpstreamClient } from '../../../services/ai/upstream.ts';
import { expectApiError, startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { mockUpstream, sendJson, startSse } from '../../support/mock-upstream.ts';

const OPENAI_KEY = 'sk-openai-secret-0123456789abcdef';
const ANTHROPIC_KEY = 'sk-ant-secret-0123456789abcdef';
let openai: Awaited<ReturnType<typeof mockUpstream>>;
let anthropic: Awaited<ReturnType<typeof mockUpstream>>;
let gw: TestGateway;
let token: string;

beforeAll(async () => {
  openai = await mockUpstream((_req, res) => sendJson(res, 404, {}));
  anthropic = await mockUpstream((_req, res) => sendJson(res, 404, {}));
  gw = await startTestGateway({
    store: 'memory',
    logLevel: 'silent',
    ai: {
      upstream: new UpstreamClient({ timeoutMs: 2000, idleTimeoutMs: 2000, retries: 1, retryBaseMs: 5 }),
      providers: builtinProviders,
      jobPollMs: 10,
    },
    processEnv: {
      OPENAI_API_KEY: OPENAI_KEY,
      OPENAI_BASE_URL: `${openai.url}/v1`,
      ANTHROPIC_API_KEY: ANTHROPIC_KEY,
      ANTHROPIC_BASE_URL: anthropic.url,
    },
  });
  await gw.api('POST', '/v1/studios/create', { token: gw.adminKey, body: { name: 'P', studio_id: 'p' } });
  token = (await gw.api('POST', '/v1/studios/tokens/apply', { token: gw.adminKey, body: { studio_id: 'p' } }))
    .json.user_token;
});
beforeEach(() => {
  openai.requests.length = 0;
  anthropic.requests.length = 0;
});
afterAll(async () => {
  await gw?.close();
  await openai?.close();
  await anthropic?.close();
});

describe('openai provider: every modality', () => {
  it('image: asks for base64 and answers images', async () => {
    openai.setHandler((_req, res) =>
      sendJson(res, 200, { data: [{ b64_json: 'aW1n' }], output_format: 'png' }),
    );
    const res = await gw.api('POST', '/v1/ai/image', {
      token,
      body: { model: 'openai/gpt-image-1', prompt: 'a fox', size: '1024x1024' },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.json).toEqual({ images: [{ b64_json: 'aW1n', mime_type: 'image/png' }] });
    expect(openai.requests[0]!.path).toBe('/v1/images/generations');
    expect(JSON.parse(openai.requests[0]!.body.toString())).toEqual({
      model: 'gpt-image-1',
      prompt: 'a fox',
      n: 1,
      size: '1024x1024',
    });
    expect(openai.requests[0]!.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);
  });

  it('tts: binary audio comes back as base64 with its media type', async () => {
    openai.setHandler((_req, res) => {
      res.writeHead(200, { 'content-type': 'audio/mpeg' });
      res.end(Buffer.from([1, 2, 3, 4]));
    });
    const res = await gw.api('POST', '/v1/ai/tts', {
      token,
      body: { model: 'openai/tts-1', input: 'hello', voice: 'nova' },
    });
    expect(res.json).toEqual({
      audio: Buffer.from([1, 2, 3, 4]).toString('base64'),
      mime_type: 'audio/mpeg',
    });
    expect(JSON.parse(openai.requests[0]!.body.toString())).toEqual({
      model: 'tts-1',
      input: 'hello',
      voice: 'nova',
      response_format: 'mp3',
    });
  });

  it('asr: the audio goes up as multipart form data', async () => {
    openai.setHandler((_req, res) => sendJson(res, 200, { text: 'transcribed' }));
    const audio = Buffer.from('RIFF fake wav bytes');
    const res = await gw.api('POST', '/v1/ai/asr', {
      token,
      body: {
        model: 'openai/whisper-1',
        audio: audio.toString('base64'),
        mime_type: 'audio/wav',
        language: 'en',
      },
    });
    expect(res.json).toEqual({ text: 'transcribed', language: 'en' });
    const sent = openai.requests[0]!;
    expect(sent.path).toBe('/v1/audio/transcriptions');
    expect(sent.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    const form = await new Response(sent.body, {
      headers: { 'content-type': sent.headers['content-type']! },
    }).formData();
    expect(form.get('model')).toBe('whisper-1');
    expect(form.get('language')).toBe('en');
    expect(Buffer.from(await (form.get('file') as Blob).arrayBuffer())).toEqual(audio);
  });

  it('video: a job that starts, is polled and completes with the upstream content', async () => {
    let polls = 0;
    openai.setHandler((req, res) => {
      if (req.method === 'POST' && req.path === '/v1/videos')
        return sendJson(res, 200, { id: 'vid_1', status: 'queued', progress: 0 });
      if (req.path === '/v1/videos/vid_1')
        return sendJson(
          res,
          200,
          ++polls < 2
            ? { id: 'vid_1', status: 'in_progress', progress: 40 }
            : { id: 'vid_1', status: 'completed' },
        );
      if (req.path === '/v1/videos/vid_1/content') {
        res.writeHead(200, { 'content-type': 'video/mp4' });
        return res.end(Buffer.from('mp4 bytes'));
      }
      sendJson(res, 404, {});
    });
    const started = await gw.api('POST', '/v1/ai/video', {
      token,
      body: { model: 'openai/sora-2', prompt: 'waves', seconds: 4 },
    });
    expect(started.status).toBe(202);
    let job = started.json.job;
    for (let i = 0; i < 200 && job.status !== 'completed' && job.status !== 'failed'; i++) {
      await new Promise((r) => setTimeout(r, 10));
      job = (await gw.api('GET', `/v1/ai/jobs/get?id=${job.id}`, { token })).json.job;
    }
    expect(job).toMatchObject({ status: 'completed', result: { mime_type: 'video/mp4', bytes: 9 } });
    expect(JSON.parse(openai.requests[0]!.body.toString())).toEqual({
      model: 'sora-2',
      prompt: 'waves',
      seconds: '4',
    });
  });
});

describe('anthropic provider: translated both ways', () => {
  it('a chat with system, tools and a tool result becomes a Messages request, and the answer comes back in OpenAI form', async () => {
    anthropic.setHandler((_req, res) =>
      sendJson(res, 200, {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        content: [
          { type: 'text', text: 'Checking.' },
          { type: 'tool_use', id: 'toolu_2', name: 'get_weather', input: { city: 'Oslo' } },
        ],
        stop_reason: 'tool_use',
        usage: { input_tokens: 11, output_tokens: 7 },
      }),
    );
    const client = new OpenAI({ baseURL: `${gw.url}/v1/ai`, apiKey: token, maxRetries: 0 });
    const completion = await client.chat.completions.create({
      model: 'anthropic/claude-sonnet-4-5',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'weather in Bergen and Oslo?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'toolu_1',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Bergen"}' },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'toolu_1', content: 'rain' },
      ],
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'weather',
            parameters: { type: 'object', properties: { city: { type: 'string' } } },
          },
        },
      ],
      temperature: 0.2,
      stop: ['END'],
    });
    const sent = anthropic.requests[0]!;
    expect(sent.path).toBe('/v1/messages');
    expect(sent.headers['x-api-key']).toBe(ANTHROPIC_KEY);
    expect(sent.headers['anthropic-version']).toBe('2023-06-01');
    expect(JSON.parse(sent.body.toString())).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 4096,
      system: 'be brief',
      temperature: 0.2,
      stop_sequences: ['END'],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'weather in Bergen and Oslo?' }] },
        {
          role: 'assistant',
          content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Bergen' } }],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'rain' }] },
      ],
      tools: [
        {
          name: 'get_weather',
          description: 'weather',
          input_schema: { type: 'object', properties: { city: { type: 'string' } } },
        },
      ],
    });
    expect(completion.choices[0]).toMatchObject({
      finish_reason: 'tool_calls',
      message: {
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [
          {
            id: 'toolu_2',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Oslo"}' },
          },
        ],
      },
    });
    expect(completion.usage).toEqual({ prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 });
  });

  it('a stream of text and tool_use deltas becomes OpenAI chunks, usage included when asked', async () => {
    anthropic.setHandler((_req, res) => {
      const send = startSse(res);
      const ev = (type: string, data: object) => send(JSON.stringify({ type, ...data }), type);
      ev('message_start', { message: { id: 'm', usage: { input_tokens: 5, output_tokens: 0 } } });
      ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
      ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Hel' } });
      ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'lo' } });
      ev('content_block_stop', { index: 0 });
      ev('content_block_start', {
        index: 1,
        content_block: { type: 'tool_use', id: 'toolu_9', name: 'lookup', input: {} },
      });
      ev('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: '{"q":' } });
      ev('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: '"x"}' } });
      ev('content_block_stop', { index: 1 });
      ev('message_delta', { delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 9 } });
      ev('message_stop', {});
      res.end();
    });
    const client = new OpenAI({ baseURL: `${gw.url}/v1/ai`, apiKey: token, maxRetries: 0 });
    const stream = await client.chat.completions.create({
      model: 'anthropic/claude-haiku-4-5',
      messages: [{ role: 'user', content: 'hi' }],
      tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let args = '';
    let finish: string | null = null;
    let usage: unknown;
    const tools: { id?: string; name?: string }[] = [];
    for await (const chunk of stream) {
      if (chunk.usage) usage = chunk.usage;
      for (const choice of chunk.choices) {
        text += choice.delta.content ?? '';
        for (const t of choice.delta.tool_calls ?? []) {
          if (t.id) tools.push({ id: t.id, name: t.function?.name });
          args += t.function?.arguments ?? '';
        }
        finish = choice.finish_reason ?? finish;
      }
    }
    expect({ text, tools, args, finish, usage }).toEqual({
      text: 'Hello',
      tools: [{ id: 'toolu_9', name: 'lookup' }],
      args: '{"q":"x"}',
      finish: 'tool_calls',
      usage: { prompt_tokens: 5, completion_tokens: 9, total_tokens: 14 },
    });
    expect(JSON.parse(anthropic.requests[0]!.body.toString()).stream).toBe(true);
  });

  it('an error event mid-stream ends the stream with an error; an error status is a 502 without the key', async () => {
    anthropic.setHandler((_req, res) =>
      sendJson(res, 400, {
        type: 'error',
        error: { type: 'invalid_request_error', message: `bad key ${ANTHROPIC_KEY}` },
      }),
    );
    const res = await gw.api('POST', '/v1/ai/text', {
      token,
      body: { model: 'anthropic/claude-haiku-4-5', prompt: 'x' },
    });
    const error = expectApiError(res, 502, 'upstream_error');
    expect(error.message).toContain('bad key');
    expect(res.text).not.toContain(ANTHROPIC_KEY);

    anthropic.setHandler((_req, res) => {
      const send = startSse(res);
      send(
        JSON.stringify({ type: 'message_start', message: { usage: { input_tokens: 1 } } }),
        'message_start',
      );
      send(
        JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'par' } }),
        'content_block_delta',
      );
      send(
        JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }),
        'error',
      );
      res.end();
    });
    const stream = await fetch(`${gw.url}/v1/ai/stream`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'anthropic/claude-haiku-4-5', prompt: 'x' }),
    });
    const body = await stream.text();
    expect(body).toContain('event: delta\ndata: {"text":"par"}');
    expect(body).toMatch(/event: error\ndata: \{"error":\{.*"code":"upstream_error".*Overloaded/);
  });
});
