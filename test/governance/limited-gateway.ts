import { randomBytes } from 'node:crypto';
import { builtinAiProviders } from '../../services/ai/providers/index.ts';
import { UpstreamClient } from '../../services/ai/upstream.ts';
import { adminOk, studioWithToken } from '../support/admin.ts';
import {
  type ApiResponse,
  startTestGateway,
  type TestGateway,
  type TestGatewayOptions,
} from '../support/gateway.ts';
import {
  gate,
  type Json,
  openAiMock,
  openAiWire,
  sendJson,
  sse,
  type WireMock,
} from '../support/mock-ai-upstreams.ts';

export const MODEL = 'openai/gpt-4o-mini';

/**
 * An OpenAI stand-in that counts what reaches it: every call, and the calls in flight (received,
 * answer not yet closed), with the most seen at once. While held, it answers nothing until released.
 */
export interface CountingUpstream {
  mock: WireMock;
  readonly calls: number;
  readonly inFlight: number;
  readonly maxInFlight: number;
  /** Holds every call from now on until `release`. */
  hold(): void;
  release(): void;
  /** Usage every answer reports from now on. */
  usage: { prompt_tokens: number; completion_tokens: number };
  reset(): void;
  close(): Promise<void>;
}

export async function countingUpstream(): Promise<CountingUpstream> {
  const mock = await openAiMock();
  let calls = 0;
  let inFlight = 0;
  let maxInFlight = 0;
  let held: ReturnType<typeof gate> | undefined;
  const upstream: CountingUpstream = {
    mock,
    get calls() {
      return calls;
    },
    get inFlight() {
      return inFlight;
    },
    get maxInFlight() {
      return maxInFlight;
    },
    usage: { prompt_tokens: 3, completion_tokens: 2 },
    hold() {
      held = gate();
    },
    release() {
      held?.open();
      held = undefined;
    },
    reset() {
      upstream.release();
      calls = 0;
      maxInFlight = inFlight;
      upstream.usage = { prompt_tokens: 3, completion_tokens: 2 };
    },
    close: () => mock.close(),
  };
  mock.reply(async (req, res) => {
    calls++;
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    res.on('close', () => inFlight--);
    await held?.wait;
    const body: Json = JSON.parse(req.body.toString());
    const usage = {
      ...upstream.usage,
      total_tokens: upstream.usage.prompt_tokens + upstream.usage.completion_tokens,
    };
    if (!body.stream) return sendJson(res, 200, openAiWire.completion({ content: 'fine' }, { usage }));
    const out = sse(res);
    out.send(openAiWire.chunk({ role: 'assistant', content: 'fine' }));
    out.send(openAiWire.chunk({}, 'stop'));
    if (body.stream_options?.include_usage) out.send(openAiWire.usageChunk(upstream.usage));
    out.send('[DONE]');
    out.end();
  });
  return upstream;
}

/** A gateway whose `openai/*` models reach `upstream`; held calls wait, never time out. */
export function startLimitedGateway(
  upstream: Pick<CountingUpstream, 'mock'>,
  { ai, ...options }: Partial<TestGatewayOptions> = {},
): Promise<TestGateway> {
  return startTestGateway({
    store: 'memory',
    logLevel: 'silent',
    processEnv: { OPENAI_API_KEY: 'sk-limits-0123456789', OPENAI_BASE_URL: `${upstream.mock.url}/v1` },
    ai: {
      upstream: new UpstreamClient({ timeoutMs: 60_000, idleTimeoutMs: 60_000, retries: 0, retryBaseMs: 1 }),
      providers: builtinAiProviders,
      ...ai,
    },
    ...options,
  });
}

/**
 * Two gateways of one deployment: one PostgreSQL database, one master key, counters in `redisUrl`
 * and the response cache in `redisCacheUrl` if given.
 */
export async function startGatewayPair(
  upstream: Pick<CountingUpstream, 'mock'>,
  deployment: { databaseUrl: string; redisUrl?: string | undefined; redisCacheUrl?: string | undefined },
): Promise<[TestGateway, TestGateway]> {
  const options = { store: 'postgres', ...deployment, masterKey: randomBytes(32).toString('hex') } as const;
  const a = await startLimitedGateway(upstream, options);
  try {
    return [a, await startLimitedGateway(upstream, options)];
  } catch (error) {
    await a.close();
    throw error;
  }
}

/** A fresh studio (a random id: counters in a shared store start from nothing) and a token of it. */
export async function newStudio(
  gw: TestGateway,
): Promise<{ studioId: string; token: string; tokenId: string }> {
  const studioId = `limits-${randomBytes(4).toString('hex')}`;
  return { studioId, ...(await studioWithToken(gw, studioId)) };
}

export async function newToken(
  gw: TestGateway,
  studioId: string,
): Promise<{ token: string; tokenId: string }> {
  const issued = await adminOk(gw, 'POST', '/v1/studios/tokens/apply', { studio_id: studioId });
  return { token: issued.json.user_token, tokenId: issued.json.token.id };
}

export type Route = 'text' | 'stream' | 'chat' | 'chat-stream';

/** One generation through `route`, its body read to the end. */
export async function generate(gw: TestGateway, token: string, route: Route = 'chat'): Promise<ApiResponse> {
  const messages = [{ role: 'user', content: 'hello' }];
  switch (route) {
    case 'text':
      return gw.api('POST', '/v1/ai/text', { token, body: { model: MODEL, prompt: 'hello' } });
    case 'stream':
      return gw.api('POST', '/v1/ai/stream', { token, body: { model: MODEL, prompt: 'hello' } });
    case 'chat':
      return gw.api('POST', '/v1/ai/chat/completions', { token, body: { model: MODEL, messages } });
    case 'chat-stream':
      return gw.api('POST', '/v1/ai/chat/completions', {
        token,
        body: { model: MODEL, messages, stream: true, stream_options: { include_usage: true } },
      });
  }
}

/** The `x-ratelimit-*` headers of an answer. */
export function rateHeaders(res: ApiResponse): Record<string, string> {
  return Object.fromEntries([...res.headers].filter(([name]) => name.startsWith('x-ratelimit-')));
}
