import { describe, expect, it } from 'vitest';
import type { ChatChunk } from '../chat/wire.ts';
import { ChatStreamEvents } from './from-chat-stream.ts';
import { ResponsesRequestSchema } from './wire.ts';

const header = {
  id: 'resp_0123456789abcdef01234567',
  createdAt: 1_700_000_000,
  model: 'compat/m',
  request: ResponsesRequestSchema.parse({ model: 'compat/m', input: 'x' }),
};
const chunk = (delta: ChatChunk['choices'][number]['delta'], finish: string | null = null): ChatChunk => ({
  id: 'c',
  object: 'chat.completion.chunk',
  created: 0,
  model: 'm',
  choices: [{ index: 0, delta, finish_reason: finish }],
});
const usage = { input_tokens: 4, output_tokens: 6 };

describe('chat chunks as Responses stream events', () => {
  it('text then two tool calls: one item each, in order, closed at the end', () => {
    const events = new ChatStreamEvents(header);
    const streamed = [
      chunk({ role: 'assistant', content: 'Let me ' }),
      chunk({ content: 'check.' }),
      chunk({
        tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'a', arguments: '' } }],
      }),
      chunk({
        tool_calls: [
          { index: 1, id: 'call_b', type: 'function', function: { name: 'b', arguments: '{"y"' } },
        ],
      }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{}' } }] }),
      chunk({ tool_calls: [{ index: 1, function: { arguments: ':2}' } }] }),
      chunk({}, 'tool_calls'),
    ].flatMap((c) => events.chunk(c));
    const { events: closing, response } = events.finish('tool_calls', usage);
    const all = [...streamed, ...closing, events.end(response)];

    expect(all.map((e) => e.sequence_number)).toEqual(all.map((_, i) => i));
    expect(all.map((e) => [e.type, e.output_index ?? null])).toEqual([
      ['response.created', null],
      ['response.in_progress', null],
      ['response.output_item.added', 0],
      ['response.content_part.added', 0],
      ['response.output_text.delta', 0],
      ['response.output_text.delta', 0],
      ['response.output_item.added', 1],
      ['response.output_item.added', 2],
      ['response.function_call_arguments.delta', 2],
      ['response.function_call_arguments.delta', 1],
      ['response.function_call_arguments.delta', 2],
      ['response.output_text.done', 0],
      ['response.content_part.done', 0],
      ['response.output_item.done', 0],
      ['response.function_call_arguments.done', 1],
      ['response.output_item.done', 1],
      ['response.function_call_arguments.done', 2],
      ['response.output_item.done', 2],
      ['response.completed', null],
    ]);
    expect(response.output).toEqual([
      {
        type: 'message',
        id: 'msg_0123456789abcdef01234567_0',
        status: 'completed',
        role: 'assistant',
        content: [{ type: 'output_text', text: 'Let me check.', annotations: [], logprobs: [] }],
      },
      {
        type: 'function_call',
        id: 'fc_0123456789abcdef01234567_1',
        call_id: 'call_a',
        name: 'a',
        arguments: '{}',
        status: 'completed',
      },
      {
        type: 'function_call',
        id: 'fc_0123456789abcdef01234567_2',
        call_id: 'call_b',
        name: 'b',
        arguments: '{"y":2}',
        status: 'completed',
      },
    ]);
    expect(response.usage).toMatchObject({ input_tokens: 4, output_tokens: 6, total_tokens: 10 });
    // The item an `output_item.added` announced is the one as it was then, not as it ended.
    expect(all[6]).toMatchObject({ item: { arguments: '', status: 'in_progress' } });
  });

  it('an answer with nothing in it is still a (empty) message; a cut one is incomplete', () => {
    const events = new ChatStreamEvents(header);
    const { events: closing, response } = events.finish('length', usage);
    expect(closing.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
    ]);
    expect(response).toMatchObject({
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
      output: [{ type: 'message', status: 'incomplete', content: [{ type: 'output_text', text: '' }] }],
    });
    expect(events.end(response).type).toBe('response.incomplete');
  });

  it('a stream that breaks off ends with an error event carrying the envelope', () => {
    const events = new ChatStreamEvents(header);
    events.chunk(chunk({ content: 'x' }));
    const body = { error: { type: 'api_error', code: 'upstream_error', message: 'broke', request_id: 'r' } };
    expect(events.error(body)).toEqual({
      type: 'error',
      sequence_number: 5,
      code: 'upstream_error',
      message: 'broke',
      param: null,
      ...body,
    });
  });
});
