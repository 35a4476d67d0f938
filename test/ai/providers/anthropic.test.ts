import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  anthropicEvents,
  anthropicMock,
  anthropicStream,
  anthropicWire,
  gate,
  sendJson,
  type WireMock,
} from '../../support/mock-ai-upstreams.ts';
import { type ProviderGateway, startProviderGateway } from './support.ts';

const KEY = 'sk-ant-api03-test-key-0123456789abcdef';
let mock: WireMock;
let pg: ProviderGateway;

beforeAll(async () => {
  mock = await anthropicMock();
  pg = await startProviderGateway({
    processEnv: { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: mock.url },
  });
});
beforeEach(() => mock.reset());
afterAll(async () => {
  await pg?.close();
  await mock?.close();
});

const weatherTool = {
  type: 'function' as const,
  function: {
    name: 'weather',
    description: 'Weather of a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

describe('anthropic: OpenAI chat → Messages API → OpenAI chat', () => {
  it('translates a whole conversation both ways (official openai client)', async () => {
    mock.reply((_req, res) =>
      sendJson(
        res,
        200,
        anthropicWire.message(
          [
            { type: 'text', text: 'Checking' },
            { type: 'text', text: ' again.' },
            { type: 'tool_use', id: 'toolu_01', name: 'weather', input: { city: 'Bergen', days: 2 } },
          ],
          {
            stop_reason: 'tool_use',
            usage: { input_tokens: 50, output_tokens: 12, cache_read_input_tokens: 8 },
          },
        ),
      ),
    );
    const completion = await pg.client().chat.completions.create({
      model: 'anthropic/claude-sonnet-4-5',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'developer', content: [{ type: 'text', text: 'Use tools.' }] },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is in this picture, and the weather?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg', detail: 'low' } },
          ],
        },
        {
          role: 'assistant',
          content: 'Let me check.',
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Bergen"}' } },
            { id: 'call_2', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'rain' },
        { role: 'tool', tool_call_id: 'call_2', content: [{ type: 'text', text: 'sun' }] },
        { role: 'user', content: 'And tomorrow?' },
      ],
      tools: [weatherTool],
      tool_choice: { type: 'function', function: { name: 'weather' } },
      parallel_tool_calls: false,
      temperature: 0.5,
      top_p: 0.9,
      stop: 'END',
      user: 'u-1',
    });

    const sent = mock.requests[0]!;
    expect(sent.method).toBe('POST');
    expect(sent.path).toBe('/v1/messages');
    expect(sent.headers['x-api-key']).toBe(KEY);
    expect(sent.headers['anthropic-version']).toBe('2023-06-01');
    expect(sent.headers.authorization).toBeUndefined();
    expect(mock.body()).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 4096,
      system: 'Be brief.\n\nUse tools.',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is in this picture, and the weather?' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
            { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Let me check.' },
            { type: 'tool_use', id: 'call_1', name: 'weather', input: { city: 'Bergen' } },
            { type: 'tool_use', id: 'call_2', name: 'weather', input: { city: 'Oslo' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'call_1', content: 'rain' },
            { type: 'tool_result', tool_use_id: 'call_2', content: 'sun' },
            { type: 'text', text: 'And tomorrow?' },
          ],
        },
      ],
      temperature: 0.5,
      top_p: 0.9,
      stop_sequences: ['END'],
      tools: [
        { name: 'weather', description: 'Weather of a city', input_schema: weatherTool.function.parameters },
      ],
      tool_choice: { type: 'tool', name: 'weather', disable_parallel_tool_use: true },
      metadata: { user_id: 'u-1' },
    });

    expect(completion).toEqual({
      id: expect.stringMatching(/^chatcmpl-/),
      object: 'chat.completion',
      created: expect.any(Number),
      model: 'anthropic/claude-sonnet-4-5',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: 'Checking again.',
            tool_calls: [
              {
                id: 'toolu_01',
                type: 'function',
                function: { name: 'weather', arguments: '{"city":"Bergen","days":2}' },
              },
            ],
          },
          finish_reason: 'tool_calls',
        },
      ],
      usage: { prompt_tokens: 58, completion_tokens: 12, total_tokens: 70 },
    });
  });

  it('/v1/ai/text: max_tokens and temperature (capped at 1) go up, stop reasons map back', async () => {
    mock.reply((_req, res) =>
      sendJson(
        res,
        200,
        anthropicWire.message([{ type: 'text', text: 'Once upon' }], {
          stop_reason: 'max_tokens',
          usage: { input_tokens: 4, output_tokens: 2 },
        }),
      ),
    );
    const res = await pg.post('/v1/ai/text', {
      model: 'anthropic/claude-haiku-4-5',
      prompt: 'Tell a story',
      system: 'You are a bard.',
      max_tokens: 2,
      temperature: 1.5,
    });
    expect(res.status, res.text).toBe(200);
    expect(mock.body()).toEqual({
      model: 'claude-haiku-4-5',
      max_tokens: 2,
      system: 'You are a bard.',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Tell a story' }] }],
      temperature: 1,
    });
    expect(res.json).toEqual({
      id: expect.stringMatching(/^msg_/),
      role: 'assistant',
      parts: [{ type: 'text', text: 'Once upon' }],
      model: 'anthropic/claude-haiku-4-5',
      // The tokens charged: the upstream says 4 read, fewer than the 20 non-blank characters of the
      // system text and prompt come to (5).
      usage: { input_tokens: 5, output_tokens: 2 },
      finish_reason: 'length',
    });

    for (const [stop, finish] of [
      ['end_turn', 'stop'],
      ['stop_sequence', 'stop'],
      ['tool_use', 'tool_calls'],
      ['refusal', 'content_filter'],
    ]) {
      mock.reply((_req, res) =>
        sendJson(res, 200, anthropicWire.message([{ type: 'text', text: 'x' }], { stop_reason: stop })),
      );
      const r = await pg.post('/v1/ai/text', { model: 'anthropic/claude-haiku-4-5', prompt: 'x' });
      expect(r.json.finish_reason, stop).toBe(finish);
    }
  });
});

describe('anthropic: streaming', () => {
  it('stream events become OpenAI chunks, one by one: role, text, tool call deltas, finish, usage, [DONE]', async () => {
    const events = anthropicEvents(
      [{ text: ['Hel', 'lo'] }, { tool: { id: 'toolu_9', name: 'lookup' }, json: ['{"q":', '"x"}'] }],
      { stop_reason: 'tool_use', input_tokens: 5, output_tokens: 9 },
    );
    const held = gate();
    // Held after the first text delta (message_start, ping, content_block_start, delta).
    mock.reply(anthropicStream(events, { after: 3, wait: held.wait }));
    const { response, events: received } = await pg.stream('/v1/ai/chat/completions', {
      model: 'anthropic/claude-haiku-4-5',
      messages: [{ role: 'user', content: 'look x up' }],
      tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }],
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(response.status).toBe(200);
    const first = [await received.next(), await received.next()];
    expect(first.map((e) => e?.data.choices[0].delta)).toEqual([
      { role: 'assistant', content: '' },
      { content: 'Hel' },
    ]);
    held.open();
    const all = [...first, ...(await received.rest())];

    expect(mock.body()).toMatchObject({ model: 'claude-haiku-4-5', stream: true, max_tokens: 4096 });
    expect(all.at(-1)!.data).toBe('[DONE]');
    const chunks = all.slice(0, -1).map((e) => e!.data);
    for (const chunk of chunks) {
      expect(chunk).toMatchObject({
        id: chunks[0].id,
        object: 'chat.completion.chunk',
        created: chunks[0].created,
        model: 'anthropic/claude-haiku-4-5',
      });
    }
    const choice = (delta: unknown, finish: string | null = null) => [
      { index: 0, delta, finish_reason: finish },
    ];
    expect(chunks.map(({ choices, usage }) => (usage ? { choices, usage } : { choices }))).toEqual([
      { choices: choice({ role: 'assistant', content: '' }) },
      { choices: choice({ content: 'Hel' }) },
      { choices: choice({ content: 'lo' }) },
      {
        choices: choice({
          tool_calls: [
            { index: 0, id: 'toolu_9', type: 'function', function: { name: 'lookup', arguments: '' } },
          ],
        }),
      },
      { choices: choice({ tool_calls: [{ index: 0, function: { arguments: '{"q":' } }] }) },
      { choices: choice({ tool_calls: [{ index: 0, function: { arguments: '"x"}' } }] }) },
      { choices: choice({}, 'tool_calls') },
      { choices: [], usage: { prompt_tokens: 5, completion_tokens: 9, total_tokens: 14 } },
    ]);
  });

  it('the official client assembles streamed tool calls; no usage chunk unless asked', async () => {
    mock.reply(
      anthropicStream(
        anthropicEvents(
          [
            { text: ['On it.'] },
            { tool: { id: 'toolu_a', name: 'weather' }, json: ['{"ci', 'ty":"Oslo"}'] },
            { tool: { id: 'toolu_b', name: 'weather' }, json: ['{"city":"Rome"}'] },
          ],
          { stop_reason: 'tool_use' },
        ),
      ),
    );
    const stream = await pg.client().chat.completions.create({
      model: 'anthropic/claude-opus-4-5',
      messages: [{ role: 'user', content: 'Weather in Oslo and Rome?' }],
      tools: [weatherTool],
      stream: true,
    });
    let text = '';
    let finish: string | null = null;
    let usage: unknown;
    const calls: { id: string; name: string; arguments: string }[] = [];
    for await (const chunk of stream) {
      usage ??= chunk.usage;
      for (const choice of chunk.choices) {
        text += choice.delta.content ?? '';
        finish = choice.finish_reason ?? finish;
        for (const call of choice.delta.tool_calls ?? []) {
          calls[call.index] ??= { id: call.id ?? '', name: call.function?.name ?? '', arguments: '' };
          calls[call.index]!.arguments += call.function?.arguments ?? '';
        }
      }
    }
    expect({ text, finish, usage, calls }).toEqual({
      text: 'On it.',
      finish: 'tool_calls',
      usage: undefined,
      calls: [
        { id: 'toolu_a', name: 'weather', arguments: '{"city":"Oslo"}' },
        { id: 'toolu_b', name: 'weather', arguments: '{"city":"Rome"}' },
      ],
    });
  });

  it('/v1/ai/stream: delta events then done with the upstream usage', async () => {
    const { events } = await pg.stream('/v1/ai/stream', {
      model: 'anthropic/claude-sonnet-4-5',
      prompt: 'good day',
    });
    const all = await events.rest();
    expect(mock.body()).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 4096,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'good day' }] }],
      stream: true,
    });
    expect(all.slice(0, -1)).toEqual(
      ['Echo: ', 'good ', 'day'].map((text) => ({ event: 'delta', data: { text } })),
    );
    expect(all.at(-1)).toMatchObject({
      event: 'done',
      data: {
        message: { parts: [{ type: 'text', text: 'Echo: good day' }] },
        usage: { input_tokens: 2, output_tokens: 3 },
        finish_reason: 'stop',
      },
    });
  });

  it('an error event mid-stream, or a stream cut before message_stop, ends with upstream_error', async () => {
    const [start, , , delta] = anthropicEvents([{ text: ['par'] }]);
    mock.reply(
      anthropicStream([
        start!,
        delta!,
        anthropicWire.event('error', anthropicWire.error('Overloaded', 'overloaded_error')),
      ]),
    );
    const { events } = await pg.stream('/v1/ai/stream', { model: 'anthropic/claude-haiku-4-5', prompt: 'x' });
    const all = await events.rest();
    expect(all[0]).toEqual({ event: 'delta', data: { text: 'par' } });
    expect(all[1]).toMatchObject({
      event: 'error',
      data: { error: { code: 'upstream_error', message: 'Overloaded' } },
    });
    expect(all).toHaveLength(2);

    mock.reply(anthropicStream([start!, delta!]));
    const cut = await pg.stream('/v1/ai/chat/completions', {
      model: 'anthropic/claude-haiku-4-5',
      messages: [{ role: 'user', content: 'x' }],
      stream: true,
    });
    const cutEvents = await cut.events.rest();
    expect(cutEvents.map((e) => e.data.choices?.[0]?.delta ?? e.data.error?.code)).toEqual([
      { role: 'assistant', content: '' },
      { content: 'par' },
      'upstream_error',
    ]);
  });
});
