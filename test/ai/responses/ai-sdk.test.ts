import { createOpenAI } from '@ai-sdk/openai';
import { generateText, stepCountIs, streamText, tool } from 'ai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Json, WireMock } from '../../support/mock-ai-upstreams.ts';
import { type ProviderGateway, startOpenAiGateway } from '../providers/support.ts';

// The Vercel AI SDK's OpenAI provider, whose `openai.responses(…)` model speaks the Responses API,
// against the gateway unchanged: on dev/echo (answered through chat) and on a native upstream.

let mock: WireMock;
let pg: ProviderGateway;
let openai: ReturnType<typeof createOpenAI>;

beforeAll(async () => {
  ({ mock, pg } = await startOpenAiGateway('sk-test-key-for-the-mock-0123456789'));
  openai = createOpenAI({ baseURL: `${pg.gw.url}/v1/ai`, apiKey: pg.token });
});
beforeEach(() => mock.reset());
afterAll(() => Promise.all([pg?.close(), mock?.close()]));

const weather = tool({
  description: 'The weather in a city',
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => `sunny in ${city}`,
});

/** The stored events of every response, oldest first. */
async function storedResponses(): Promise<Json[]> {
  const events = await pg.gw.running.ctx.events.readAll({ types: ['ResponseCreated'] });
  return events.map((event) => event.data);
}

describe('AI SDK openai.responses on dev/echo', () => {
  it('generateText: the text, its usage, and the response id', async () => {
    const result = await generateText({ model: openai.responses('dev/echo'), prompt: 'hello sdk' });
    expect(result.text).toBe('Echo: hello sdk');
    expect(result.finishReason).toBe('stop');
    expect(result.usage).toMatchObject({ inputTokens: 2, outputTokens: 3, totalTokens: 5 });
    expect(result.response.id).toMatch(/^resp_/);
    expect(result.response.modelId).toBe('dev/echo');
  });

  it('streamText: the text as it comes, then the usage', async () => {
    const result = streamText({ model: openai.responses('dev/echo'), prompt: 'streamed by the sdk' });
    const parts: string[] = [];
    for await (const delta of result.textStream) parts.push(delta);
    expect(parts.join('')).toBe('Echo: streamed by the sdk');
    expect(parts.length).toBeGreaterThan(1);
    expect(await result.usage).toMatchObject({ inputTokens: 4, outputTokens: 5 });
    expect(await result.finishReason).toBe('stop');
  });

  it('a tool loop: the call, its result sent back as function_call_output, the answer', async () => {
    const result = await generateText({
      model: openai.responses('dev/echo'),
      tools: { get_weather: weather },
      stopWhen: stepCountIs(3),
      prompt: 'tool:get_weather {"city":"Lima"}',
    });
    expect(result.steps).toHaveLength(2);
    expect(result.steps[0]!.toolCalls).toMatchObject([{ toolName: 'get_weather', input: { city: 'Lima' } }]);
    expect(result.text).toBe('Tool get_weather returned: sunny in Lima');
  });

  it('a streamed tool loop', async () => {
    const result = streamText({
      model: openai.responses('dev/echo'),
      tools: { get_weather: weather },
      stopWhen: stepCountIs(3),
      prompt: 'tool:get_weather {"city":"Quito"}',
    });
    expect(await result.text).toBe('Tool get_weather returned: sunny in Quito');
    expect((await result.steps).map((step) => step.finishReason)).toEqual(['tool-calls', 'stop']);
  });

  it('a conversation continued with the response messages: its earlier answer is an item_reference', async () => {
    const first = await generateText({ model: openai.responses('dev/echo'), prompt: 'first turn' });
    const second = await generateText({
      model: openai.responses('dev/echo'),
      messages: [
        { role: 'user', content: 'first turn' },
        ...first.response.messages,
        { role: 'user', content: 'second turn' },
      ],
    });
    expect(second.text).toBe('Echo: second turn');
    // The reference was resolved to the stored item: typed, with its status.
    const stored = (await storedResponses()).find((r) => r.response.id === second.response.id);
    expect(stored.input[1]).toMatchObject({
      type: 'message',
      id: (await storedResponses()).find((r) => r.response.id === first.response.id).response.output[0].id,
      status: 'completed',
      content: [{ type: 'output_text', text: 'Echo: first turn' }],
    });
  });

  it('previousResponseId through the provider options', async () => {
    const first = await generateText({ model: openai.responses('dev/echo'), prompt: 'one' });
    const second = await generateText({
      model: openai.responses('dev/echo'),
      prompt: 'two',
      providerOptions: { openai: { previousResponseId: first.response.id } },
    });
    expect(second.text).toBe('Echo: two');
    // one, Echo: one, two
    expect(second.usage.inputTokens).toBe(4);
  });
});

describe('AI SDK openai.responses on a native upstream', () => {
  it('generateText goes to the upstream’s /responses and comes back', async () => {
    const result = await generateText({ model: openai.responses('openai/gpt-4.1-mini'), prompt: 'native' });
    expect(result.text).toBe('Echo: native');
    expect(result.response.id).toMatch(/^resp_[0-9a-f]{24}$/);
    expect(mock.requests.map((r) => r.path)).toEqual(['/v1/responses']);
    expect(mock.body()).toMatchObject({ model: 'gpt-4.1-mini', stream: false });
  });

  it('streamText goes through event by event', async () => {
    const result = streamText({ model: openai.responses('openai/gpt-4.1-mini'), prompt: 'native stream' });
    const parts: string[] = [];
    for await (const delta of result.textStream) parts.push(delta);
    expect(parts).toEqual(['Echo: ', 'native ', 'stream']);
    expect(await result.usage).toMatchObject({ inputTokens: 2, outputTokens: 3 });
    expect(mock.body()).toMatchObject({ model: 'gpt-4.1-mini', stream: true });
  });
});
