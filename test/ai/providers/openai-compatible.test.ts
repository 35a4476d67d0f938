import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  gate,
  openAiMock,
  openAiStream,
  openAiWire,
  sendJson,
  type WireMock,
} from '../../support/mock-ai-upstreams.ts';
import { type ProviderGateway, startProviderGateway } from './support.ts';

const KEY = 'sk-compat-secret-key-0123456789';
let mock: WireMock;
let pg: ProviderGateway;

beforeAll(async () => {
  mock = await openAiMock();
  pg = await startProviderGateway({});
  await pg.setEnv('OPENAI_COMPATIBLE_BASE_URL', `${mock.url}/v1`);
  await pg.setEnv('OPENAI_COMPATIBLE_MODELS', 'llama3.1, qwen2.5:7b,,llama3.1');
  await pg.setEnv('OPENAI_COMPATIBLE_API_KEY', KEY);
});
beforeEach(() => mock.reset());
afterAll(async () => {
  await pg?.close();
  await mock?.close();
});

const compatIds = async () => (await pg.userModelIds()).filter((id) => id.startsWith('compat/'));

describe('openai-compatible: catalog from env', () => {
  it('models are the names in OPENAI_COMPATIBLE_MODELS; they follow env upsert/remove at once', async () => {
    expect(await compatIds()).toEqual(['compat/llama3.1', 'compat/qwen2.5:7b']);
    const listed = (await pg.client().models.list()).data.map((m) => m.id);
    expect(listed).toEqual(expect.arrayContaining(['compat/llama3.1', 'compat/qwen2.5:7b']));

    await pg.setEnv('OPENAI_COMPATIBLE_MODELS', 'mistral');
    expect(await compatIds()).toEqual(['compat/mistral']);

    await pg.removeEnv('OPENAI_COMPATIBLE_BASE_URL');
    expect(await compatIds()).toEqual([]);
    const admin = (await pg.get('/v1/ai/models', pg.admin)).json.items.find(
      (m: { id: string }) => m.id === 'compat/mistral',
    );
    expect(admin).toMatchObject({
      available: false,
      missing_env: ['OPENAI_COMPATIBLE_BASE_URL'],
      modalities: ['text', 'stream', 'chat'],
      tags: ['openai-compatible'],
    });

    await pg.setEnv('OPENAI_COMPATIBLE_BASE_URL', `${mock.url}/v1`);
    await pg.setEnv('OPENAI_COMPATIBLE_MODELS', 'llama3.1, qwen2.5:7b,,llama3.1');
    expect(await compatIds()).toEqual(['compat/llama3.1', 'compat/qwen2.5:7b']);
  });
});

describe('openai-compatible: bodies pass through', () => {
  it('only model changes on the way up, and on the way down; vendor fields survive', async () => {
    const answer = {
      ...openAiWire.completion({ content: '{"ok":true}' }, { model: 'qwen2.5:7b' }),
      x_groq: { id: 'req_1' },
      system_fingerprint: 'fp_local',
    };
    answer.choices[0]!.logprobs = { content: [{ token: '{', logprob: -0.01, top_logprobs: [] }] } as never;
    mock.reply((_req, res) => sendJson(res, 200, answer));
    const request = {
      model: 'compat/qwen2.5:7b',
      messages: [
        { role: 'system', content: 'JSON only' },
        { role: 'user', content: 'ok?', name: 'ann' },
      ],
      response_format: { type: 'json_object' },
      logprobs: true,
      top_logprobs: 1,
      seed: 7,
      repetition_penalty: 1.1,
      min_p: 0.05,
      tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }],
      tool_choice: 'none',
      stream: false,
    };
    const res = await pg.post('/v1/ai/chat/completions', request);
    expect(res.status, res.text).toBe(200);
    expect(mock.requests[0]!.path).toBe('/v1/chat/completions');
    expect(mock.requests[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(mock.body()).toEqual({ ...request, model: 'qwen2.5:7b' });
    expect(res.json).toEqual({ ...answer, model: 'compat/qwen2.5:7b' });
  });

  it('stream_options is left out of a request that does not stream (OpenAI refuses it there)', async () => {
    const res = await pg.post('/v1/ai/chat/completions', {
      model: 'compat/llama3.1',
      messages: [{ role: 'user', content: 'x' }],
      stream_options: { include_usage: true },
    });
    expect(res.status, res.text).toBe(200);
    expect(mock.body()).toEqual({ model: 'llama3.1', messages: [{ role: 'user', content: 'x' }] });
  });

  it('without OPENAI_COMPATIBLE_API_KEY no authorization header goes up', async () => {
    await pg.removeEnv('OPENAI_COMPATIBLE_API_KEY');
    try {
      const res = await pg.post('/v1/ai/text', { model: 'compat/llama3.1', prompt: 'hi there' });
      expect(res.json.parts).toEqual([{ type: 'text', text: 'Echo: hi there' }]);
      expect(mock.requests[0]!.headers.authorization).toBeUndefined();
      expect(mock.body()).toEqual({ model: 'llama3.1', messages: [{ role: 'user', content: 'hi there' }] });
    } finally {
      await pg.setEnv('OPENAI_COMPATIBLE_API_KEY', KEY);
    }
  });
});

describe('openai-compatible: streaming', () => {
  it('chunk by chunk: the official client has the first chunk before the server sends the last', async () => {
    const held = gate();
    mock.reply(
      openAiStream(
        [
          openAiWire.chunk({ role: 'assistant', content: 'first' }, null, 'llama3.1'),
          openAiWire.chunk({ content: ' last' }, null, 'llama3.1'),
          openAiWire.chunk({}, 'stop', 'llama3.1'),
        ],
        { after: 0, wait: held.wait },
      ),
    );
    const stream = await pg.client().chat.completions.create({
      model: 'compat/llama3.1',
      messages: [{ role: 'user', content: 'x' }],
      stream: true,
    });
    const iterator = stream[Symbol.asyncIterator]();
    const first = await iterator.next();
    expect(first.value).toMatchObject({
      model: 'compat/llama3.1',
      choices: [{ delta: { role: 'assistant', content: 'first' } }],
    });
    expect(mock.requests[0]!.aborted).toBe(false);
    held.open();
    const rest: unknown[] = [];
    for (let next = await iterator.next(); !next.done; next = await iterator.next())
      rest.push(next.value.choices[0]);
    expect(rest).toEqual([
      { index: 0, delta: { content: ' last' }, logprobs: null, finish_reason: null },
      { index: 0, delta: {}, logprobs: null, finish_reason: 'stop' },
    ]);
    // Usage is always asked for: what the stream reports is what it is charged.
    expect(mock.body()).toEqual({
      model: 'llama3.1',
      messages: [{ role: 'user', content: 'x' }],
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it('streamed tool-call deltas reach the official client and assemble', async () => {
    mock.reply(
      openAiStream([
        openAiWire.chunk({
          role: 'assistant',
          content: null,
          tool_calls: [
            { index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '' } },
          ],
        }),
        openAiWire.chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
        openAiWire.chunk({ tool_calls: [{ index: 0, function: { arguments: '"Oslo"}' } }] }),
        openAiWire.chunk({}, 'tool_calls'),
      ]),
    );
    const stream = await pg.client().chat.completions.create({
      model: 'compat/llama3.1',
      messages: [{ role: 'user', content: 'weather?' }],
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }],
      stream: true,
    });
    let id = '';
    let name = '';
    let args = '';
    let finish: string | null = null;
    for await (const chunk of stream) {
      for (const call of chunk.choices[0]?.delta.tool_calls ?? []) {
        id += call.id ?? '';
        name += call.function?.name ?? '';
        args += call.function?.arguments ?? '';
      }
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect({ id, name, args, finish }).toEqual({
      id: 'call_1',
      name: 'get_weather',
      args: '{"city":"Oslo"}',
      finish: 'tool_calls',
    });
  });

  it('/v1/ai/stream: a usage chunk without choices (as some servers send it) still counts', async () => {
    mock.reply(
      openAiStream([
        openAiWire.chunk({ role: 'assistant', content: 'Hi' }),
        openAiWire.chunk({ content: '!' }, 'stop'),
        {
          id: 'x',
          object: 'chat.completion.chunk',
          created: 1,
          model: 'llama3.1',
          usage: { prompt_tokens: 11, completion_tokens: 2, total_tokens: 13 },
        },
      ]),
    );
    const { events } = await pg.stream('/v1/ai/stream', { model: 'compat/llama3.1', prompt: 'hello' });
    const all = await events.rest();
    expect(all.map((e) => e.event)).toEqual(['delta', 'delta', 'done']);
    expect(all[2]!.data).toMatchObject({
      message: { parts: [{ type: 'text', text: 'Hi!' }] },
      model: 'compat/llama3.1',
      usage: { input_tokens: 11, output_tokens: 2 },
      finish_reason: 'stop',
    });
    expect(mock.body().stream_options).toEqual({ include_usage: true });
  });
});
