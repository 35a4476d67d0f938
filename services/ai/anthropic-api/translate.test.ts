import { describe, expect, it } from 'vitest';
import { ApiError, ERROR_STATUS, type ErrorCode } from '../../../shared/errors.ts';
import type { ChatChunk } from '../chat/wire.ts';
import { estimateInputTokens } from './count-tokens.ts';
import { anthropicErrorBody, anthropicErrorType } from './dialect.ts';
import { chatToEvents, messageFromChat, stopReason } from './from-chat.ts';
import { toChat } from './to-chat.ts';
import { type MessagesRequest, MessagesRequestSchema } from './wire.ts';

const request = (body: Record<string, unknown>): MessagesRequest =>
  MessagesRequestSchema.parse({ model: 'dev/echo', max_tokens: 100, ...body });

describe('Messages request → chat request', () => {
  it('maps system blocks, images, tool calls and results, tools and their choice', () => {
    const chat = toChat(
      request({
        system: [
          { type: 'text', text: 'You are terse.', cache_control: { type: 'ephemeral' } },
          { type: 'text', text: 'Use tools.' },
        ],
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is this, and the weather?' },
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBOR' } },
              { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
            ],
          },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: 'hmm', signature: 's' },
              { type: 'text', text: 'Checking.' },
              { type: 'tool_use', id: 'toolu_1', name: 'weather', input: { city: 'Bergen' } },
              { type: 'tool_use', id: 'toolu_2', name: 'weather', input: { city: 'Oslo' } },
            ],
          },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'And tomorrow?' },
              { type: 'tool_result', tool_use_id: 'toolu_1', content: 'rain' },
              {
                type: 'tool_result',
                tool_use_id: 'toolu_2',
                content: [
                  { type: 'text', text: 'sun, see map' },
                  { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: 'AAAA' } },
                ],
                is_error: false,
              },
            ],
          },
        ],
        tools: [{ name: 'weather', description: 'Weather', input_schema: { type: 'object' } }],
        tool_choice: { type: 'tool', name: 'weather', disable_parallel_tool_use: true },
        stop_sequences: ['END'],
        temperature: 0.5,
        top_p: 0.9,
        top_k: 3,
        metadata: { user_id: 'u-1' },
        stream: true,
      }),
      'echo',
      64,
    );
    expect(chat).toEqual({
      model: 'echo',
      max_tokens: 64,
      stream: true,
      stream_options: { include_usage: true },
      messages: [
        { role: 'system', content: 'You are terse.\n\nUse tools.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this, and the weather?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBOR' } },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
          ],
        },
        {
          role: 'assistant',
          content: 'Checking.',
          tool_calls: [
            {
              id: 'toolu_1',
              type: 'function',
              function: { name: 'weather', arguments: '{"city":"Bergen"}' },
            },
            { id: 'toolu_2', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'toolu_1', content: 'rain' },
        { role: 'tool', tool_call_id: 'toolu_2', content: 'sun, see map' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'And tomorrow?' },
            { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,AAAA' } },
          ],
        },
      ],
      tools: [
        {
          type: 'function',
          function: { name: 'weather', description: 'Weather', parameters: { type: 'object' } },
        },
      ],
      tool_choice: { type: 'function', function: { name: 'weather' } },
      parallel_tool_calls: false,
      stop: ['END'],
      temperature: 0.5,
      top_p: 0.9,
      user: 'u-1',
    });
  });

  it('maps each tool choice; an assistant turn of tool calls only has null content', () => {
    const choices = (['auto', 'any', 'none'] as const).map(
      (type) =>
        toChat(
          request({
            messages: [{ role: 'user', content: 'x' }],
            tools: [{ name: 't' }],
            tool_choice: { type },
          }),
          'm',
          1,
        ).tool_choice,
    );
    expect(choices).toEqual(['auto', 'required', 'none']);
    const chat = toChat(
      request({
        messages: [{ role: 'assistant', content: [{ type: 'tool_use', id: 'a', name: 't', input: {} }] }],
      }),
      'm',
      1,
    );
    expect(chat.messages[0]).toMatchObject({ role: 'assistant', content: null });
  });

  it("refuses what only Anthropic's models take: documents and Anthropic's own tools", () => {
    const document = request({
      messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'base64', data: 'x' } }] }],
    });
    expect(() => toChat(document, 'm', 1)).toThrow(/"document" are served by anthropic\/\* models only/);
    const search = request({
      messages: [{ role: 'user', content: 'x' }],
      tools: [{ type: 'web_search_20250305', name: 'web_search' }],
    });
    expect(() => toChat(search, 'm', 1)).toThrow(ApiError);
  });

  it('the schema refuses a known block without its fields, naming the field', () => {
    const parsed = MessagesRequestSchema.safeParse({
      model: 'm',
      max_tokens: 1,
      messages: [{ role: 'user', content: [{ type: 'thinking', thinking: 'x' }, { type: 'tool_result' }] }],
    });
    expect(parsed.error?.issues.map((i) => i.path.join('.'))).toEqual(['messages.0.content.1.tool_use_id']);
  });
});

describe('chat answer → Messages answer', () => {
  it('a completion becomes text and tool_use blocks with the stop reason', () => {
    const message = messageFromChat(
      {
        id: 'c',
        object: 'chat.completion',
        created: 0,
        model: 'x',
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: 'Let me look.',
              tool_calls: [
                {
                  id: 'call_1',
                  type: 'function',
                  function: { name: 'weather', arguments: '{"city":"Oslo"}' },
                },
              ],
            },
            finish_reason: 'tool_calls',
          },
        ],
      },
      'dev/echo',
      { input_tokens: 5, output_tokens: 7 },
    );
    expect(message).toEqual({
      id: expect.stringMatching(/^msg_/),
      type: 'message',
      role: 'assistant',
      model: 'dev/echo',
      content: [
        { type: 'text', text: 'Let me look.' },
        { type: 'tool_use', id: 'call_1', name: 'weather', input: { city: 'Oslo' } },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: 5, output_tokens: 7 },
    });
  });

  it('finish reasons become stop reasons', () => {
    expect(['stop', 'length', 'tool_calls', 'content_filter', null].map(stopReason)).toEqual([
      'end_turn',
      'max_tokens',
      'tool_use',
      'refusal',
      'end_turn',
    ]);
  });

  it('chunks become events: text block, then one tool_use block per call, then the end', () => {
    const chunk = (
      delta: ChatChunk['choices'][number]['delta'],
      finish: string | null = null,
    ): ChatChunk => ({
      id: 'c',
      object: 'chat.completion.chunk',
      created: 0,
      model: 'x',
      choices: [{ index: 0, delta, finish_reason: finish }],
    });
    const events = chatToEvents('dev/echo');
    const out = [
      chunk({ role: 'assistant', content: '' }),
      chunk({ content: 'Hi' }),
      chunk({
        tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'f', arguments: '' } }],
      }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"a":1}' } }] }),
      chunk({
        tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'g', arguments: '{}' } }],
      }),
      chunk({}, 'tool_calls'),
    ].flatMap((c) => events.push(c));
    const end = events.end({ input_tokens: 3, output_tokens: 4 }, 'tool_calls');
    expect([...out, ...end].map((e) => e.data)).toEqual([
      {
        type: 'message_start',
        message: {
          id: expect.stringMatching(/^msg_/),
          type: 'message',
          role: 'assistant',
          model: 'dev/echo',
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 0, output_tokens: 0 },
        },
      },
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hi' } },
      { type: 'content_block_stop', index: 0 },
      {
        type: 'content_block_start',
        index: 1,
        content_block: { type: 'tool_use', id: 'call_a', name: 'f', input: {} },
      },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"a":1}' } },
      { type: 'content_block_stop', index: 1 },
      {
        type: 'content_block_start',
        index: 2,
        content_block: { type: 'tool_use', id: 'call_b', name: 'g', input: {} },
      },
      { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{}' } },
      { type: 'content_block_stop', index: 2 },
      {
        type: 'message_delta',
        delta: { stop_reason: 'tool_use', stop_sequence: null },
        usage: { input_tokens: 3, output_tokens: 4 },
      },
      { type: 'message_stop' },
    ]);
    expect([...out, ...end].every((e) => e.event === e.data.type)).toBe(true);
  });

  it('an empty stream still starts and ends a message', () => {
    expect(
      chatToEvents('m')
        .end({ input_tokens: 0, output_tokens: 0 }, null)
        .map((e) => e.event),
    ).toEqual(['message_start', 'message_delta', 'message_stop']);
  });
});

describe("errors in Anthropic's shape", () => {
  it('every code has an Anthropic type: by status, busy and timeouts by code', () => {
    const types = Object.fromEntries(
      (Object.keys(ERROR_STATUS) as ErrorCode[]).map((code) => [
        code,
        anthropicErrorType(new ApiError(code, 'x')),
      ]),
    );
    expect(types).toMatchObject({
      validation_failed: 'invalid_request_error',
      invalid_json: 'invalid_request_error',
      unauthenticated: 'authentication_error',
      budget_exceeded: 'billing_error',
      forbidden: 'permission_error',
      studio_paused: 'permission_error',
      model_not_allowed: 'permission_error',
      not_found: 'not_found_error',
      model_not_found: 'not_found_error',
      method_not_allowed: 'invalid_request_error',
      conflict: 'conflict_error',
      payload_too_large: 'request_too_large',
      unsupported_media_type: 'invalid_request_error',
      rate_limited: 'rate_limit_error',
      internal_error: 'api_error',
      upstream_error: 'api_error',
      overloaded: 'overloaded_error',
      unavailable: 'api_error',
      upstream_timeout: 'timeout_error',
      request_timeout: 'timeout_error',
    });
  });

  it('the body carries our code, the field at fault and the details', () => {
    const error = new ApiError('validation_failed', 'invalid body', {
      param: 'max_tokens',
      details: [{ path: 'max_tokens', code: 'invalid_type', message: 'required' }],
    });
    expect(anthropicErrorBody(error, 'req-1')).toEqual({
      type: 'error',
      error: {
        type: 'invalid_request_error',
        message: 'invalid body',
        details: {
          issues: [{ path: 'max_tokens', code: 'invalid_type', message: 'required' }],
          param: 'max_tokens',
          error_code: 'validation_failed',
        },
      },
      request_id: 'req-1',
    });
  });
});

describe('count_tokens estimate', () => {
  it('four characters a token over what the model reads, an image at most 1,600', () => {
    const estimate = estimateInputTokens({
      model: 'm',
      system: 'abcd',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'efgh' },
            { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } },
          ],
        },
      ],
    });
    // "abcd\nefgh": 9 characters
    expect(estimate).toBe(3 + 1_600);
  });
});
