import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectApiError } from '../../support/gateway.ts';
import {
  anthropicMock,
  anthropicWire,
  faults,
  openAiMock,
  openAiWire,
  sse,
  type WireMock,
} from '../../support/mock-ai-upstreams.ts';
import { type ProviderGateway, startProviderGateway } from './support.ts';

/**
 * Failures at the upstream, the same for every provider: errors map to 502/504 with the upstream's
 * message and never its credentials; 429 and 5xx are retried before anything reaches the client;
 * a client that goes away cancels the upstream request.
 */
const KEYS = {
  openai: 'sk-proj-openai-error-key-0123456789abcdef',
  compat: 'sk-compat-error-key-0123456789abcdef',
  anthropic: 'sk-ant-api03-error-key-0123456789abcdef',
};
const mocks = {} as Record<keyof typeof KEYS, WireMock>;
let pg: ProviderGateway;

interface Case {
  name: keyof typeof KEYS;
  model: string;
  /** The upstream's error body for `message`. */
  error(message: string): unknown;
  /** Starts a stream that sends one event and never ends. */
  openStream(res: ServerResponse): void;
}

const CASES: Case[] = [
  {
    name: 'openai',
    model: 'openai/gpt-4o-mini',
    error: (message) => openAiWire.error(message),
    openStream: (res) => sse(res).send(openAiWire.chunk({ role: 'assistant', content: 'a' })),
  },
  {
    name: 'compat',
    model: 'compat/llama3.1',
    error: (message) => openAiWire.error(message),
    openStream: (res) => sse(res).send(openAiWire.chunk({ role: 'assistant', content: 'a' })),
  },
  {
    name: 'anthropic',
    model: 'anthropic/claude-haiku-4-5',
    error: (message) => anthropicWire.error(message, 'authentication_error'),
    openStream: (res) =>
      sse(res).send(
        { type: 'message_start', message: { id: 'm', usage: { input_tokens: 1, output_tokens: 0 } } },
        'message_start',
      ),
  },
];

beforeAll(async () => {
  mocks.openai = await openAiMock();
  mocks.compat = await openAiMock();
  mocks.anthropic = await anthropicMock();
  pg = await startProviderGateway({
    processEnv: {
      OPENAI_API_KEY: KEYS.openai,
      OPENAI_BASE_URL: `${mocks.openai.url}/v1`,
      OPENAI_COMPATIBLE_BASE_URL: `${mocks.compat.url}/v1`,
      OPENAI_COMPATIBLE_MODELS: 'llama3.1',
      OPENAI_COMPATIBLE_API_KEY: KEYS.compat,
      ANTHROPIC_API_KEY: KEYS.anthropic,
      ANTHROPIC_BASE_URL: mocks.anthropic.url,
    },
    upstream: { timeoutMs: 200, idleTimeoutMs: 200, retries: 2, retryBaseMs: 1 },
  });
});
beforeEach(() => {
  for (const mock of Object.values(mocks)) mock.reset();
});
afterAll(async () => {
  await pg?.close();
  await Promise.all(Object.values(mocks).map((mock) => mock?.close()));
});

const chat = (model: string, stream = false) => ({
  model,
  messages: [{ role: 'user', content: 'hello' }],
  ...(stream ? { stream: true } : {}),
});

describe.each(CASES)('$name', ({ name, model, error, openStream }) => {
  const key = KEYS[name];

  it('an upstream 401 echoing the key is a 502 upstream_error with its message, the key scrubbed', async () => {
    mocks[name].reply(
      faults.status(
        401,
        error(`Incorrect API key provided: ${key}. Also seen as ${key.slice(0, 10)}****${key.slice(-4)}.`),
      ),
    );
    const res = await pg.post('/v1/ai/chat/completions', chat(model));
    const body = expectApiError(res, 502, 'upstream_error');
    expect(body.message).toMatch(/^upstream answered 401: Incorrect API key provided: /);
    expect(body.details).toEqual({ upstream_status: 401 });
    expect(res.text).not.toContain(key);
    expect(res.text).not.toContain(key.slice(-4));
    expect(mocks[name].requests).toHaveLength(1); // a 401 is not retried
  });

  it('a long upstream message reaches the client cut to 300 characters, on one line, the key scrubbed before the cut', async () => {
    // The key straddles the 300th character; the message runs on to 5,000 with line breaks.
    const message = `${'a'.repeat(280)} ${key} \n${'Prompt was:\r\n'.repeat(400)}`.slice(0, 5000);
    mocks[name].reply(faults.status(400, error(message)));
    const res = await pg.post('/v1/ai/chat/completions', chat(model));
    const body = expectApiError(res, 502, 'upstream_error');
    const passed = body.message.replace(/^upstream answered 400: /, '');
    expect(passed.length).toBeLessThanOrEqual(300);
    expect(passed).toMatch(/^a{280} \*\*\*/);
    expect(passed).toMatch(/…$/);
    expect(passed).not.toMatch(/[\r\n]/);
    expect(res.text).not.toContain(key.slice(0, 12));
  });

  it('a long error event mid-stream is cut to 300 characters too', async () => {
    const long = `overloaded ${'x'.repeat(3000)}`;
    mocks[name].reply((_req, res) => {
      openStream(res);
      const failure =
        name === 'anthropic' ? anthropicWire.error(long, 'overloaded_error') : openAiWire.error(long);
      res.end(`${name === 'anthropic' ? 'event: error\n' : ''}data: ${JSON.stringify(failure)}\n\n`);
    });
    const { events } = await pg.stream('/v1/ai/chat/completions', chat(model, true));
    const all = await events.rest();
    const failure = all.find((e) => e.data?.error)?.data.error;
    expect(failure?.code).toBe('upstream_error');
    expect(failure.message.length).toBeLessThanOrEqual(300);
    expect(failure.message).toMatch(/^overloaded x+…$/);
  });

  it('a 429 is retried and the second answer reaches the client', async () => {
    mocks[name].script(faults.status(429, error('Rate limit reached'), { 'retry-after': '0' }));
    const res = await pg.post('/v1/ai/text', { model, prompt: 'hello' });
    expect(res.status, res.text).toBe(200);
    expect(res.json.parts).toEqual([{ type: 'text', text: 'Echo: hello' }]);
    expect(mocks[name].requests).toHaveLength(2);
    expect(mocks[name].requests[1]!.body).toEqual(mocks[name].requests[0]!.body);
  });

  it('a 503 before a stream is retried: the client sees one clean stream', async () => {
    mocks[name].script(faults.status(503, error('busy')));
    const { response, events } = await pg.stream('/v1/ai/stream', { model, prompt: 'one two' });
    expect(response.status).toBe(200);
    const all = await events.rest();
    expect(all.map((e) => e.event)).toEqual(['delta', 'delta', 'delta', 'done']);
    expect(all.at(-1)!.data.message.parts[0].text).toBe('Echo: one two');
    expect(mocks[name].requests).toHaveLength(2);
  });

  it('5xx three times in a row (first try and two retries) is a 502 with the upstream message', async () => {
    mocks[name].reply(faults.status(500, error('The server had an error processing your request')));
    const res = await pg.post('/v1/ai/chat/completions', chat(model, true));
    const body = expectApiError(res, 502, 'upstream_error');
    expect(body.message).toBe('upstream answered 500: The server had an error processing your request');
    expect(mocks[name].requests).toHaveLength(3);
  });

  it('a client that disconnects mid-stream cancels the upstream request', async () => {
    mocks[name].reply((_req, res) => openStream(res));
    const controller = new AbortController();
    const { events } = await pg.stream('/v1/ai/chat/completions', chat(model, true), controller.signal);
    expect((await events.next())?.data.choices[0].delta.role).toBe('assistant');
    expect(mocks[name].requests[0]!.aborted).toBe(false);
    controller.abort();
    for (let i = 0; i < 200 && !mocks[name].requests[0]!.aborted; i++)
      await new Promise((r) => setTimeout(r, 5));
    expect(mocks[name].requests[0]!.aborted).toBe(true);
  });
});

describe('timeouts, every provider at once', () => {
  it('an upstream that never answers is a 504 upstream_timeout (not retried)', async () => {
    for (const mock of Object.values(mocks)) mock.reply(faults.silence());
    const results = await Promise.all(
      CASES.map(({ model }) => pg.post('/v1/ai/chat/completions', chat(model))),
    );
    for (const res of results)
      expect(expectApiError(res, 504, 'upstream_timeout').message).toMatch(/within 200 ms/);
    for (const mock of Object.values(mocks)) expect(mock.requests).toHaveLength(1);
  });

  it('an answer that goes silent half-way is a 504 too', async () => {
    for (const mock of Object.values(mocks)) mock.reply(faults.stallMidBody());
    const results = await Promise.all(
      CASES.map(({ model }) => pg.post('/v1/ai/text', { model, prompt: 'x' })),
    );
    for (const res of results) expectApiError(res, 504, 'upstream_timeout');
  });
});

describe('base URLs leading to link-local or cloud metadata addresses', () => {
  it.each([
    ['openai', 'OPENAI_BASE_URL', 'http://169.254.169.254/v1'],
    ['compat', 'OPENAI_COMPATIBLE_BASE_URL', 'http://[fd00:ec2::254]/v1'],
    ['anthropic', 'ANTHROPIC_BASE_URL', 'http://metadata.google.internal'],
  ] as const)('%s: %s=%s is a 502 upstream_not_allowed naming the variable', async (name, variable, url) => {
    await pg.setEnv(variable, url);
    try {
      const { model } = CASES.find((c) => c.name === name)!;
      const res = await pg.post('/v1/ai/chat/completions', chat(model));
      const body = expectApiError(res, 502, 'upstream_not_allowed');
      expect(body.message).toContain(variable);
      expect(body.message).toContain('STUDIO_ALLOW_PRIVATE_UPSTREAMS');
    } finally {
      await pg.removeEnv(variable);
    }
    // The process env's value (the mock, on loopback) is used again.
    const res = await pg.post('/v1/ai/chat/completions', chat(CASES.find((c) => c.name === name)!.model));
    expect(res.status, res.text).toBe(200);
  });
});
