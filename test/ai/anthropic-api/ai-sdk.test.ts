import { createAnthropic } from '@ai-sdk/anthropic';
import { generateText, stepCountIs, streamText, tool } from 'ai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  anthropicEvents,
  anthropicMock,
  anthropicStream,
  anthropicWire,
  sendJson,
  type WireMock,
} from '../../support/mock-ai-upstreams.ts';
import { type ProviderGateway, startProviderGateway } from '../providers/support.ts';
import { anthropicBase } from './support.ts';

// The Vercel AI SDK's anthropic provider against the gateway: translated on dev/echo, native on
// anthropic/* (an Anthropic mock upstream).

let mock: WireMock;
let pg: ProviderGateway;
let anthropic: ReturnType<typeof createAnthropic>;

beforeAll(async () => {
  mock = await anthropicMock();
  pg = await startProviderGateway({
    processEnv: { ANTHROPIC_API_KEY: 'sk-ant-api03-ai-sdk-0123456789', ANTHROPIC_BASE_URL: mock.url },
  });
  anthropic = createAnthropic({ baseURL: `${anthropicBase(pg.gw)}/v1`, apiKey: pg.token });
});
beforeEach(() => mock.reset());
afterAll(async () => {
  await pg?.close();
  await mock?.close();
});

const weather = tool({
  description: 'Weather of a city',
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => `rain in ${city}`,
});

describe('AI SDK, @ai-sdk/anthropic, on dev/echo (translated)', () => {
  it('generateText', async () => {
    const result = await generateText({ model: anthropic('dev/echo'), prompt: 'hello there', maxRetries: 0 });
    expect(result.text).toBe('Echo: hello there');
    expect(result.finishReason).toBe('stop');
    expect(result.usage).toMatchObject({ inputTokens: 2, outputTokens: 3 });
  });

  it('streamText', async () => {
    const result = streamText({ model: anthropic('dev/echo'), prompt: 'hello there', maxRetries: 0 });
    let text = '';
    for await (const part of result.textStream) text += part;
    expect(text).toBe('Echo: hello there');
    expect(await result.finishReason).toBe('stop');
    expect(await result.usage).toMatchObject({ inputTokens: 2, outputTokens: 3 });
  });

  it('a tool call, run by the SDK, and the answer to its result', async () => {
    const result = await generateText({
      model: anthropic('dev/echo'),
      prompt: 'tool:weather {"city":"Bergen"}',
      tools: { weather },
      stopWhen: stepCountIs(2),
      maxRetries: 0,
    });
    expect(result.steps[0]?.toolCalls).toEqual([
      expect.objectContaining({ toolName: 'weather', input: { city: 'Bergen' } }),
    ]);
    expect(result.text).toBe('Tool weather returned: rain in Bergen');
  });

  it('a tool call streamed', async () => {
    const result = streamText({
      model: anthropic('dev/echo'),
      prompt: 'tool:weather {"city":"Oslo"}',
      tools: { weather },
      stopWhen: stepCountIs(2),
      maxRetries: 0,
    });
    expect(await result.text).toBe('Tool weather returned: rain in Oslo');
    expect((await result.steps)[0]?.toolCalls).toEqual([
      expect.objectContaining({ toolName: 'weather', input: { city: 'Oslo' } }),
    ]);
  });

  it('a bad key is an APICallError with status 401', async () => {
    const bad = createAnthropic({ baseURL: `${anthropicBase(pg.gw)}/v1`, apiKey: 'stk_bad' });
    const error = await generateText({ model: bad('dev/echo'), prompt: 'x', maxRetries: 0 }).catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ statusCode: 401, message: 'unknown token' });
  });
});

describe('AI SDK, @ai-sdk/anthropic, on anthropic/* (native)', () => {
  it('generateText, the request passed through with the model renamed', async () => {
    mock.reply((_req, res) => sendJson(res, 200, anthropicWire.message([{ type: 'text', text: 'Hi.' }])));
    const result = await generateText({
      model: anthropic('anthropic/claude-haiku-4-5'),
      system: 'Be brief.',
      prompt: 'hello',
      maxRetries: 0,
    });
    expect(result.text).toBe('Hi.');
    expect(result.usage).toMatchObject({ inputTokens: 7, outputTokens: 3 });
    expect(mock.body()).toMatchObject({
      model: 'claude-haiku-4-5',
      system: [{ type: 'text', text: 'Be brief.' }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hello' }] }],
    });
  });

  it('streamText with a tool call and its result', async () => {
    mock.script(
      anthropicStream(
        anthropicEvents([{ tool: { id: 'toolu_1', name: 'weather' }, json: ['{"city":', '"Bergen"}'] }], {
          stop_reason: 'tool_use',
        }),
      ),
      anthropicStream(anthropicEvents([{ text: ['It ', 'rains.'] }])),
    );
    const result = streamText({
      model: anthropic('anthropic/claude-haiku-4-5'),
      prompt: 'Weather in Bergen?',
      tools: { weather },
      stopWhen: stepCountIs(2),
      maxRetries: 0,
    });
    expect(await result.text).toBe('It rains.');
    expect(mock.body(1).messages.at(-1)).toMatchObject({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'rain in Bergen' }],
    });
  });
});
