import Anthropic from '@anthropic-ai/sdk';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ChatChunk, ChatRequest } from '../../../services/ai/chat/wire.ts';
import {
  type AwsCredentials,
  awsDefaultCredentials,
  type BedrockEndpoint,
  bedrockApi,
} from '../../../services/ai/providers/bedrock/api.ts';
import { frameSplitter } from '../../../services/ai/providers/bedrock/event-stream.ts';
import type { CallContext, ModelDefinition } from '../../../services/ai/providers/types.ts';
import { UpstreamClient } from '../../../services/ai/upstream.ts';
import { ApiError } from '../../../shared/errors.ts';
import { adminOk } from '../../support/admin.ts';
import { gate } from '../../support/mock-ai-upstreams.ts';
import {
  AUTHORIZATION,
  type BedrockMock,
  bedrockError,
  bedrockMock,
  converseAnswer,
  converseStreamFrames,
  eventFrame,
  exceptionFrame,
  signatureProblem,
  streamFrames,
} from '../../support/mock-bedrock.ts';
import { FAST_UPSTREAM, type ProviderGateway, startProviderGateway } from './support.ts';

// Amazon Bedrock's Converse and ConverseStream (per AWS's API reference), reached through the
// upstream client with SigV4 or a Bedrock API key, against a mock that verifies every signature.

const REGION = 'us-east-1';
const KEY_ID = 'AKIAIOSFODNN7EXAMPLE';
const SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
const TEMP_KEY_ID = 'ASIAIOSFODNN7EXAMPLE';
const TEMP_SECRET = 'je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY';
const SESSION_TOKEN = 'IQoJb3JpZ2luX2VjEXAMPLE-session-token//////////wEaCXVzLWVhc3QtMSJHMEUCIQD';
const API_KEY = 'ABSKQmVkcm9ja0FQSUtleS1leGFtcGxlLWtleQ==';
const UPSTREAM_ID = 'anthropic.claude-3-5-sonnet-20240620-v1:0';
const ENCODED_ID = 'anthropic.claude-3-5-sonnet-20240620-v1%3A0';

let mock: BedrockMock;
const upstream = new UpstreamClient({ ...FAST_UPSTREAM, retries: 0 });

beforeAll(async () => {
  mock = await bedrockMock({
    region: REGION,
    keys: { [KEY_ID]: SECRET, [TEMP_KEY_ID]: TEMP_SECRET },
    apiKey: API_KEY,
  });
});
beforeEach(() => mock.reset());
afterAll(async () => {
  await upstream.close();
  await mock?.close();
});

const model: ModelDefinition = {
  id: 'aws/claude',
  name: 'claude',
  description: '',
  modalities: ['text', 'stream', 'chat'],
  tags: [],
  meta: {},
  upstreamModel: UPSTREAM_ID,
};
const ctx = (): CallContext => ({
  env: { get: () => undefined },
  signal: new AbortController().signal,
  tenant: 'admin',
});

const endpoint = (overrides: Partial<BedrockEndpoint> = {}): BedrockEndpoint => ({
  region: REGION,
  baseUrl: mock.url,
  controlUrl: mock.url,
  apiKey: () => undefined,
  credentials: async () => ({ accessKeyId: KEY_ID, secretAccessKey: SECRET }),
  headers: () => ({}),
  baseUrlVariable: 'the base_url of connection aws',
  ...overrides,
});
const api = (overrides: Partial<BedrockEndpoint> = {}) => bedrockApi(upstream, endpoint(overrides));
const temporary = async (): Promise<AwsCredentials> => ({
  accessKeyId: TEMP_KEY_ID,
  secretAccessKey: TEMP_SECRET,
  sessionToken: SESSION_TOKEN,
});

const chat = (extra: Partial<ChatRequest> = {}): ChatRequest => ({
  model: 'aws/claude',
  messages: [{ role: 'user', content: 'hello' }],
  ...extra,
});

const weather = {
  type: 'function' as const,
  function: {
    name: 'weather',
    description: 'Weather of a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

async function collect(stream: AsyncIterable<ChatChunk>): Promise<ChatChunk[]> {
  const chunks: ChatChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}
const contentOf = (chunks: ChatChunk[]) => chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');

async function rejection(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

/** The request's Authorization header, taken apart. */
function authorization(n = -1) {
  const sent = mock.requests.at(n)!;
  const parts = AUTHORIZATION.exec(String(sent.headers.authorization));
  expect(parts, String(sent.headers.authorization)).not.toBeNull();
  const [, keyId, day, region, service, signedHeaders] = parts!;
  return {
    keyId,
    day,
    scope: `${day}/${region}/${service}/aws4_request`,
    signedHeaders: signedHeaders!.split(';'),
  };
}

describe('bedrock: signed Converse calls', () => {
  it('a plain chat: the encoded model id, a SigV4 signature that verifies, the Converse body, the answer', async () => {
    const completion = await api().chat!(model, chat(), ctx());

    expect(mock.requests).toHaveLength(1);
    const sent = mock.requests[0]!;
    expect(sent.method).toBe('POST');
    expect(sent.path).toBe(`/model/${ENCODED_ID}/converse`);
    expect(sent.headers['content-type']).toBe('application/json');
    expect(sent.headers['x-amz-security-token']).toBeUndefined();
    expect(sent.headers.host).toBe(new URL(mock.url).host);
    const auth = authorization();
    expect(auth.keyId).toBe(KEY_ID);
    expect(auth.scope).toBe(`${sent.headers['x-amz-date']!.slice(0, 8)}/us-east-1/bedrock/aws4_request`);
    expect(auth.signedHeaders).toEqual(['accept', 'content-type', 'host', 'x-amz-date']);
    expect(await signatureProblem(sent, { region: REGION, keys: { [KEY_ID]: SECRET } })).toBeUndefined();
    expect(mock.body()).toEqual({ messages: [{ role: 'user', content: [{ text: 'hello' }] }] });

    expect(completion).toMatchObject({
      object: 'chat.completion',
      model: 'aws/claude',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Echo: hello' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 12, completion_tokens: 4, total_tokens: 16 },
    });
  });

  it('the mock really checks: a changed body or a wrong secret does not verify', async () => {
    await api().chat!(model, chat(), ctx());
    const tampered = { ...mock.requests[0]!, body: Buffer.from('{"messages":[]}') };
    const problem = await signatureProblem(tampered, { region: REGION, keys: { [KEY_ID]: SECRET } });
    expect(problem).toMatch(/does not verify/);
    const wrongSecret = await rejection(
      api({ credentials: async () => ({ accessKeyId: KEY_ID, secretAccessKey: 'not-the-secret' }) }).chat!(
        model,
        chat(),
        ctx(),
      ),
    );
    expect(wrongSecret.code).toBe('upstream_error');
    expect(wrongSecret.message).toMatch(
      /^upstream answered 403: The request signature we calculated does not match/,
    );
    expect(wrongSecret.message).not.toContain('not-the-secret');
  });

  it('temporary credentials: x-amz-security-token sent and signed', async () => {
    await api({ credentials: temporary }).chat!(model, chat(), ctx());
    const sent = mock.requests[0]!;
    expect(sent.headers['x-amz-security-token']).toBe(SESSION_TOKEN);
    const auth = authorization();
    expect(auth.keyId).toBe(TEMP_KEY_ID);
    expect(auth.signedHeaders).toEqual([
      'accept',
      'content-type',
      'host',
      'x-amz-date',
      'x-amz-security-token',
    ]);
    expect(
      await signatureProblem(sent, { region: REGION, keys: { [TEMP_KEY_ID]: TEMP_SECRET } }),
    ).toBeUndefined();
  });

  it("the connection's extra headers are sent and signed", async () => {
    await api({ headers: () => ({ 'X-Team': 'search' }) }).chat!(model, chat(), ctx());
    expect(mock.requests[0]!.headers['x-team']).toBe('search');
    expect(authorization().signedHeaders).toContain('x-team');
  });

  it('system and developer messages, consecutive roles merged, the inference settings', async () => {
    await api().chat!(
      model,
      chat({
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'developer', content: [{ type: 'text', text: 'Answer in French.' }] },
          { role: 'user', content: 'first' },
          { role: 'user', content: [{ type: 'text', text: 'second' }] },
          { role: 'assistant', content: 'ok' },
          { role: 'user', content: 'third' },
        ],
        max_tokens: 50,
        max_completion_tokens: 64,
        temperature: 1.4,
        top_p: 0.9,
        stop: ['END', 'STOP'],
      }),
      ctx(),
    );
    expect(mock.body()).toEqual({
      messages: [
        { role: 'user', content: [{ text: 'first' }, { text: 'second' }] },
        { role: 'assistant', content: [{ text: 'ok' }] },
        { role: 'user', content: [{ text: 'third' }] },
      ],
      system: [{ text: 'Be brief.' }, { text: 'Answer in French.' }],
      inferenceConfig: { maxTokens: 64, temperature: 1, topP: 0.9, stopSequences: ['END', 'STOP'] },
    });

    await api().chat!(model, chat({ max_tokens: 10, stop: 'END' }), ctx());
    expect(mock.body().inferenceConfig).toEqual({ maxTokens: 10, stopSequences: ['END'] });
  });

  it('an image in as a data: URL becomes an image block; links and other formats are refused before any call', async () => {
    const png =
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
    await api().chat!(
      model,
      chat({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is this?' },
              { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } },
              { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,/9j/4AAQ' } },
            ],
          },
        ],
      }),
      ctx(),
    );
    expect(mock.body().messages).toEqual([
      {
        role: 'user',
        content: [
          { text: 'What is this?' },
          { image: { format: 'png', source: { bytes: png } } },
          { image: { format: 'jpeg', source: { bytes: '/9j/4AAQ' } } },
        ],
      },
    ]);

    const link = await rejection(
      api().chat!(
        model,
        chat({
          messages: [
            {
              role: 'user',
              content: [{ type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }],
            },
          ],
        }),
        ctx(),
      ),
    );
    expect(link.code).toBe('validation_failed');
    expect(link.message).toMatch(/data: URL/);
    const bmp = await rejection(
      api().chat!(
        model,
        chat({
          messages: [
            {
              role: 'user',
              content: [{ type: 'image_url', image_url: { url: 'data:image/bmp;base64,Qk0=' } }],
            },
          ],
        }),
        ctx(),
      ),
    );
    expect(bmp.code).toBe('validation_failed');
    expect(bmp.message).toMatch(/image\/bmp/);
    expect(mock.requests).toHaveLength(1);
  });

  it('tools round trip: declared tools, earlier calls and their results in, a tool call out', async () => {
    mock.script((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify(
          converseAnswer(
            [
              { text: 'Let me check Oslo too.' },
              {
                toolUse: {
                  toolUseId: 'tooluse_kZJMlvQmRJ6eAyJE5GIl7Q',
                  name: 'weather',
                  input: { city: 'Oslo' },
                },
              },
            ],
            { stopReason: 'tool_use', inputTokens: 80, outputTokens: 20 },
          ),
        ),
      );
    });
    const completion = await api().chat!(
      model,
      chat({
        tools: [weather, { type: 'function', function: { name: 'clock' } }],
        messages: [
          { role: 'user', content: 'Weather in Bergen and the time?' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              {
                id: 'call_1',
                type: 'function',
                function: { name: 'weather', arguments: '{"city":"Bergen"}' },
              },
              { id: 'call_2', type: 'function', function: { name: 'clock', arguments: '' } },
            ],
          },
          { role: 'tool', tool_call_id: 'call_1', content: '{"temp_c":11,"sky":"rain"}' },
          { role: 'tool', tool_call_id: 'call_2', content: '14:05' },
          { role: 'user', content: 'And Oslo?' },
        ],
      }),
      ctx(),
    );
    expect(mock.body()).toEqual({
      messages: [
        { role: 'user', content: [{ text: 'Weather in Bergen and the time?' }] },
        {
          role: 'assistant',
          content: [
            { toolUse: { toolUseId: 'call_1', name: 'weather', input: { city: 'Bergen' } } },
            { toolUse: { toolUseId: 'call_2', name: 'clock', input: {} } },
          ],
        },
        {
          role: 'user',
          content: [
            { toolResult: { toolUseId: 'call_1', content: [{ json: { temp_c: 11, sky: 'rain' } }] } },
            { toolResult: { toolUseId: 'call_2', content: [{ text: '14:05' }] } },
            { text: 'And Oslo?' },
          ],
        },
      ],
      toolConfig: {
        tools: [
          {
            toolSpec: {
              name: 'weather',
              description: 'Weather of a city',
              inputSchema: { json: weather.function.parameters },
            },
          },
          { toolSpec: { name: 'clock', inputSchema: { json: { type: 'object', properties: {} } } } },
        ],
      },
    });
    expect(completion.choices[0]).toEqual({
      index: 0,
      message: {
        role: 'assistant',
        content: 'Let me check Oslo too.',
        tool_calls: [
          {
            id: 'tooluse_kZJMlvQmRJ6eAyJE5GIl7Q',
            type: 'function',
            function: { name: 'weather', arguments: '{"city":"Oslo"}' },
          },
        ],
      },
      finish_reason: 'tool_calls',
    });
    expect(completion.usage).toEqual({ prompt_tokens: 80, completion_tokens: 20, total_tokens: 100 });
  });

  it('tool_choice: auto → auto, required → any, a named function → tool; none declares no tools unless the history holds calls', async () => {
    const toolConfigFor = async (extra: Partial<ChatRequest>) => {
      await api().chat!(model, chat({ tools: [weather], ...extra }), ctx());
      return mock.body().toolConfig;
    };
    expect((await toolConfigFor({ tool_choice: 'auto' })).toolChoice).toEqual({ auto: {} });
    expect((await toolConfigFor({ tool_choice: 'required' })).toolChoice).toEqual({ any: {} });
    expect(
      (await toolConfigFor({ tool_choice: { type: 'function', function: { name: 'weather' } } })).toolChoice,
    ).toEqual({ tool: { name: 'weather' } });
    expect(await toolConfigFor({})).not.toHaveProperty('toolChoice');
    expect(await toolConfigFor({ tool_choice: 'none' })).toBeUndefined();
    const withHistory = await toolConfigFor({
      tool_choice: 'none',
      messages: [
        { role: 'user', content: 'Weather?' },
        {
          role: 'assistant',
          content: '',
          tool_calls: [
            { id: 'c', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'c', content: 'sunny' },
      ],
    });
    expect(withHistory).toEqual({ tools: [expect.objectContaining({ toolSpec: expect.anything() })] });
    await api().chat!(model, chat({ tool_choice: 'required' }), ctx());
    expect(mock.body()).not.toHaveProperty('toolConfig');
  });

  it('stop reasons map to finish reasons', async () => {
    const cases: [string, string][] = [
      ['end_turn', 'stop'],
      ['stop_sequence', 'stop'],
      ['max_tokens', 'length'],
      ['tool_use', 'tool_calls'],
      ['guardrail_intervened', 'content_filter'],
      ['content_filtered', 'content_filter'],
    ];
    for (const [stopReason, finish] of cases) {
      mock.script((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(converseAnswer([{ text: 'x' }], { stopReason })));
      });
      const completion = await api().chat!(model, chat(), ctx());
      expect(completion.choices[0]!.finish_reason, stopReason).toBe(finish);
    }
  });

  it("a 4xx passes Bedrock's own message on as a 502; an answer without a message is a 502 too", async () => {
    mock.script(bedrockError(400, 'ValidationException', 'The provided model identifier is invalid.'));
    const invalid = await rejection(api().chat!(model, chat(), ctx()));
    expect(invalid.code).toBe('upstream_error');
    expect(invalid.status).toBe(502);
    expect(invalid.message).toBe('upstream answered 400: The provided model identifier is invalid.');
    expect(invalid.options.details).toEqual({ upstream_status: 400 });

    mock.script((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"stopReason":"end_turn"}');
    });
    expect((await rejection(api().chat!(model, chat(), ctx()))).message).toMatch(/without a message/);
  });

  it('credentials that cannot be had are a clear 502 and nothing is sent', async () => {
    const error = await rejection(
      api({
        credentials: async () => {
          throw new Error('Could not load credentials from any providers');
        },
      }).chat!(model, chat(), ctx()),
    );
    expect(error.code).toBe('upstream_error');
    expect(error.message).toBe(
      'no AWS credentials to sign with: Could not load credentials from any providers',
    );
    expect(mock.requests).toHaveLength(0);
  });
});

describe('bedrock: API key', () => {
  it('a Bedrock API key goes as a bearer token, unsigned; the credentials are not asked for', async () => {
    const completion = await api({
      apiKey: () => API_KEY,
      credentials: async () => {
        throw new Error('not to be asked');
      },
    }).chat!(model, chat(), ctx());
    const sent = mock.requests[0]!;
    expect(sent.path).toBe(`/model/${ENCODED_ID}/converse`);
    expect(sent.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(sent.headers['x-amz-date']).toBeUndefined();
    expect(sent.headers['x-amz-security-token']).toBeUndefined();
    expect(completion.choices[0]!.message.content).toBe('Echo: hello');

    const wrong = await rejection(api({ apiKey: () => 'ABSK-wrong-key' }).chat!(model, chat(), ctx()));
    expect(wrong.message).toMatch(/^upstream answered 403: /);
    expect(wrong.message).not.toContain('ABSK-wrong-key');
  });
});

describe('bedrock: ConverseStream', () => {
  it('text in chunks, the finish reason, then usage when asked for; signed like the rest', async () => {
    mock.script(
      streamFrames(
        converseStreamFrames([{ text: ['Hel', 'lo', ' there'] }], { inputTokens: 9, outputTokens: 3 }),
      ),
    );
    const chunks = await collect(
      await api({ credentials: temporary }).chatStream!(
        model,
        chat({ stream: true, stream_options: { include_usage: true } }),
        ctx(),
      ),
    );
    const sent = mock.requests[0]!;
    expect(sent.path).toBe(`/model/${ENCODED_ID}/converse-stream`);
    expect(sent.headers.accept).toBe('application/vnd.amazon.eventstream');
    expect(authorization().scope).toMatch(/^\d{8}\/us-east-1\/bedrock\/aws4_request$/);
    expect(
      await signatureProblem(sent, { region: REGION, keys: { [TEMP_KEY_ID]: TEMP_SECRET } }),
    ).toBeUndefined();
    expect(mock.body()).toEqual({ messages: [{ role: 'user', content: [{ text: 'hello' }] }] });

    expect(chunks[0]!.choices[0]!.delta).toEqual({ role: 'assistant', content: '' });
    expect(contentOf(chunks)).toBe('Hello there');
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    expect(chunks.every((c) => c.model === 'aws/claude' && c.object === 'chat.completion.chunk')).toBe(true);
    const finish = chunks.at(-2)!;
    expect(finish.choices).toEqual([{ index: 0, delta: {}, finish_reason: 'stop' }]);
    expect(chunks.at(-1)).toMatchObject({
      choices: [],
      usage: { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 },
    });
  });

  it('no usage chunk unless asked for', async () => {
    const chunks = await collect(await api().chatStream!(model, chat({ stream: true }), ctx()));
    expect(contentOf(chunks)).toBe('Echo: hello');
    expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe('stop');
    expect(chunks.some((c) => c.usage)).toBe(false);
  });

  it('tool use: index, id and name first, then the input in pieces; finish tool_calls', async () => {
    mock.script(
      streamFrames(
        converseStreamFrames(
          [
            { text: ['Checking.'] },
            { tool: { toolUseId: 'tooluse_A', name: 'weather' }, input: ['{"ci', 'ty": "Bergen"}'] },
            { tool: { toolUseId: 'tooluse_B', name: 'clock' }, input: ['{}'] },
          ],
          { stopReason: 'tool_use' },
        ),
      ),
    );
    const chunks = await collect(
      await api().chatStream!(model, chat({ stream: true, tools: [weather] }), ctx()),
    );
    expect(mock.body().toolConfig.tools[0].toolSpec.name).toBe('weather');
    const calls = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    expect(calls).toEqual([
      { index: 0, id: 'tooluse_A', type: 'function', function: { name: 'weather', arguments: '' } },
      { index: 0, function: { arguments: '{"ci' } },
      { index: 0, function: { arguments: 'ty": "Bergen"}' } },
      { index: 1, id: 'tooluse_B', type: 'function', function: { name: 'clock', arguments: '' } },
      { index: 1, function: { arguments: '{}' } },
    ]);
    expect(contentOf(chunks)).toBe('Checking.');
    expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe('tool_calls');
  });

  it('frames cut anywhere across TCP writes are decoded as the bytes arrive', async () => {
    const held = gate();
    const [start, ...rest] = converseStreamFrames([{ text: ['one ', 'two ', 'three'] }]);
    const delta = rest[0]!;
    const whole = Buffer.concat(rest.slice(1));
    mock.script(
      streamFrames([
        // messageStart, and the first 5 bytes of the next frame: not even its prelude.
        Buffer.concat([start!, delta.subarray(0, 5)]),
        held.wait,
        delta.subarray(5, 20),
        delta.subarray(20),
        // The rest, each write cutting a frame in two.
        ...[whole.subarray(0, 7), whole.subarray(7, 60), whole.subarray(60)],
      ]),
    );
    const stream = (await api().chatStream!(model, chat({ stream: true }), ctx()))[Symbol.asyncIterator]();
    // The first frame is yielded while the second is still incomplete on the wire.
    const first = await stream.next();
    expect(first.value!.choices[0]!.delta).toEqual({ role: 'assistant', content: '' });
    held.open();
    const chunks: ChatChunk[] = [];
    for (let next = await stream.next(); !next.done; next = await stream.next()) chunks.push(next.value);
    expect(contentOf(chunks)).toBe('one two three');
    expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe('stop');
  });

  it('an exception event mid-stream fails the stream with its type and message', async () => {
    mock.script(
      streamFrames([
        eventFrame('messageStart', { role: 'assistant' }),
        eventFrame('contentBlockDelta', { delta: { text: 'Partial' }, contentBlockIndex: 0 }),
        exceptionFrame('throttlingException', 'Too many tokens, please wait before trying again.'),
      ]),
    );
    const chunks: ChatChunk[] = [];
    const failure = await rejection(
      (async () => {
        for await (const chunk of await api().chatStream!(model, chat({ stream: true }), ctx()))
          chunks.push(chunk);
      })(),
    );
    expect(contentOf(chunks)).toBe('Partial');
    expect(failure.code).toBe('upstream_error');
    expect(failure.message).toBe('throttlingException: Too many tokens, please wait before trying again.');
  });

  it('an error frame (code and message in its headers) fails the stream too', async () => {
    const codec = new EventStreamCodec(toUtf8, fromUtf8);
    const error = codec.encode({
      headers: {
        ':message-type': { type: 'string', value: 'error' },
        ':error-code': { type: 'string', value: 'InternalFailure' },
        ':error-message': { type: 'string', value: 'An internal error occurred.' },
      },
      body: new Uint8Array(0),
    });
    mock.script(streamFrames([eventFrame('messageStart', { role: 'assistant' }), error]));
    const failure = await rejection(collect(await api().chatStream!(model, chat({ stream: true }), ctx())));
    expect(failure.code).toBe('upstream_error');
    expect(failure.message).toBe('InternalFailure: An internal error occurred.');
  });

  it('a stream that ends before messageStop, or mid-frame, fails', async () => {
    const [start, delta] = converseStreamFrames([{ text: ['cut'] }]);
    mock.script(streamFrames([start!, delta!]), streamFrames([start!, delta!.subarray(0, 10)]));
    const early = await rejection(collect(await api().chatStream!(model, chat({ stream: true }), ctx())));
    expect(early.message).toBe('the upstream stream ended before messageStop');
    const midFrame = await rejection(collect(await api().chatStream!(model, chat({ stream: true }), ctx())));
    expect(midFrame.message).toBe('the upstream stream ended mid-frame');
  });

  it('a 4xx before the stream starts rejects the call itself', async () => {
    mock.script(
      bedrockError(
        403,
        'AccessDeniedException',
        "You don't have access to the model with the specified model ID.",
      ),
    );
    const error = await rejection(api().chatStream!(model, chat({ stream: true }), ctx()));
    expect(error.message).toBe(
      "upstream answered 403: You don't have access to the model with the specified model ID.",
    );
  });
});

describe('bedrock: the event stream framing', () => {
  const codec = new EventStreamCodec(toUtf8, fromUtf8);

  it('every cut of two frames gives the same two messages', async () => {
    const frames = [
      eventFrame('messageStart', { role: 'assistant' }),
      eventFrame('messageStop', { stopReason: 'end_turn' }),
    ];
    const bytes = Buffer.concat(frames);
    const expected = frames.map((f) => codec.decode(f));
    for (let cut = 0; cut <= bytes.length; cut++) {
      const splitter = await frameSplitter();
      const got = [...splitter.push(bytes.subarray(0, cut)), ...splitter.push(bytes.subarray(cut))];
      expect(got, `cut at ${cut}`).toEqual(expected);
      expect(splitter.partial).toBe(false);
    }
  });

  it('a frame whose checksum is wrong, or whose length is impossible, is a 502', async () => {
    const frame = Buffer.from(eventFrame('messageStart', { role: 'assistant' }));
    frame[frame.length - 1]! ^= 0xff;
    const corrupt = await frameSplitter();
    expect(() => corrupt.push(frame)).toThrow(/corrupt event stream frame/);
    const malformed = await frameSplitter();
    expect(() => malformed.push(Buffer.alloc(12))).toThrow(/malformed event stream frame/);
  });
});

describe('bedrock: listing models', () => {
  it('GET /foundation-models on the control plane, signed; text models chat (and stream when they can), embedders embed', async () => {
    const models = await api({ baseUrl: 'http://127.0.0.1:9/unused' }).listModels(ctx());
    const sent = mock.requests[0]!;
    expect(sent.method).toBe('GET');
    expect(sent.path).toBe('/foundation-models');
    expect(sent.body.length).toBe(0);
    expect(authorization().signedHeaders).toEqual(['accept', 'host', 'x-amz-date']);
    expect(await signatureProblem(sent, { region: REGION, keys: { [KEY_ID]: SECRET } })).toBeUndefined();
    expect(models).toEqual([
      { id: 'anthropic.claude-3-5-sonnet-20240620-v1:0', modalities: ['text', 'stream', 'chat'] },
      { id: 'amazon.titan-embed-text-v2:0', modalities: ['embed'] },
      { id: 'cohere.command-light-text-v14', modalities: ['text', 'chat'] },
    ]);
  });

  it('an answer without modelSummaries is a 502', async () => {
    mock.script((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"models":[]}');
    });
    expect((await rejection(api().listModels(ctx()))).message).toMatch(/without modelSummaries/);
  });
});

describe('bedrock: the standard AWS credential chain', () => {
  const saved = { ...process.env };
  afterEach(() => {
    for (const key of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN']) {
      if (saved[key] === undefined) delete process.env[key];
      else process.env[key] = saved[key];
    }
  });

  it('reads AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN, and signs with them', async () => {
    process.env.AWS_ACCESS_KEY_ID = TEMP_KEY_ID;
    process.env.AWS_SECRET_ACCESS_KEY = TEMP_SECRET;
    process.env.AWS_SESSION_TOKEN = SESSION_TOKEN;
    const credentials = awsDefaultCredentials();
    expect(await credentials()).toEqual({
      accessKeyId: TEMP_KEY_ID,
      secretAccessKey: TEMP_SECRET,
      sessionToken: SESSION_TOKEN,
    });
    await api({ credentials }).chat!(model, chat(), ctx());
    expect(mock.requests[0]!.headers['x-amz-security-token']).toBe(SESSION_TOKEN);
    expect(
      await signatureProblem(mock.requests[0]!, { region: REGION, keys: { [TEMP_KEY_ID]: TEMP_SECRET } }),
    ).toBeUndefined();
  });
});

describe('bedrock: through the gateway', () => {
  let pg: ProviderGateway;
  beforeAll(async () => {
    pg = await startProviderGateway({});
  });
  afterAll(async () => {
    await pg?.close();
  });

  it('a bedrock connection serves chat through the official openai client', async () => {
    await adminOk(pg.gw, 'POST', '/v1/ai/providers/upsert', {
      id: 'aws',
      kind: 'bedrock',
      base_url: mock.url,
      options: { region: REGION, access_key_id: KEY_ID, secret_access_key: SECRET },
      models: [{ id: 'claude', upstream_id: UPSTREAM_ID }],
    });
    const completion = await pg.client().chat.completions.create({
      model: 'aws/claude',
      messages: [{ role: 'user', content: 'hi from the gateway' }],
    });
    expect(completion.choices[0]!.message.content).toBe('Echo: hi from the gateway');
    const sent = mock.requests.at(-1)!;
    expect(sent.path).toBe(`/model/${ENCODED_ID}/converse`);
    expect(await signatureProblem(sent, { region: REGION, keys: { [KEY_ID]: SECRET } })).toBeUndefined();

    const stream = await pg.client().chat.completions.create({
      model: 'aws/claude',
      messages: [{ role: 'user', content: 'stream it' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: unknown;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('Echo: stream it');
    expect(usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 4, total_tokens: 16 });
    expect(mock.requests.at(-1)!.path).toBe(`/model/${ENCODED_ID}/converse-stream`);
  });

  it("the Responses API (openai's responses.create) and Anthropic's messages.create reach Converse, translated", async () => {
    const response = await pg.client().responses.create({ model: 'aws/claude', input: 'through responses' });
    expect(response.output_text).toBe('Echo: through responses');
    expect(mock.requests.at(-1)!.path).toBe(`/model/${ENCODED_ID}/converse`);

    const claude = new Anthropic({
      baseURL: `${pg.gw.url}/v1/ai/anthropic`,
      apiKey: pg.token,
      maxRetries: 0,
    });
    const message = await claude.messages.create({
      model: 'aws/claude',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'through messages' }],
    });
    expect(message.content).toEqual([
      expect.objectContaining({ type: 'text', text: 'Echo: through messages' }),
    ]);
    const sent = mock.requests.at(-1)!;
    expect(sent.path).toBe(`/model/${ENCODED_ID}/converse`);
    expect(JSON.parse(sent.body.toString()).inferenceConfig).toMatchObject({ maxTokens: 64 });
  });
});
