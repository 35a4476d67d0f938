import { z } from 'zod';
import { sseFrame } from '../../../shared/http/sse.ts';

/**
 * OpenAI's Responses API as the gateway reads it. Like chat completions, requests are validated for
 * what the gateway itself needs and otherwise pass through (to a native upstream) untouched, so
 * `looseObject` is deliberate: OpenAI adds fields and item types often.
 */
const contentPart = z.looseObject({ type: z.string() });
const content = z.union([z.string(), z.array(contentPart)]);

export const MessageItemSchema = z.looseObject({
  type: z.literal('message').optional(),
  role: z.enum(['user', 'assistant', 'system', 'developer']),
  content,
  id: z.string().optional(),
});

export const FunctionCallItemSchema = z.looseObject({
  type: z.literal('function_call'),
  call_id: z.string().min(1),
  name: z.string().min(1),
  arguments: z.string(),
  id: z.string().optional(),
});

export const FunctionCallOutputItemSchema = z.looseObject({
  type: z.literal('function_call_output'),
  call_id: z.string().min(1),
  output: content,
});

/** An item named by its id (`type` may be left out): resolved from the stored responses. */
export const ItemReferenceSchema = z.looseObject({
  type: z.literal('item_reference').nullish(),
  id: z.string().min(1),
});

const READ_ITEM_TYPES: ReadonlySet<string> = new Set([
  'message',
  'function_call',
  'function_call_output',
  'item_reference',
]);

/** Items the gateway does not read (reasoning, web_search_call, …): a native upstream gets them as they are. */
export const OtherItemSchema = z.looseObject({
  type: z.string().refine((type) => !READ_ITEM_TYPES.has(type), 'this item is malformed'),
});

export const InputItemSchema = z.union([
  MessageItemSchema,
  FunctionCallItemSchema,
  FunctionCallOutputItemSchema,
  ItemReferenceSchema,
  OtherItemSchema,
]);

export const FunctionToolSchema = z.looseObject({
  type: z.literal('function'),
  name: z.string().min(1),
  description: z.string().nullish(),
  parameters: z.record(z.string(), z.unknown()).nullish(),
  strict: z.boolean().nullish(),
});
const OtherToolSchema = z.looseObject({
  type: z.string().refine((type) => type !== 'function', 'a function tool needs a name'),
});

export const ResponsesRequestSchema = z.looseObject({
  model: z.string().min(1),
  input: z.union([z.string(), z.array(InputItemSchema)]).optional(),
  instructions: z.string().nullish(),
  previous_response_id: z.string().min(1).nullish(),
  tools: z.array(z.union([FunctionToolSchema, OtherToolSchema])).optional(),
  tool_choice: z.union([z.enum(['auto', 'none', 'required']), z.looseObject({ type: z.string() })]).nullish(),
  max_output_tokens: z.number().int().positive().nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  stream: z.boolean().nullish(),
  store: z.boolean().nullish(),
  background: z
    .boolean()
    .nullish()
    .refine((background) => background !== true, 'background responses are not supported: stream instead'),
  text: z
    .looseObject({
      format: z.looseObject({ type: z.string() }).nullish(),
    })
    .nullish(),
  reasoning: z.looseObject({ effort: z.string().nullish() }).nullish(),
  // The gateway keeps conversations itself (previous_response_id); OpenAI's conversation objects are not its.
  conversation: z.null({ error: 'conversations are not supported: use previous_response_id' }).optional(),
  metadata: z.record(z.string(), z.string()).nullish(),
  user: z.string().nullish(),
  studio_id: z.string().optional(),
});

export type ResponsesRequest = z.infer<typeof ResponsesRequestSchema>;
export type InputItem = z.infer<typeof InputItemSchema>;
export type MessageItem = z.infer<typeof MessageItemSchema>;
export type FunctionTool = z.infer<typeof FunctionToolSchema>;

/** An item as stored and answered: any JSON object with a `type` (messages are given one). */
export type Item = { type: string; [key: string]: unknown };

export interface OutputText {
  type: 'output_text';
  text: string;
  annotations: unknown[];
  logprobs: unknown[];
}

export interface OutputMessage {
  type: 'message';
  id: string;
  status: 'in_progress' | 'completed' | 'incomplete';
  role: 'assistant';
  content: (OutputText | { type: 'refusal'; refusal: string })[];
}

export interface FunctionCallOutput {
  type: 'function_call';
  id: string;
  call_id: string;
  name: string;
  arguments: string;
  status: 'in_progress' | 'completed' | 'incomplete';
}

export interface ResponseUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

export type ResponseStatus = 'in_progress' | 'completed' | 'incomplete' | 'failed';

/** A response object, as OpenAI's clients read it. */
export interface ResponseObject {
  id: string;
  object: 'response';
  created_at: number;
  status: ResponseStatus;
  error: { code: string; message: string } | null;
  incomplete_details: { reason: string } | null;
  instructions: string | null;
  max_output_tokens: number | null;
  model: string;
  output: Item[];
  parallel_tool_calls: boolean;
  previous_response_id: string | null;
  store: boolean;
  usage: ResponseUsage | null;
  [key: string]: unknown;
}

/** One event of a streamed response: its `type`, its place in the stream and its fields. */
export interface ResponseStreamEvent {
  type: string;
  sequence_number: number;
  [key: string]: unknown;
}

/** The server-sent event that carries a stream event: named by its type, as OpenAI sends them. */
export const eventFrame = (event: { type: string }) =>
  sseFrame({ event: event.type, data: JSON.stringify(event) });

/**
 * Every output field of a response's items, as one text: message text and refusals, function and
 * custom tool calls' names and arguments, reasoning summaries and text. What a generation is
 * charged for at least.
 */
export function itemsOutputText(items: readonly Item[]): string {
  const texts: string[] = [];
  const add = (value: unknown) => {
    if (typeof value === 'string') texts.push(value);
  };
  const parts = (value: unknown) => (Array.isArray(value) ? (value as Record<string, unknown>[]) : []);
  for (const item of items) {
    if (item.type === 'message' || item.type === 'reasoning') {
      for (const part of [...parts(item.content), ...parts(item.summary)]) {
        add(part?.text);
        add(part?.refusal);
      }
    } else if (item.type === 'function_call' || item.type === 'custom_tool_call') {
      add(item.name);
      add(item.arguments);
      add(item.input);
    }
  }
  return texts.join('');
}
