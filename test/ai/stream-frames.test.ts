/**
 * The exact bytes of the two streaming routes, `/v1/ai/stream` and streamed chat completions, and
 * the usage they record: for a stream that ends and for one that breaks off half-way.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { chatCompletionsAction } from '../../services/ai/actions/chat-completions.ts';
import { streamAction } from '../../services/ai/actions/text.ts';
import { AiMetrics } from '../../services/ai/ai-metrics.ts';
import { CacheTicket } from '../../services/ai/cache/ticket.ts';
import type { ChatChunk } from '../../services/ai/chat/wire.ts';
import type { AiDeps } from '../../services/ai/deps.ts';
import { FREE } from '../../services/ai/prices/price.ts';
import { NO_RATE_LIMITS } from '../../services/ai/rate-limits/rate-limits.ts';
import { InFlight } from '../../services/ai/routing/in-flight.ts';
import type { UsageRecorder } from '../../services/ai/usage/recorder.ts';
import type { ActionContext, AnyAction } from '../../shared/http/action.ts';
import type { ServedRequest, ServedResponse } from '../../shared/http/request.ts';

type UsageEvent = Parameters<UsageRecorder['record']>[0];

const chunk = (content: string, extra: Partial<ChatChunk> = {}, finish: string | null = null): ChatChunk => ({
  id: 'chatcmpl-1',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'up',
  choices: [{ index: 0, delta: { content }, finish_reason: finish }],
  ...extra,
});

const ending = [
  chunk('Hel'),
  chunk(''),
  chunk('lo', {}, 'stop'),
  { ...chunk(''), choices: [], usage: { prompt_tokens: 7, completion_tokens: 2, total_tokens: 9 } },
];

async function* upstream(chunks: ChatChunk[], breakOff: boolean): AsyncGenerator<ChatChunk> {
  yield* chunks;
  if (breakOff) throw new Error('socket hang up');
}

let close: (() => void) | undefined;
afterEach(() => close?.());

/**
 * Serves one action over HTTP with a fake catalog and usage recorder; answers the body, the usage
 * recorded and the requests the upstream got.
 */
async function run(
  action: (deps: AiDeps) => AnyAction,
  input: unknown,
  chunks: ChatChunk[],
  breakOff = false,
): Promise<{ body: string; usage: UsageEvent[]; sent: Record<string, unknown>[] }> {
  const usage: UsageEvent[] = [];
  const sent: Record<string, unknown>[] = [];
  const deps = {
    catalog: {
      resolve: () => ({
        provider: {
          chatStream: async (_model: unknown, request: Record<string, unknown>) => {
            sent.push(request);
            return upstream(chunks, breakOff);
          },
        },
        model: { id: 'test/model', upstreamModel: 'up' },
      }),
    },
    env: { get: () => undefined },
    usage: {
      record: async (event: UsageEvent) => {
        usage.push(event);
      },
      priceOf: () => FREE,
      leaseMsOf: () => 60_000,
      reserve: async () => ({ kind: 'unbudgeted' }),
    },
    limits: NO_RATE_LIMITS,
    routes: { get: () => undefined, inFlight: new InFlight() },
    cache: { lookup: async () => new CacheTicket('bypass') },
    metrics: new AiMetrics(new Registry()),
    payloads: { keepsMessages: () => true },
  } as unknown as AiDeps;
  const { handler } = action(deps);
  const server = createServer((req, res) => {
    const ctx = {
      identity: { kind: 'user', studioId: 'acme', tokenId: 'tok_1', models: null },
      requestId: 'req_1',
      metadata: { actor: 'test' },
      signal: new AbortController().signal,
      params: {},
      req: req as ServedRequest,
      res: res as ServedResponse,
    } as ActionContext;
    void handler(input, ctx);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  close = () => server.close();
  const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
  expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
  return { body: await response.text(), usage, sent };
}

const recorded = (usage: UsageEvent[]) =>
  usage.map(({ type, data }) => ({
    type,
    status: data.status,
    inputTokens: data.inputTokens,
    outputTokens: data.outputTokens,
    errorCode: 'errorCode' in data ? data.errorCode : undefined,
  }));

const brokeOff = JSON.stringify({
  error: {
    type: 'api_error',
    code: 'upstream_error',
    message: 'the upstream stream broke off',
    request_id: 'req_1',
  },
});

describe('POST /v1/ai/stream', () => {
  const input = { model: 'test/model', prompt: 'say hello' };

  it('sends a delta per piece of text, then done with the message, usage and finish reason', async () => {
    const { body, usage } = await run(streamAction, input, ending);
    expect(body.replace(/msg_[0-9a-f-]+/, 'msg_X')).toBe(
      'event: delta\ndata: {"text":"Hel"}\n\n' +
        'event: delta\ndata: {"text":"lo"}\n\n' +
        'event: done\ndata: {"message":{"id":"msg_X","role":"assistant","parts":[{"type":"text","text":"Hello"}]},' +
        '"model":"test/model","usage":{"input_tokens":7,"output_tokens":2},"finish_reason":"stop"}\n\n',
    );
    expect(recorded(usage)).toEqual([
      { type: 'GenerationCompleted', status: 200, inputTokens: 7, outputTokens: 2, errorCode: undefined },
    ]);
  });

  it('estimates the usage when the upstream reports none', async () => {
    const { body, usage } = await run(streamAction, input, ending.slice(0, 3));
    // "say hello": 8 non-blank characters, 2 tokens; "Hello": 5, 1 token.
    expect(body).toContain('"usage":{"input_tokens":2,"output_tokens":1}');
    expect(recorded(usage)[0]).toMatchObject({ inputTokens: 2, outputTokens: 1 });
  });

  it('a stream that breaks off ends with an error event carrying the envelope', async () => {
    const { body, usage } = await run(streamAction, input, ending.slice(0, 1), true);
    expect(body).toBe(`event: delta\ndata: {"text":"Hel"}\n\nevent: error\ndata: ${brokeOff}\n\n`);
    expect(recorded(usage)).toEqual([
      { type: 'GenerationFailed', status: 500, inputTokens: 2, outputTokens: 1, errorCode: 'internal_error' },
    ]);
  });
});

describe('POST /v1/ai/chat/completions, streamed', () => {
  const input = { model: 'test/model', messages: [{ role: 'user', content: 'say hello' }], stream: true };
  const frame = (c: ChatChunk) => `data: ${JSON.stringify({ ...c, model: 'test/model' })}\n\n`;

  it('relays every chunk under the model asked for, then [DONE]; the usage chunk only when asked', async () => {
    const { body, usage, sent } = await run(chatCompletionsAction, input, ending);
    // The upstream is asked for usage whatever the client asked; a client that did not ask gets none.
    expect(sent[0]).toMatchObject({ stream_options: { include_usage: true } });
    expect(body).toBe(`${ending.slice(0, 3).map(frame).join('')}data: [DONE]\n\n`);
    expect(recorded(usage)).toEqual([
      { type: 'GenerationCompleted', status: 200, inputTokens: 7, outputTokens: 2, errorCode: undefined },
    ]);
    const asked = await run(
      chatCompletionsAction,
      { ...input, stream_options: { include_usage: true } },
      ending,
    );
    expect(asked.body).toBe(`${ending.map(frame).join('')}data: [DONE]\n\n`);
  });

  it('counts every output field: tool-call names and arguments, reasoning, refusals', async () => {
    const toolCall = {
      ...chunk(''),
      choices: [
        {
          index: 0,
          delta: {
            reasoning_content: 'thinking it over',
            refusal: 'no',
            tool_calls: [
              { index: 0, id: 'c1', function: { name: 'lookup', arguments: '{"q":"weather in Paris"}' } },
            ],
          },
          finish_reason: 'tool_calls',
        },
      ],
    } as ChatChunk;
    // Usage that counts none of it: 0 output tokens.
    const lying = {
      ...chunk(''),
      choices: [],
      usage: { prompt_tokens: 1, completion_tokens: 0, total_tokens: 1 },
    };
    const { usage } = await run(chatCompletionsAction, input, [toolCall, lying]);
    // 14 + 2 + 6 + 22 non-blank characters: 44, 11 tokens; the input ("say hello"): 8, 2.
    expect(recorded(usage)).toEqual([
      { type: 'GenerationCompleted', status: 200, inputTokens: 2, outputTokens: 11, errorCode: undefined },
    ]);
  });

  it('estimates the usage from the messages when the upstream reports none', async () => {
    const { usage } = await run(chatCompletionsAction, input, ending.slice(0, 3));
    // "say hello": 8 non-blank characters, 2 tokens; "Hello": 5, 1 token.
    expect(recorded(usage)[0]).toMatchObject({ inputTokens: 2, outputTokens: 1 });
  });

  it('a stream that breaks off ends with a data frame carrying the envelope', async () => {
    const { body, usage } = await run(chatCompletionsAction, input, ending.slice(0, 1), true);
    expect(body).toBe(`${frame(ending[0]!)}data: ${brokeOff}\n\n`);
    expect(recorded(usage)).toEqual([
      { type: 'GenerationFailed', status: 500, inputTokens: 2, outputTokens: 1, errorCode: 'internal_error' },
    ]);
  });
});
