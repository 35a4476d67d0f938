import { describe, expect, it } from 'vitest';
import type { ChatRequest } from '../../../services/ai/chat/wire.ts';
import {
  finishReason,
  streamTranslator,
  toAnthropic,
} from '../../../services/ai/providers/anthropic/translate.ts';

/** The pure translation, for the cases the end-to-end tests do not walk through. */
const request = (extra: Partial<ChatRequest>): ChatRequest => ({
  model: 'anthropic/claude-haiku-4-5',
  messages: [{ role: 'user', content: 'hi' }],
  ...extra,
});
const tools = [{ type: 'function' as const, function: { name: 'f', parameters: { type: 'object' } } }];

describe('toAnthropic', () => {
  it('maps tool_choice and parallel_tool_calls; drops tool_choice when there are no tools', () => {
    const choice = (extra: Partial<ChatRequest>) =>
      toAnthropic(request({ tools, ...extra }), 'm').tool_choice;
    expect(choice({ tool_choice: 'auto' })).toEqual({ type: 'auto' });
    expect(choice({ tool_choice: 'required' })).toEqual({ type: 'any' });
    expect(choice({ tool_choice: 'none' })).toEqual({ type: 'none' });
    expect(choice({ tool_choice: { type: 'function', function: { name: 'f' } } })).toEqual({
      type: 'tool',
      name: 'f',
    });
    expect(choice({})).toBeUndefined();
    expect(choice({ parallel_tool_calls: false })).toEqual({ type: 'auto', disable_parallel_tool_use: true });
    expect(choice({ tool_choice: 'required', parallel_tool_calls: false })).toEqual({
      type: 'any',
      disable_parallel_tool_use: true,
    });
    expect(toAnthropic(request({ tool_choice: 'auto' }), 'm')).not.toHaveProperty('tool_choice');
  });

  it('limits: max_completion_tokens wins over max_tokens, 4096 when neither; stop lists pass as they are', () => {
    expect(toAnthropic(request({ max_tokens: 10, max_completion_tokens: 20 }), 'm').max_tokens).toBe(20);
    expect(toAnthropic(request({ max_tokens: 10 }), 'm').max_tokens).toBe(10);
    expect(toAnthropic(request({}), 'm').max_tokens).toBe(4096);
    expect(toAnthropic(request({ stop: ['a', 'b'] }), 'm').stop_sequences).toEqual(['a', 'b']);
    expect(toAnthropic(request({ stop: null }), 'm')).not.toHaveProperty('stop_sequences');
    expect(toAnthropic(request({ temperature: 0 }), 'm').temperature).toBe(0);
  });

  it('tool arguments that are not a JSON object still make an object input', () => {
    const messages: ChatRequest['messages'] = [
      { role: 'user', content: 'x' },
      {
        role: 'assistant',
        content: '',
        tool_calls: [
          { id: 'a', type: 'function', function: { name: 'f', arguments: '' } },
          { id: 'b', type: 'function', function: { name: 'f', arguments: '{broken' } },
          { id: 'c', type: 'function', function: { name: 'f', arguments: '[1]' } },
        ],
      },
    ];
    expect(toAnthropic(request({ messages }), 'm').messages[1]!.content).toEqual([
      { type: 'tool_use', id: 'a', name: 'f', input: {} },
      { type: 'tool_use', id: 'b', name: 'f', input: { _raw: '{broken' } },
      { type: 'tool_use', id: 'c', name: 'f', input: { value: [1] } },
    ]);
  });

  it('consecutive messages of one role merge, so user and assistant alternate', () => {
    const messages: ChatRequest['messages'] = [
      { role: 'user', content: 'a' },
      { role: 'user', content: [{ type: 'text', text: 'b' }] },
      { role: 'assistant', content: 'c' },
      { role: 'assistant', content: null },
      { role: 'assistant', content: 'd' },
    ];
    expect(toAnthropic(request({ messages }), 'm').messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b' },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'c' },
          { type: 'text', text: 'd' },
        ],
      },
    ]);
  });
});

describe('from Anthropic', () => {
  it('stop reasons', () => {
    expect(
      ['end_turn', 'stop_sequence', 'pause_turn', 'max_tokens', 'tool_use', 'refusal', null].map(
        finishReason,
      ),
    ).toEqual(['stop', 'stop', 'stop', 'length', 'tool_calls', 'content_filter', null]);
  });

  it('streamed usage counts cached prompt tokens and the latest totals of message_delta', () => {
    const translate = streamTranslator('anthropic/x', true);
    translate('message_start', {
      message: {
        usage: {
          input_tokens: 3,
          cache_read_input_tokens: 10,
          cache_creation_input_tokens: 2,
          output_tokens: 1,
        },
      },
    });
    translate('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 6 } });
    const [finish, usage] = translate('message_stop', {});
    expect(finish!.choices).toEqual([{ index: 0, delta: {}, finish_reason: 'stop' }]);
    expect(usage!.usage).toEqual({ prompt_tokens: 15, completion_tokens: 6, total_tokens: 21 });
    expect(translate('ping', {})).toEqual([]);
  });
});
