import Anthropic from '@anthropic-ai/sdk';
import type OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ChatChunk, ChatRequest } from '../../../services/ai/chat/wire.ts';
import { GEMINI_BASE_URL, geminiApi } from '../../../services/ai/providers/gemini/api.ts';
import { toGemini } from '../../../services/ai/providers/gemini/translate.ts';
import { FINISH_REASONS, finishReasonOf } from '../../../services/ai/providers/gemini/wire.ts';
import type { CallContext, ModelDefinition } from '../../../services/ai/providers/types.ts';
import { UpstreamClient } from '../../../services/ai/upstream.ts';
import { ApiError } from '../../../shared/errors.ts';
import { asAdmin } from '../../support/admin.ts';
import type { Json, WireMock } from '../../support/mock-ai-upstreams.ts';
import { sendJson } from '../../support/mock-ai-upstreams.ts';
import { geminiError, geminiMock, geminiSse, geminiStream, geminiWire } from '../../support/mock-gemini.ts';
import { FAST_UPSTREAM, type ProviderGateway, startProviderGateway } from './support.ts';

// The `gemini` provider's calls (geminiApi) against a mock of Google's Gemini API that records the
// exact wire it receives: path, query, headers and body.

const KEY = 'AIzaSyD-gemini-test-key-0123456789abcdef';
/** A thought signature as Gemini 3 sends it: opaque base64. */
const SIGNATURE = 'CiIBVKhc7oDPpHNDhbzhcR5ThEtBD0MQvKmH8A2YPcdoOD90';
const GENERATE = '/v1beta/models/gemini-2.5-flash:generateContent';
const STREAM = '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse';

let mock: WireMock;
let upstream: UpstreamClient;
let api: ReturnType<typeof geminiApi>;

const flash: ModelDefinition = {
  id: 'gem/flash',
  name: 'flash',
  description: 'gemini-2.5-flash',
  modalities: ['text', 'stream', 'chat'],
  tags: [],
  meta: {},
  upstreamModel: 'gemini-2.5-flash',
};
const embedder: ModelDefinition = {
  ...flash,
  id: 'gem/embed',
  modalities: ['embed'],
  upstreamModel: 'gemini-embedding-001',
};

const ctx = (): CallContext => ({
  env: { get: () => undefined },
  signal: new AbortController().signal,
  tenant: 'studio-p',
  retries: 0,
});

const chat = (messages: ChatRequest['messages'], extra: Partial<ChatRequest> = {}): ChatRequest => ({
  model: 'gem/flash',
  messages,
  ...extra,
});

async function collect(chunks: AsyncIterable<ChatChunk>): Promise<ChatChunk[]> {
  const all: ChatChunk[] = [];
  for await (const chunk of chunks) all.push(chunk);
  return all;
}

/** What a chunk list adds up to, one entry per chunk: the role, text, tool call, finish or usage it carries. */
const shapes = (chunks: ChatChunk[]) =>
  chunks.map((c) =>
    c.usage
      ? { usage: c.usage }
      : { index: c.choices[0]!.index, ...c.choices[0]!.delta, finish: c.choices[0]!.finish_reason },
  );

const weatherTool = {
  type: 'function' as const,
  function: {
    name: 'weather',
    description: 'Weather of a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

beforeAll(async () => {
  mock = await geminiMock();
  upstream = new UpstreamClient(FAST_UPSTREAM);
  api = geminiApi(upstream, {
    baseUrl: `${mock.url}/`,
    apiKey: () => KEY,
    headers: () => ({ 'x-goog-user-project': 'studio-billing' }),
    baseUrlVariable: 'the base_url of connection gem',
  });
});
beforeEach(() => mock.reset());
afterAll(async () => {
  await upstream?.close();
  await mock?.close();
});

describe('gemini chat: OpenAI chat → generateContent → OpenAI chat', () => {
  it('sends a plain chat to the model with the key in x-goog-api-key and the extra headers; answers a completion', async () => {
    expect(GEMINI_BASE_URL).toBe('https://generativelanguage.googleapis.com');
    mock.reply((_req, res) =>
      sendJson(
        res,
        200,
        geminiWire.response([{ text: 'Hello' }, { text: ' there.' }], {
          finishReason: 'STOP',
          usage: { promptTokenCount: 4, candidatesTokenCount: 3, thoughtsTokenCount: 5, totalTokenCount: 12 },
        }),
      ),
    );
    const completion = await api.chat!(flash, chat([{ role: 'user', content: 'hello' }]), ctx());

    const sent = mock.requests.at(-1)!;
    expect(sent.method).toBe('POST');
    expect(sent.path).toBe(GENERATE);
    expect(sent.headers['x-goog-api-key']).toBe(KEY);
    expect(sent.headers['x-goog-user-project']).toBe('studio-billing');
    expect(sent.headers['content-type']).toBe('application/json');
    expect(sent.headers.authorization).toBeUndefined();
    expect(mock.body()).toEqual({ contents: [{ role: 'user', parts: [{ text: 'hello' }] }] });

    expect(completion).toMatchObject({
      object: 'chat.completion',
      model: 'gem/flash',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there.' }, finish_reason: 'stop' }],
      // Thinking tokens are output tokens the caller pays for.
      usage: { prompt_tokens: 4, completion_tokens: 8, total_tokens: 12 },
    });
    expect(completion.id).toMatch(/^chatcmpl-/);
  });

  it('system and developer messages become systemInstruction; turns alternate user/model; settings go in generationConfig', async () => {
    const completion = await api.chat!(
      flash,
      chat(
        [
          { role: 'system', content: 'Be brief.' },
          { role: 'developer', content: [{ type: 'text', text: 'Answer in French.' }] },
          { role: 'user', content: 'Hi' },
          { role: 'assistant', content: 'Bonjour.' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'And ' },
              { type: 'text', text: 'again?' },
            ],
          },
        ],
        {
          temperature: 0.2,
          top_p: 0.9,
          max_tokens: 50,
          max_completion_tokens: 64,
          stop: 'END',
          n: 2,
          seed: 42,
          presence_penalty: 0.5,
          frequency_penalty: -0.5,
          response_format: {
            type: 'json_schema',
            json_schema: {
              name: 'answer',
              strict: true,
              schema: {
                type: 'object',
                properties: { text: { type: 'string' } },
                required: ['text'],
                additionalProperties: false,
              },
            },
          },
        },
      ),
      ctx(),
    );
    expect(mock.body()).toEqual({
      contents: [
        { role: 'user', parts: [{ text: 'Hi' }] },
        { role: 'model', parts: [{ text: 'Bonjour.' }] },
        { role: 'user', parts: [{ text: 'And ' }, { text: 'again?' }] },
      ],
      systemInstruction: { parts: [{ text: 'Be brief.' }, { text: 'Answer in French.' }] },
      generationConfig: {
        temperature: 0.2,
        topP: 0.9,
        maxOutputTokens: 64,
        stopSequences: ['END'],
        candidateCount: 2,
        seed: 42,
        presencePenalty: 0.5,
        frequencyPenalty: -0.5,
        responseMimeType: 'application/json',
        responseJsonSchema: {
          type: 'object',
          properties: { text: { type: 'string' } },
          required: ['text'],
          additionalProperties: false,
        },
      },
    });
    expect(completion.choices[0]!.message.content).toBe('echo: And again?');

    await api.chat!(
      flash,
      chat([{ role: 'user', content: 'x' }], { response_format: { type: 'json_object' } }),
      ctx(),
    );
    expect(mock.body().generationConfig).toEqual({ responseMimeType: 'application/json' });
  });

  it('images: a data: URL goes inline, an http(s) URL as fileData with its mime type from the extension (else image/jpeg)', async () => {
    await api.chat!(
      flash,
      chat([
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is in these?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.webp?size=large' } },
            { type: 'image_url', image_url: { url: 'https://example.com/photo' } },
          ],
        },
      ]),
      ctx(),
    );
    expect(mock.body().contents).toEqual([
      {
        role: 'user',
        parts: [
          { text: 'What is in these?' },
          { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } },
          { fileData: { fileUri: 'https://example.com/cat.webp?size=large', mimeType: 'image/webp' } },
          { fileData: { fileUri: 'https://example.com/photo', mimeType: 'image/jpeg' } },
        ],
      },
    ]);
  });

  it('audio and files: input_audio and a file part with data go inline with their mime types', () => {
    const request = chat([
      {
        role: 'user',
        content: [
          { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
          { type: 'input_audio', input_audio: { data: 'SUQz', format: 'mp3' } },
          { type: 'file', file: { filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } },
        ],
      },
    ]);
    expect(toGemini(request).contents).toEqual([
      {
        role: 'user',
        parts: [
          { inlineData: { mimeType: 'audio/wav', data: 'UklGRg==' } },
          { inlineData: { mimeType: 'audio/mp3', data: 'SUQz' } },
          { inlineData: { mimeType: 'application/pdf', data: 'JVBERi0=' } },
        ],
      },
    ]);
  });

  it('tools round trip: declarations out, function calls back as tool_calls, results back as functionResponse parts', async () => {
    mock.reply((_req, res) =>
      sendJson(
        res,
        200,
        geminiWire.response(
          [
            { text: 'Checking both.' },
            { functionCall: { name: 'weather', args: { city: 'Bergen' } }, thoughtSignature: SIGNATURE },
            { functionCall: { name: 'weather', args: { city: 'Oslo' } } },
          ],
          { finishReason: 'STOP' },
        ),
      ),
    );
    const asked = await api.chat!(
      flash,
      chat([{ role: 'user', content: 'Weather in Bergen and Oslo?' }], {
        tools: [weatherTool],
        tool_choice: 'auto',
      }),
      ctx(),
    );
    expect(mock.body()).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'Weather in Bergen and Oslo?' }] }],
      tools: [
        {
          functionDeclarations: [
            {
              name: 'weather',
              description: 'Weather of a city',
              parametersJsonSchema: weatherTool.function.parameters,
            },
          ],
        },
      ],
      toolConfig: { functionCallingConfig: { mode: 'AUTO' } },
    });
    const message = asked.choices[0]!.message;
    expect(asked.choices[0]!.finish_reason).toBe('tool_calls');
    expect(message.content).toBe('Checking both.');
    // Gemini 3 signs a turn's calls on the first: the signature rides along where Google's own
    // OpenAI compatibility puts it.
    expect(message.tool_calls).toEqual([
      {
        id: 'call_0',
        type: 'function',
        function: { name: 'weather', arguments: '{"city":"Bergen"}' },
        extra_content: { google: { thought_signature: SIGNATURE } },
      },
      { id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } },
    ]);

    mock.reply((_req, res) =>
      sendJson(res, 200, geminiWire.response([{ text: 'Rain, then sun.' }], { finishReason: 'STOP' })),
    );
    const answered = await api.chat!(
      flash,
      chat(
        [
          { role: 'user', content: 'Weather in Bergen and Oslo?' },
          { role: 'assistant', content: null, tool_calls: message.tool_calls!.map((c) => ({ ...c })) },
          { role: 'tool', tool_call_id: 'call_0', content: '{"sky":"rain","celsius":9}' },
          { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
        ],
        { tools: [weatherTool] },
      ),
      ctx(),
    );
    expect(mock.body().contents).toEqual([
      { role: 'user', parts: [{ text: 'Weather in Bergen and Oslo?' }] },
      {
        role: 'model',
        parts: [
          { functionCall: { name: 'weather', args: { city: 'Bergen' } }, thoughtSignature: SIGNATURE },
          { functionCall: { name: 'weather', args: { city: 'Oslo' } } },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'weather', response: { sky: 'rain', celsius: 9 } } },
          { functionResponse: { name: 'weather', response: { result: 'sunny' } } },
        ],
      },
    ]);
    expect(mock.body()).not.toHaveProperty('toolConfig');
    expect(answered.choices[0]).toMatchObject({
      message: { content: 'Rain, then sun.' },
      finish_reason: 'stop',
    });
  });

  it("calls that come back without Gemini's signature (a client that dropped it) carry the documented stand-in on the turn's first", () => {
    const request = chat([
      { role: 'user', content: 'Weather?' },
      {
        role: 'assistant',
        content: 'Looking.',
        tool_calls: [
          { id: 'a', type: 'function', function: { name: 'weather', arguments: '{"city":"Bergen"}' } },
          { id: 'b', type: 'function', function: { name: 'weather', arguments: '' } },
        ],
      },
      { role: 'tool', tool_call_id: 'a', content: '[1,2]' },
      { role: 'tool', tool_call_id: 'b', content: 'null' },
    ]);
    expect(toGemini(request).contents.slice(1)).toEqual([
      {
        role: 'model',
        parts: [
          { text: 'Looking.' },
          {
            functionCall: { name: 'weather', args: { city: 'Bergen' } },
            thoughtSignature: 'skip_thought_signature_validator',
          },
          { functionCall: { name: 'weather', args: {} } },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'weather', response: { result: '[1,2]' } } },
          { functionResponse: { name: 'weather', response: { result: 'null' } } },
        ],
      },
    ]);
  });

  it('a tool result that answers no earlier call is refused before anything is sent', async () => {
    const refused = api.chat!(
      flash,
      chat([
        { role: 'user', content: 'x' },
        { role: 'tool', tool_call_id: 'call_9', content: '1' },
      ]),
      ctx(),
    );
    await expect(refused).rejects.toMatchObject({ code: 'validation_failed', status: 400 });
    await expect(refused).rejects.toThrow(/call_9.*function's name/);
    expect(mock.requests).toHaveLength(0);
  });

  it('tool_choice → functionCallingConfig: auto AUTO, none NONE, required ANY, a named function ANY with it alone', () => {
    const config = (extra: Partial<ChatRequest>) =>
      toGemini(chat([{ role: 'user', content: 'x' }], { tools: [weatherTool], ...extra })).toolConfig;
    expect(config({ tool_choice: 'auto' })).toEqual({ functionCallingConfig: { mode: 'AUTO' } });
    expect(config({ tool_choice: 'none' })).toEqual({ functionCallingConfig: { mode: 'NONE' } });
    expect(config({ tool_choice: 'required' })).toEqual({ functionCallingConfig: { mode: 'ANY' } });
    expect(config({ tool_choice: { type: 'function', function: { name: 'weather' } } })).toEqual({
      functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['weather'] },
    });
    expect(config({})).toBeUndefined();
    // Without tools there is nothing to choose from.
    expect(toGemini(chat([{ role: 'user', content: 'x' }], { tool_choice: 'required' }))).not.toHaveProperty(
      'toolConfig',
    );
  });

  it('MAX_TOKENS ends an answer cut short: finish_reason length with the text so far', async () => {
    mock.reply((_req, res) =>
      sendJson(
        res,
        200,
        geminiWire.response([{ text: 'The first part of' }], { finishReason: 'MAX_TOKENS' }),
      ),
    );
    const completion = await api.chat!(
      flash,
      chat([{ role: 'user', content: 'long' }], { max_tokens: 4 }),
      ctx(),
    );
    expect(mock.body().generationConfig).toEqual({ maxOutputTokens: 4 });
    expect(completion.choices[0]).toMatchObject({
      message: { content: 'The first part of' },
      finish_reason: 'length',
    });
  });

  it('finish reasons as a table; a candidate that called functions finishes with tool_calls', () => {
    expect(
      [
        'STOP',
        'MAX_TOKENS',
        'SAFETY',
        'RECITATION',
        'BLOCKLIST',
        'PROHIBITED_CONTENT',
        'SPII',
        'IMAGE_SAFETY',
        'MALFORMED_FUNCTION_CALL',
        'LANGUAGE',
        'OTHER',
        'FINISH_REASON_UNSPECIFIED',
      ].map((reason) => finishReasonOf(reason, false)),
    ).toEqual([
      'stop',
      'length',
      'content_filter',
      'content_filter',
      'content_filter',
      'content_filter',
      'content_filter',
      'content_filter',
      'stop',
      'stop',
      'stop',
      'stop',
    ]);
    expect(finishReasonOf('STOP', true)).toBe('tool_calls');
    expect(finishReasonOf('MAX_TOKENS', true)).toBe('length');
    expect(Object.keys(FINISH_REASONS)).toContain('MALFORMED_FUNCTION_CALL');
  });
});

describe('gemini safety blocks are answers, not errors', () => {
  it('a blocked prompt (promptFeedback.blockReason, no candidates): an empty content_filter answer', async () => {
    mock.reply((_req, res) =>
      sendJson(res, 200, {
        promptFeedback: {
          blockReason: 'SAFETY',
          safetyRatings: [
            { category: 'HARM_CATEGORY_DANGEROUS_CONTENT', probability: 'HIGH', blocked: true },
          ],
        },
        usageMetadata: { promptTokenCount: 9, totalTokenCount: 9 },
        modelVersion: 'gemini-2.5-flash',
      }),
    );
    const completion = await api.chat!(flash, chat([{ role: 'user', content: 'something bad' }]), ctx());
    expect(completion.choices).toEqual([
      { index: 0, message: { role: 'assistant', content: '' }, finish_reason: 'content_filter' },
    ]);
    expect(completion.usage).toEqual({ prompt_tokens: 9, completion_tokens: 0, total_tokens: 9 });
  });

  it('a blocked candidate (finishReason SAFETY, no content): an empty content_filter answer', async () => {
    mock.reply((_req, res) =>
      sendJson(res, 200, {
        candidates: [
          {
            finishReason: 'SAFETY',
            index: 0,
            safetyRatings: [{ category: 'HARM_CATEGORY_HARASSMENT', probability: 'MEDIUM', blocked: true }],
          },
        ],
        usageMetadata: { promptTokenCount: 6, totalTokenCount: 6 },
      }),
    );
    const completion = await api.chat!(flash, chat([{ role: 'user', content: 'x' }]), ctx());
    expect(completion.choices).toEqual([
      { index: 0, message: { role: 'assistant', content: '' }, finish_reason: 'content_filter' },
    ]);
  });

  it('a blocked prompt in a stream: a role chunk and a content_filter finish', async () => {
    mock.reply(
      geminiStream([
        {
          promptFeedback: { blockReason: 'PROHIBITED_CONTENT' },
          usageMetadata: { promptTokenCount: 5, totalTokenCount: 5 },
        },
      ]),
    );
    const chunks = await collect(
      await api.chatStream!(flash, chat([{ role: 'user', content: 'x' }], { stream: true }), ctx()),
    );
    expect(shapes(chunks)).toEqual([
      { index: 0, role: 'assistant', content: '', finish: null },
      { index: 0, finish: 'content_filter' },
    ]);
  });
});

describe('gemini streaming: streamGenerateContent?alt=sse → OpenAI chunks', () => {
  it('text deltas, a finish chunk, and usage in a last chunk of its own when asked for', async () => {
    mock.reply(
      geminiStream([
        geminiWire.response([{ text: 'The sky' }], {
          usage: { promptTokenCount: 5, candidatesTokenCount: 2, totalTokenCount: 7 },
        }),
        geminiWire.response([{ text: 'Thinking about it', thought: true }, { text: ' is blue.' }], {
          finishReason: 'STOP',
          usage: { promptTokenCount: 5, candidatesTokenCount: 4, thoughtsTokenCount: 3, totalTokenCount: 12 },
        }),
      ]),
    );
    const stream = await api.chatStream!(
      flash,
      chat([{ role: 'user', content: 'Why is the sky blue?' }], {
        stream: true,
        stream_options: { include_usage: true },
      }),
      ctx(),
    );
    const chunks = await collect(stream);

    const sent = mock.requests.at(-1)!;
    expect(sent.path).toBe(STREAM);
    expect(sent.headers['x-goog-api-key']).toBe(KEY);
    expect(sent.headers['x-goog-user-project']).toBe('studio-billing');
    // Streaming is the path's business: the body is generateContent's.
    expect(mock.body()).toEqual({ contents: [{ role: 'user', parts: [{ text: 'Why is the sky blue?' }] }] });

    expect(shapes(chunks)).toEqual([
      { index: 0, role: 'assistant', content: '', finish: null },
      { index: 0, content: 'The sky', finish: null },
      { index: 0, content: ' is blue.', finish: null },
      { index: 0, finish: 'stop' },
      { usage: { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 } },
    ]);
    expect(chunks.at(-1)!.choices).toEqual([]);
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    expect(chunks.every((c) => c.object === 'chat.completion.chunk' && c.model === 'gem/flash')).toBe(true);
  });

  it('no usage chunk unless include_usage', async () => {
    const chunks = await collect(
      await api.chatStream!(flash, chat([{ role: 'user', content: 'hi' }], { stream: true }), ctx()),
    );
    expect(shapes(chunks)).toEqual([
      { index: 0, role: 'assistant', content: '', finish: null },
      { index: 0, content: 'echo: ', finish: null },
      { index: 0, content: 'hi', finish: null },
      { index: 0, finish: 'stop' },
    ]);
  });

  it('function calls stream as whole tool call deltas with ids and indexes; the finish is tool_calls', async () => {
    mock.reply(
      geminiStream([
        geminiWire.response([{ text: 'Let me look.' }]),
        geminiWire.response(
          [
            { functionCall: { name: 'weather', args: { city: 'Bergen' } }, thoughtSignature: SIGNATURE },
            { functionCall: { name: 'weather', args: { city: 'Oslo' } } },
          ],
          {
            finishReason: 'STOP',
            usage: { promptTokenCount: 20, candidatesTokenCount: 10, totalTokenCount: 30 },
          },
        ),
      ]),
    );
    const chunks = await collect(
      await api.chatStream!(
        flash,
        chat([{ role: 'user', content: 'Weather?' }], {
          stream: true,
          stream_options: { include_usage: true },
          tools: [weatherTool],
          tool_choice: 'required',
        }),
        ctx(),
      ),
    );
    expect(mock.body().toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY' } });
    expect(shapes(chunks)).toEqual([
      { index: 0, role: 'assistant', content: '', finish: null },
      { index: 0, content: 'Let me look.', finish: null },
      {
        index: 0,
        tool_calls: [
          {
            index: 0,
            id: 'call_0',
            type: 'function',
            function: { name: 'weather', arguments: '{"city":"Bergen"}' },
            extra_content: { google: { thought_signature: SIGNATURE } },
          },
        ],
        finish: null,
      },
      {
        index: 0,
        tool_calls: [
          {
            index: 1,
            id: 'call_1',
            type: 'function',
            function: { name: 'weather', arguments: '{"city":"Oslo"}' },
          },
        ],
        finish: null,
      },
      { index: 0, finish: 'tool_calls' },
      { usage: { prompt_tokens: 20, completion_tokens: 10, total_tokens: 30 } },
    ]);
  });

  it("an error event mid-stream fails the stream with the upstream's message, after what came before", async () => {
    mock.reply((_req, res) => {
      const sse = geminiSse(res);
      sse.send(geminiWire.response([{ text: 'Half an' }]));
      sse.send(geminiWire.error(500, 'INTERNAL', 'An internal error has occurred. Please retry.'));
      sse.end();
    });
    const stream = await api.chatStream!(
      flash,
      chat([{ role: 'user', content: 'x' }], { stream: true }),
      ctx(),
    );
    const seen: ChatChunk[] = [];
    const failure = await (async () => {
      for await (const chunk of stream) seen.push(chunk);
    })().catch((error: unknown) => error);
    expect(shapes(seen)).toEqual([
      { index: 0, role: 'assistant', content: '', finish: null },
      { index: 0, content: 'Half an', finish: null },
    ]);
    expect(failure).toBeInstanceOf(ApiError);
    expect(failure).toMatchObject({
      code: 'upstream_error',
      message: 'An internal error has occurred. Please retry.',
    });
  });

  it('a stream that ends without a finish reason is an upstream error', async () => {
    mock.reply(geminiStream([geminiWire.response([{ text: 'cut' }])]));
    const stream = await api.chatStream!(
      flash,
      chat([{ role: 'user', content: 'x' }], { stream: true }),
      ctx(),
    );
    await expect(collect(stream)).rejects.toMatchObject({
      code: 'upstream_error',
      message: 'the upstream stream ended before a finish reason',
    });
  });

  it('an error status before the stream starts is an HTTP error of the call itself', async () => {
    mock.reply(geminiError(404, 'NOT_FOUND', 'models/gemini-9 is not found for API version v1beta.'));
    await expect(
      api.chatStream!(flash, chat([{ role: 'user', content: 'x' }], { stream: true }), ctx()),
    ).rejects.toMatchObject({
      code: 'upstream_error',
      message: 'upstream answered 404: models/gemini-9 is not found for API version v1beta.',
    });
  });
});

describe('gemini errors', () => {
  it("an error status with Google's error body: a 502 carrying Google's message and the upstream status, the key scrubbed", async () => {
    mock.reply(
      geminiError(400, 'INVALID_ARGUMENT', `API key not valid. Please pass a valid API key. (${KEY})`),
    );
    const failure = await api.chat!(flash, chat([{ role: 'user', content: 'x' }]), ctx()).catch(
      (e: unknown) => e,
    );
    expect(failure).toBeInstanceOf(ApiError);
    expect(failure).toMatchObject({
      code: 'upstream_error',
      status: 502,
      message: 'upstream answered 400: API key not valid. Please pass a valid API key. (***)',
      options: { details: { upstream_status: 400 } },
    });
  });

  it('an answer that is not a GenerateContentResponse is a 502', async () => {
    mock.reply((_req, res) => sendJson(res, 200, { candidates: 'none' }));
    await expect(api.chat!(flash, chat([{ role: 'user', content: 'x' }]), ctx())).rejects.toMatchObject({
      code: 'upstream_error',
    });
    mock.reply((_req, res) => sendJson(res, 200, { usageMetadata: {} }));
    await expect(api.chat!(flash, chat([{ role: 'user', content: 'x' }]), ctx())).rejects.toMatchObject({
      code: 'upstream_error',
      message: 'the upstream answered without candidates or a block reason',
    });
  });
});

describe('gemini embeddings: batchEmbedContents', () => {
  it('one request per text, outputDimensionality when asked; vectors in order; no token count', async () => {
    mock.reply((_req, res) =>
      sendJson(res, 200, { embeddings: [{ values: [0.1, 0.2] }, { values: [0.3, 0.4] }] }),
    );
    const result = await api.embed!(
      embedder,
      { input: ['first text', 'second text'], dimensions: 2, encoding: 'float' },
      ctx(),
    );
    const sent = mock.requests.at(-1)!;
    expect(sent.method).toBe('POST');
    expect(sent.path).toBe('/v1beta/models/gemini-embedding-001:batchEmbedContents');
    expect(sent.headers['x-goog-api-key']).toBe(KEY);
    expect(mock.body()).toEqual({
      requests: [
        {
          model: 'models/gemini-embedding-001',
          content: { parts: [{ text: 'first text' }] },
          outputDimensionality: 2,
        },
        {
          model: 'models/gemini-embedding-001',
          content: { parts: [{ text: 'second text' }] },
          outputDimensionality: 2,
        },
      ],
    });
    expect(result).toEqual({
      vectors: [
        [0.1, 0.2],
        [0.3, 0.4],
      ],
      inputTokens: undefined,
    });
  });

  it('more texts than one batch holds (100) go in several calls, answered in order', async () => {
    const input = Array.from({ length: 150 }, (_, i) => `text ${i}`);
    const result = await api.embed!(embedder, { input, encoding: 'float' }, ctx());
    expect(mock.requests.map((r) => JSON.parse(r.body.toString()).requests.length)).toEqual([100, 50]);
    expect(mock.body(1).requests[0]).toEqual({
      model: 'models/gemini-embedding-001',
      content: { parts: [{ text: 'text 100' }] },
    });
    expect(result.vectors).toHaveLength(150);
    // The mock's vector i of a call starts with i.
    expect(result.vectors[99]![0]).toBe(99);
    expect(result.vectors[100]![0]).toBe(0);
  });

  it('token ids are refused, saying why; a count that does not match the inputs is a 502', async () => {
    await expect(
      api.embed!(embedder, { input: [[1, 2, 3]], encoding: 'float' }, ctx()),
    ).rejects.toMatchObject({
      code: 'validation_failed',
      message: expect.stringContaining('Gemini embeds texts only'),
    });
    expect(mock.requests).toHaveLength(0);
    mock.reply((_req, res) => sendJson(res, 200, { embeddings: [{ values: [1] }] }));
    await expect(api.embed!(embedder, { input: ['a', 'b'], encoding: 'float' }, ctx())).rejects.toMatchObject(
      {
        code: 'upstream_error',
        message: 'the upstream answered 1 embeddings for 2 inputs',
      },
    );
  });
});

describe('gemini models: models.list', () => {
  it('reads every page; maps methods to modalities and limits; leaves out models the gateway cannot call', async () => {
    const pages: Record<string, Json> = {
      '/v1beta/models?pageSize=1000': {
        models: [
          {
            name: 'models/gemini-2.5-flash',
            version: '001',
            displayName: 'Gemini 2.5 Flash',
            description: 'Stable version of Gemini 2.5 Flash',
            inputTokenLimit: 1_048_576,
            outputTokenLimit: 65_536,
            supportedGenerationMethods: [
              'generateContent',
              'countTokens',
              'createCachedContent',
              'batchGenerateContent',
            ],
            temperature: 1,
            topP: 0.95,
            topK: 64,
            maxTemperature: 2,
            thinking: true,
          },
          {
            name: 'models/imagen-4.0-generate-001',
            version: '001',
            displayName: 'Imagen 4',
            inputTokenLimit: 480,
            outputTokenLimit: 8192,
            supportedGenerationMethods: ['predict'],
          },
        ],
        nextPageToken: 'Ch5tb2RlbHMvZ2VtaW5pLWVtYmVkZGluZy0wMDE=',
      },
      '/v1beta/models?pageSize=1000&pageToken=Ch5tb2RlbHMvZ2VtaW5pLWVtYmVkZGluZy0wMDE%3D': {
        models: [
          {
            name: 'models/gemini-embedding-001',
            version: '001',
            displayName: 'Gemini Embedding 001',
            inputTokenLimit: 2048,
            outputTokenLimit: 1,
            supportedGenerationMethods: [
              'embedContent',
              'countTextTokens',
              'countTokens',
              'asyncBatchEmbedContent',
            ],
          },
        ],
      },
    };
    mock.reply((req, res) => {
      const page = pages[req.path];
      if (req.method !== 'GET' || !page || req.headers['x-goog-api-key'] !== KEY)
        return sendJson(res, 404, geminiWire.error(404, 'NOT_FOUND', `${req.method} ${req.path}`));
      return sendJson(res, 200, page);
    });

    const models = await api.listModels(ctx());
    expect(mock.requests.map((r) => [r.method, r.path, r.body.length])).toEqual([
      ['GET', '/v1beta/models?pageSize=1000', 0],
      ['GET', '/v1beta/models?pageSize=1000&pageToken=Ch5tb2RlbHMvZ2VtaW5pLWVtYmVkZGluZy0wMDE%3D', 0],
    ]);
    expect(mock.requests.every((r) => r.headers['x-goog-user-project'] === 'studio-billing')).toBe(true);
    expect(models).toEqual([
      {
        id: 'gemini-2.5-flash',
        modalities: ['text', 'stream', 'chat'],
        contextWindow: 1_048_576,
        maxOutputTokens: 65_536,
      },
      { id: 'gemini-embedding-001', modalities: ['embed'], contextWindow: 2048, maxOutputTokens: 1 },
    ]);
  });

  it("a refused key: Google's message in a 502", async () => {
    const keyless = geminiApi(upstream, {
      baseUrl: mock.url,
      apiKey: () => undefined,
      headers: () => ({}),
      baseUrlVariable: 'the base_url of connection gem',
    });
    await expect(keyless.listModels(ctx())).rejects.toMatchObject({
      code: 'upstream_error',
      message: "upstream answered 403: Method doesn't allow unregistered callers.",
    });
    expect(mock.requests.at(-1)!.headers['x-goog-api-key']).toBeUndefined();
  });
});

describe('gemini connections through the gateway (official openai and anthropic clients)', () => {
  let pg: ProviderGateway;
  beforeAll(async () => {
    pg = await startProviderGateway({});
    const made = await asAdmin(pg.gw, 'POST', '/v1/ai/providers/upsert', {
      id: 'gem',
      kind: 'gemini',
      base_url: mock.url,
      api_key: KEY,
      models: [{ id: 'flash', upstream_id: 'gemini-2.5-flash' }],
    });
    expect(made.status, made.text).toBe(200);
  });
  afterAll(async () => {
    await pg?.close();
  });

  it('chat.completions.create, plain and streamed, reaches generateContent and streamGenerateContent with the key', async () => {
    const answer = await pg.client().chat.completions.create({
      model: 'gem/flash',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'hello' },
      ],
    });
    expect(answer.model).toBe('gem/flash');
    expect(answer.choices[0]?.message.content).toBe('echo: hello');
    expect(answer.usage).toMatchObject({ prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 });
    const sent = mock.requests.at(-1)!;
    expect(sent.path).toBe(GENERATE);
    expect(sent.headers['x-goog-api-key']).toBe(KEY);
    expect(mock.body()).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'hello' }] }],
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
    });

    const stream = await pg.client().chat.completions.create({
      model: 'gem/flash',
      messages: [{ role: 'user', content: 'streamed' }],
      stream: true,
    });
    let text = '';
    let finish: string | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(text).toBe('echo: streamed');
    expect(finish).toBe('stop');
    expect(mock.requests.at(-1)!.path).toBe(STREAM);
  });

  it("the Responses API (openai's responses.create) reaches generateContent, translated", async () => {
    const response = await pg.client().responses.create({
      model: 'gem/flash',
      instructions: 'Be brief.',
      input: 'through responses',
    });
    expect(response.output_text).toBe('echo: through responses');
    expect(mock.requests.at(-1)!.path).toBe(GENERATE);
    expect(mock.body()).toMatchObject({
      contents: [{ role: 'user', parts: [{ text: 'through responses' }] }],
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
    });
  });

  it("a tool call's thought signature survives the gateway both ways with the openai client", async () => {
    mock.script((_req, res) =>
      sendJson(
        res,
        200,
        geminiWire.response(
          [{ functionCall: { name: 'weather', args: { city: 'Bergen' } }, thoughtSignature: SIGNATURE }],
          { finishReason: 'STOP' },
        ),
      ),
    );
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Bergen?' }];
    const asked = await pg
      .client()
      .chat.completions.create({ model: 'gem/flash', messages, tools: [weatherTool] });
    const call = asked.choices[0]!.message;
    expect(asked.choices[0]!.finish_reason).toBe('tool_calls');
    expect(call.tool_calls).toEqual([
      {
        id: 'call_0',
        type: 'function',
        function: { name: 'weather', arguments: '{"city":"Bergen"}' },
        extra_content: { google: { thought_signature: SIGNATURE } },
      },
    ]);
    await pg.client().chat.completions.create({
      model: 'gem/flash',
      messages: [...messages, call, { role: 'tool', tool_call_id: 'call_0', content: '{"sky":"rain"}' }],
      tools: [weatherTool],
    });
    expect(mock.body().contents.slice(1)).toEqual([
      {
        role: 'model',
        parts: [{ functionCall: { name: 'weather', args: { city: 'Bergen' } }, thoughtSignature: SIGNATURE }],
      },
      { role: 'user', parts: [{ functionResponse: { name: 'weather', response: { sky: 'rain' } } }] },
    ]);
  });

  it("Anthropic's client: messages.create is served through Gemini, translated both ways", async () => {
    const anthropic = new Anthropic({
      baseURL: `${pg.gw.url}/v1/ai/anthropic`,
      apiKey: pg.token,
      maxRetries: 0,
    });
    const message = await anthropic.messages.create({
      model: 'gem/flash',
      max_tokens: 64,
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'bonjour' }],
    });
    expect(message.type).toBe('message');
    expect(message.content).toEqual([{ type: 'text', text: 'echo: bonjour' }]);
    expect(message.stop_reason).toBe('end_turn');
    expect(mock.requests.at(-1)!.path).toBe(GENERATE);
    expect(mock.body()).toMatchObject({
      contents: [{ role: 'user', parts: [{ text: 'bonjour' }] }],
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
      generationConfig: { maxOutputTokens: 64 },
    });
  });
});
