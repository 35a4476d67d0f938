import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../shared/errors.ts';
import { inputItems } from './items.ts';
import { chatRequestOf } from './to-chat.ts';
import { type ResponsesRequest, ResponsesRequestSchema } from './wire.ts';

const request = (body: Record<string, unknown>): ResponsesRequest =>
  ResponsesRequestSchema.parse({ model: 'dev/echo', ...body });
const translate = (body: Record<string, unknown>) => {
  const parsed = request(body);
  return chatRequestOf(parsed, inputItems(parsed.input));
};
const refusal = (body: Record<string, unknown>) => {
  try {
    translate(body);
  } catch (error) {
    if (error instanceof ApiError)
      return { code: error.code, param: error.options.param, message: error.message };
  }
  throw new Error('expected a refusal');
};

describe('a Responses request as chat completions', () => {
  it('instructions first, then the items as messages; a developer message is a system one', () => {
    expect(
      translate({
        instructions: 'be brief',
        input: [
          { role: 'developer', content: 'rules' },
          {
            role: 'user',
            content: [
              { type: 'input_text', text: 'a ' },
              { type: 'input_text', text: 'b' },
            ],
          },
          { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'ok' }] },
        ],
      }).messages,
    ).toEqual([
      { role: 'system', content: 'be brief' },
      { role: 'system', content: 'rules' },
      { role: 'user', content: 'a b' },
      { role: 'assistant', content: 'ok' },
    ]);
  });

  it('function calls join the assistant message before them; their outputs are tool messages', () => {
    expect(
      translate({
        input: [
          { role: 'user', content: 'go' },
          { role: 'assistant', content: 'calling two' },
          { type: 'function_call', call_id: 'c1', name: 'a', arguments: '{}' },
          { type: 'function_call', call_id: 'c2', name: 'b', arguments: '{"x":1}' },
          { type: 'function_call_output', call_id: 'c1', output: 'one' },
          { type: 'function_call_output', call_id: 'c2', output: [{ type: 'input_text', text: 'two' }] },
          { type: 'reasoning', id: 'rs_1', summary: [] },
          { type: 'function_call', call_id: 'c3', name: 'a', arguments: '' },
        ],
      }).messages,
    ).toEqual([
      { role: 'user', content: 'go' },
      {
        role: 'assistant',
        content: 'calling two',
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'a', arguments: '{}' } },
          { id: 'c2', type: 'function', function: { name: 'b', arguments: '{"x":1}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'one' },
      { role: 'tool', tool_call_id: 'c2', content: 'two' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c3', type: 'function', function: { name: 'a', arguments: '' } }],
      },
    ]);
  });

  it('images and files become chat parts', () => {
    const [message] = translate({
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'look' },
            { type: 'input_image', image_url: 'data:image/png;base64,AA', detail: 'low' },
            { type: 'input_file', file_data: 'data:application/pdf;base64,AA', filename: 'a.pdf' },
          ],
        },
      ],
    }).messages;
    expect(message!.content).toEqual([
      { type: 'text', text: 'look' },
      { type: 'image_url', image_url: { url: 'data:image/png;base64,AA', detail: 'low' } },
      { type: 'file', file: { file_data: 'data:application/pdf;base64,AA', filename: 'a.pdf' } },
    ]);
  });

  it('function tools, tool_choice, the output cap, sampling and text formats', () => {
    const { messages: _messages, ...rest } = translate({
      input: 'x',
      tools: [
        { type: 'function', name: 'f', description: 'does f', parameters: { type: 'object' }, strict: true },
      ],
      tool_choice: { type: 'function', name: 'f' },
      parallel_tool_calls: false,
      max_output_tokens: 64,
      temperature: 0.5,
      top_p: 0.9,
      user: 'u',
      reasoning: { effort: 'low' },
      text: { format: { type: 'json_schema', name: 'out', schema: { type: 'object' }, strict: true } },
    });
    expect(rest).toEqual({
      tools: [
        {
          type: 'function',
          function: { name: 'f', description: 'does f', parameters: { type: 'object' }, strict: true },
        },
      ],
      tool_choice: { type: 'function', function: { name: 'f' } },
      parallel_tool_calls: false,
      max_tokens: 64,
      temperature: 0.5,
      top_p: 0.9,
      user: 'u',
      reasoning_effort: 'low',
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'out', schema: { type: 'object' }, strict: true },
      },
    });
    expect(translate({ input: 'x', text: { format: { type: 'json_object' } } }).response_format).toEqual({
      type: 'json_object',
    });
  });

  it('refuses what chat cannot carry, naming it and the parameter', () => {
    expect(refusal({ input: 'x', tools: [{ type: 'web_search' }] })).toMatchObject({
      code: 'validation_failed',
      param: 'tools',
      message: expect.stringContaining('web_search'),
    });
    expect(refusal({ input: [{ type: 'computer_call_output', call_id: 'c' }] })).toMatchObject({
      param: 'input',
    });
    expect(
      refusal({ input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'file-1' }] }] }),
    ).toMatchObject({ param: 'input' });
    expect(refusal({ input: 'x', tool_choice: { type: 'web_search_preview' } })).toMatchObject({
      param: 'tool_choice',
    });
    expect(refusal({ input: [] })).toMatchObject({ message: 'input must not be empty' });
    expect(refusal({ input: 'x', prompt: { id: 'pmpt_1' } })).toMatchObject({ param: 'prompt' });
    // An item reference nobody resolved names an item the gateway does not have.
    expect(refusal({ input: [{ id: 'msg_upstream' }] })).toMatchObject({ code: 'not_found' });
  });

  it('the schema refuses malformed items of the kinds it reads', () => {
    for (const item of [
      { type: 'function_call', name: 'f', arguments: '{}' },
      { type: 'function_call_output', output: 'x' },
      { type: 'message', content: 'no role' },
    ])
      expect(ResponsesRequestSchema.safeParse({ model: 'm', input: [item] }).success).toBe(false);
    expect(ResponsesRequestSchema.safeParse({ model: 'm', input: 'x', background: true }).success).toBe(
      false,
    );
  });
});
