import { createHash } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  faults,
  gate,
  type Json,
  openAiMock,
  openAiStream,
  openAiWire,
  sendJson,
  type WireMock,
} from '../../support/mock-ai-upstreams.ts';
import { type ProviderGateway, startProviderGateway, waitForJob } from './support.ts';

const KEY = 'sk-proj-openai-test-key-0123456789abcdef';
let mock: WireMock;
let pg: ProviderGateway;

/** A completed job's content: its bytes, an allowed type, never sniffed, always an attachment. */
async function expectContent(job: Json, bytes: Buffer, type: string, extension: string) {
  const download = await fetch(`${pg.gw.url}${job.result.content_url}`, {
    headers: { authorization: `Bearer ${pg.token}` },
  });
  expect(Buffer.from(await download.arrayBuffer())).toEqual(bytes);
  expect(download.headers.get('content-type')).toBe(type);
  expect(download.headers.get('x-content-type-options')).toBe('nosniff');
  expect(download.headers.get('content-disposition')).toBe(`attachment; filename="${job.id}.${extension}"`);
}

beforeAll(async () => {
  mock = await openAiMock();
  pg = await startProviderGateway({ processEnv: { OPENAI_BASE_URL: `${mock.url}/v1/` } });
  await pg.setEnv('OPENAI_API_KEY', KEY);
});
beforeEach(() => mock.reset());
afterAll(async () => {
  await pg?.close();
  await mock?.close();
});

describe('openai: catalog', () => {
  it('env upsert of OPENAI_API_KEY makes its models callable at once, env remove takes them away', async () => {
    expect(await pg.userModelIds()).toEqual(
      expect.arrayContaining([
        'openai/gpt-4.1-mini',
        'openai/gpt-image-1',
        'openai/tts-1',
        'openai/whisper-1',
      ]),
    );
    await pg.removeEnv('OPENAI_API_KEY');
    expect((await pg.userModelIds()).filter((id) => id.startsWith('openai/'))).toEqual([]);
    const admin = (await pg.get('/v1/ai/models', pg.admin)).json.items;
    const models = admin.filter((m: { id: string }) => m.id.startsWith('openai/'));
    expect(models.length).toBeGreaterThanOrEqual(5);
    for (const m of models) expect(m).toMatchObject({ available: false, missing_env: ['OPENAI_API_KEY'] });
    expect(admin.find((m: { id: string }) => m.id === 'openai/sora-2')).toMatchObject({
      modalities: ['video'],
      default_modes: ['video'],
      env_requirements: [
        { key: 'OPENAI_API_KEY', required: true },
        { key: 'OPENAI_BASE_URL', required: false },
      ],
    });
    const refused = await pg.post('/v1/ai/chat/completions', {
      model: 'openai/gpt-4.1-mini',
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(refused.json.error.code).toBe('model_not_found');
    expect(mock.requests).toHaveLength(0);

    await pg.setEnv('OPENAI_API_KEY', KEY);
    expect(await pg.userModelIds()).toContain('openai/gpt-4.1-mini');
    const byModality = (await pg.get('/v1/ai/models')).json.items.filter((m: { id: string }) =>
      m.id.startsWith('openai/'),
    );
    for (const modality of ['text', 'stream', 'chat', 'image', 'tts', 'asr', 'video'])
      expect(byModality.some((m: { modalities: string[] }) => m.modalities.includes(modality))).toBe(true);
  });
});

describe('openai: chat', () => {
  it('chat/completions passes the body through but for model, and the answer back but for model', async () => {
    const answer = openAiWire.completion(
      {
        content: null,
        tool_calls: [
          { id: 'call_2', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } },
        ],
      },
      {
        logprobs: undefined,
        system_fingerprint: 'fp_mock',
        service_tier: 'default',
        usage: { prompt_tokens: 20, completion_tokens: 9, total_tokens: 29 },
      },
    );
    answer.choices[0]!.logprobs = { content: [{ token: 'x', logprob: -0.1, top_logprobs: [] }] } as never;
    mock.reply((_req, res) => sendJson(res, 200, answer));
    const request = {
      model: 'openai/gpt-4.1-mini',
      messages: [
        { role: 'developer', content: 'Answer with tools.' },
        { role: 'user', content: [{ type: 'text', text: 'Weather in Bergen, then Oslo?' }] },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Bergen"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'rain' },
      ],
      tools: [
        { type: 'function', function: { name: 'weather', parameters: { type: 'object' }, strict: true } },
      ],
      tool_choice: 'auto',
      parallel_tool_calls: false,
      response_format: { type: 'json_schema', json_schema: { name: 'w', schema: { type: 'object' } } },
      logprobs: true,
      top_logprobs: 2,
      seed: 42,
      max_tokens: 100,
      user: 'u-1',
    };
    const res = await pg.post('/v1/ai/chat/completions', { ...request, studio_id: 'p' });

    expect(res.status, res.text).toBe(200);
    expect(mock.requests).toHaveLength(1);
    expect(mock.requests[0]!.path).toBe('/v1/chat/completions');
    expect(mock.requests[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(mock.requests[0]!.headers['content-type']).toBe('application/json');
    expect(mock.body()).toEqual({ ...request, model: 'gpt-4.1-mini' });
    expect(res.json).toEqual({ ...JSON.parse(JSON.stringify(answer)), model: 'openai/gpt-4.1-mini' });
  });

  it('reasoning models get max_tokens as max_completion_tokens (through /v1/ai/text)', async () => {
    const res = await pg.post('/v1/ai/text', {
      model: 'openai/gpt-5-mini',
      prompt: 'hello there',
      system: 'be short',
      max_tokens: 50,
      temperature: 1,
    });
    expect(res.status, res.text).toBe(200);
    expect(mock.body()).toEqual({
      model: 'gpt-5-mini',
      messages: [
        { role: 'system', content: 'be short' },
        { role: 'user', content: 'hello there' },
      ],
      max_completion_tokens: 50,
      temperature: 1,
    });
    expect(res.json).toEqual({
      id: expect.stringMatching(/^msg_/),
      role: 'assistant',
      parts: [{ type: 'text', text: 'Echo: hello there' }],
      model: 'openai/gpt-5-mini',
      // The tokens charged: the mock says 2 read, fewer than "be short" and "hello there" come to
      // (17 non-blank characters: 4).
      usage: { input_tokens: 4, output_tokens: 3 },
      finish_reason: 'stop',
    });
  });

  it('a stream goes through chunk by chunk, tool-call deltas and usage included, then [DONE]', async () => {
    const chunks = [
      openAiWire.chunk({ role: 'assistant', content: null, refusal: null }),
      openAiWire.chunk({
        tool_calls: [
          { index: 0, id: 'call_9', type: 'function', function: { name: 'lookup', arguments: '' } },
        ],
      }),
      openAiWire.chunk({ tool_calls: [{ index: 0, function: { arguments: '{"q":' } }] }),
      openAiWire.chunk({ tool_calls: [{ index: 0, function: { arguments: '"x"}' } }] }),
      openAiWire.chunk({}, 'tool_calls'),
      openAiWire.usageChunk({ prompt_tokens: 4, completion_tokens: 6 }),
    ];
    const held = gate();
    mock.reply(openAiStream(chunks, { after: 0, wait: held.wait }));
    const request = {
      model: 'openai/gpt-4o',
      messages: [{ role: 'user', content: 'look x up' }],
      tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }],
      stream: true,
      stream_options: { include_usage: true },
    };
    const { response, events } = await pg.stream('/v1/ai/chat/completions', request);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);

    // The first chunk arrives while the mock still holds the rest.
    expect((await events.next())?.data).toEqual({ ...chunks[0], model: 'openai/gpt-4o' });
    held.open();
    const rest = await events.rest();
    expect(rest.map((e) => e.data)).toEqual([
      ...chunks.slice(1).map((c) => ({ ...c, model: 'openai/gpt-4o' })),
      '[DONE]',
    ]);
    expect(mock.body()).toEqual({ ...request, model: 'gpt-4o' });
    expect(mock.requests[0]!.headers.accept).toBe('text/event-stream');
  });

  it('the official client assembles a streamed answer (/v1/ai/stream too)', async () => {
    const stream = await pg.client().chat.completions.create({
      model: 'openai/gpt-4.1',
      messages: [{ role: 'user', content: 'one two three' }],
      stream: true,
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('Echo: one two three');

    const { events } = await pg.stream('/v1/ai/stream', { model: 'openai/gpt-4.1', prompt: 'a b' });
    const all = await events.rest();
    expect(mock.body(1)).toEqual({
      model: 'gpt-4.1',
      messages: [{ role: 'user', content: 'a b' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(all.slice(0, -1)).toEqual(
      ['Echo: ', 'a ', 'b'].map((text) => ({ event: 'delta', data: { text } })),
    );
    expect(all.at(-1)).toMatchObject({
      event: 'done',
      data: {
        message: { role: 'assistant', parts: [{ type: 'text', text: 'Echo: a b' }] },
        model: 'openai/gpt-4.1',
        usage: { input_tokens: 2, output_tokens: 3 },
        finish_reason: 'stop',
      },
    });
  });

  it('an {error} event mid-stream ends the stream with upstream_error, the key scrubbed', async () => {
    mock.reply(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(openAiWire.chunk({ role: 'assistant', content: 'par' }))}\n\n`);
      res.write(
        `data: ${JSON.stringify(openAiWire.error(`The server had an error (key ${KEY})`, 'server_error'))}\n\n`,
      );
      res.end();
    });
    const { events } = await pg.stream('/v1/ai/chat/completions', {
      model: 'openai/gpt-4.1-mini',
      messages: [{ role: 'user', content: 'x' }],
      stream: true,
    });
    const all = await events.rest();
    expect(all).toHaveLength(2);
    expect(all[0]!.data.choices[0].delta.content).toBe('par');
    expect(all[1]!.data.error).toMatchObject({ code: 'upstream_error', type: 'api_error' });
    expect(all[1]!.data.error.message).toContain('The server had an error');
    expect(JSON.stringify(all)).not.toContain(KEY);
  });
});

describe('openai: media', () => {
  it('image: POST /images/generations, base64 back with its media type (DALL·E asked for base64)', async () => {
    mock.reply((_req, res) =>
      sendJson(res, 200, {
        created: 1,
        data: [{ b64_json: 'aW1nMQ==' }, { b64_json: 'aW1nMg==' }],
        output_format: 'webp',
      }),
    );
    const res = await pg.post('/v1/ai/image', {
      model: 'openai/gpt-image-1',
      prompt: 'a fox',
      size: '1024x1024',
      n: 2,
    });
    expect(res.status, res.text).toBe(200);
    expect(res.json).toEqual({
      images: [
        { b64_json: 'aW1nMQ==', mime_type: 'image/webp' },
        { b64_json: 'aW1nMg==', mime_type: 'image/webp' },
      ],
    });
    expect(mock.requests[0]!.path).toBe('/v1/images/generations');
    expect(mock.body()).toEqual({ model: 'gpt-image-1', prompt: 'a fox', n: 2, size: '1024x1024' });

    mock.reply((_req, res) => sendJson(res, 200, { created: 1, data: [{ b64_json: 'ZGFsbGU=' }] }));
    const dalle = await pg.post('/v1/ai/image', { model: 'openai/dall-e-3', prompt: 'a fox' });
    expect(dalle.json).toEqual({ images: [{ b64_json: 'ZGFsbGU=', mime_type: 'image/png' }] });
    expect(mock.body()).toEqual({ model: 'dall-e-3', prompt: 'a fox', n: 1, response_format: 'b64_json' });
  });

  it('tts: POST /audio/speech, the binary body back as base64, the media type from the format', async () => {
    const audio = Buffer.from([0x52, 0x49, 0x46, 0x46, 0, 1, 2, 3, 255]);
    mock.reply((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.end(audio);
    });
    const res = await pg.post('/v1/ai/tts', {
      model: 'openai/gpt-4o-mini-tts',
      input: 'hello',
      voice: 'nova',
      format: 'wav',
    });
    expect(res.status, res.text).toBe(200);
    expect(res.json).toEqual({ audio: audio.toString('base64'), mime_type: 'audio/wav' });
    expect(mock.requests[0]!.path).toBe('/v1/audio/speech');
    expect(mock.body()).toEqual({
      model: 'gpt-4o-mini-tts',
      input: 'hello',
      voice: 'nova',
      response_format: 'wav',
    });

    const mp3 = await pg.post('/v1/ai/tts', { model: 'openai/tts-1', input: 'hi' });
    expect(mp3.json.mime_type).toBe('audio/mpeg');
    expect(mock.body()).toEqual({ model: 'tts-1', input: 'hi', voice: 'alloy', response_format: 'mp3' });
  });

  it('asr: POST /audio/transcriptions as multipart/form-data with the audio file', async () => {
    mock.reply((_req, res) => sendJson(res, 200, { text: 'transcribed words' }));
    const audio = Buffer.from('RIFF....WAVEfmt fake audio bytes \u0000\u00ff');
    const res = await pg.post('/v1/ai/asr', {
      model: 'openai/gpt-4o-transcribe',
      audio: audio.toString('base64'),
      mime_type: 'audio/wav',
      language: 'nb',
    });
    expect(res.status, res.text).toBe(200);
    expect(res.json).toEqual({ text: 'transcribed words', language: 'nb' });
    const sent = mock.requests[0]!;
    expect(sent.path).toBe('/v1/audio/transcriptions');
    expect(sent.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(sent.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    const form = await new Response(new Uint8Array(sent.body), {
      headers: { 'content-type': sent.headers['content-type']! },
    }).formData();
    expect([...form.keys()].sort()).toEqual(['file', 'language', 'model', 'response_format']);
    expect(form.get('model')).toBe('gpt-4o-transcribe');
    expect(form.get('language')).toBe('nb');
    expect(form.get('response_format')).toBe('json');
    const file = form.get('file') as File;
    expect(file.name).toBe('audio.wav');
    expect(file.type).toBe('audio/wav');
    expect(Buffer.from(await file.arrayBuffer())).toEqual(audio);
  });

  it('video: POST /videos, then GET /videos/{id} until completed, then its content: a job', async () => {
    const content = Buffer.from('\u0000\u0000\u0000\u0018ftypmp42 fake mp4 bytes');
    const finish = gate();
    let finished = false;
    void finish.wait.then(() => {
      finished = true;
    });
    mock.reply((req, res) => {
      if (req.method === 'POST' && req.path === '/v1/videos')
        return sendJson(res, 200, { id: 'video_1', object: 'video', status: 'queued', progress: 0 });
      if (req.method === 'GET' && req.path === '/v1/videos/video_1')
        return sendJson(
          res,
          200,
          finished
            ? { id: 'video_1', object: 'video', status: 'completed', progress: 100 }
            : { id: 'video_1', object: 'video', status: 'in_progress', progress: 40 },
        );
      if (req.method === 'GET' && req.path === '/v1/videos/video_1/content') {
        res.writeHead(200, { 'content-type': 'video/mp4' });
        return res.end(content);
      }
      sendJson(res, 404, openAiWire.error('no such route'));
    });
    const started = await pg.post('/v1/ai/video', {
      model: 'openai/sora-2',
      prompt: 'waves',
      seconds: 4,
      size: '1280x720',
    });
    expect(started.status, started.text).toBe(202);
    const running = await waitForJob(pg, started.json.job.id, (job) => job.progress === 40);
    expect(running.status).toBe('running');
    finish.open();
    const job = await waitForJob(
      pg,
      started.json.job.id,
      (j) => j.status === 'completed' || j.status === 'failed',
    );
    expect(job).toMatchObject({
      status: 'completed',
      progress: 100,
      result: {
        mime_type: 'video/mp4',
        bytes: content.length,
        sha256: createHash('sha256').update(content).digest('hex'),
      },
    });

    const created = mock.requests[0]!;
    expect(created.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    const form = await new Response(new Uint8Array(created.body), {
      headers: { 'content-type': created.headers['content-type']! },
    }).formData();
    expect(Object.fromEntries(form)).toEqual({
      model: 'sora-2',
      prompt: 'waves',
      seconds: '4',
      size: '1280x720',
    });
    expect(mock.requests.at(-1)!.path).toBe('/v1/videos/video_1/content');
    expect(mock.requests.every((r) => r.headers.authorization === `Bearer ${KEY}`)).toBe(true);

    await expectContent(job, content, 'video/mp4', 'mp4');
  });

  it('video: content the upstream calls text/html is served as an octet-stream attachment, never as a page', async () => {
    const page = Buffer.from('<html><script>fetch("/v1/studios/list")</script></html>');
    mock.reply((req, res) => {
      if (req.method === 'POST' && req.path === '/v1/videos')
        return sendJson(res, 200, { id: 'video_3', object: 'video', status: 'completed', progress: 100 });
      if (req.method === 'GET' && req.path === '/v1/videos/video_3/content') {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        return res.end(page);
      }
      sendJson(res, 404, openAiWire.error('no such route'));
    });
    const started = await pg.post('/v1/ai/video', { model: 'openai/sora-2', prompt: 'a page' });
    const job = await waitForJob(
      pg,
      started.json.job.id,
      (j) => j.status !== 'queued' && j.status !== 'running',
    );
    expect(job).toMatchObject({ status: 'completed', result: { mime_type: 'application/octet-stream' } });

    await expectContent(job, page, 'application/octet-stream', 'bin');
  });

  it('video: an upstream failure fails the job with its message', async () => {
    mock.reply((req, res) =>
      req.method === 'POST'
        ? sendJson(res, 200, { id: 'video_2', status: 'in_progress', progress: 5 })
        : sendJson(res, 200, {
            id: 'video_2',
            status: 'failed',
            error: { code: 'moderation_blocked', message: 'Your request was blocked by moderation.' },
          }),
    );
    const started = await pg.post('/v1/ai/video', { model: 'openai/sora-2-pro', prompt: 'x' });
    const job = await waitForJob(
      pg,
      started.json.job.id,
      (j) => j.status === 'failed' || j.status === 'completed',
    );
    expect(job).toMatchObject({ status: 'failed', error: 'Your request was blocked by moderation.' });
  });

  it('an upstream error on a media call is a 502 with the upstream message', async () => {
    mock.reply(faults.status(400, openAiWire.error('Invalid size 12x12 for gpt-image-1')));
    const res = await pg.post('/v1/ai/image', { model: 'openai/gpt-image-1', prompt: 'x', size: '12x12' });
    expect(res.status).toBe(502);
    expect(res.json.error).toMatchObject({ code: 'upstream_error', details: { upstream_status: 400 } });
    expect(res.json.error.message).toContain('Invalid size 12x12 for gpt-image-1');
  });
});
