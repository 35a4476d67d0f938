import { z } from 'zod';

/**
 * OpenAI's chat-completions wire format, the gateway's lingua franca. Requests are validated for
 * what the gateway itself needs and otherwise pass through untouched (tools, response_format,
 * logprobs, … survive), so `.passthrough` / `looseObject` is deliberate here.
 */
const contentPart = z.looseObject({ type: z.string() });
export const ChatMessageSchema = z.looseObject({
  role: z.enum(['system', 'developer', 'user', 'assistant', 'tool', 'function']),
  content: z.union([z.string(), z.array(contentPart), z.null()]).optional(),
  name: z.string().optional(),
  tool_call_id: z.string().optional(),
  tool_calls: z
    .array(
      z.looseObject({
        id: z.string(),
        type: z.literal('function'),
        function: z.looseObject({ name: z.string(), arguments: z.string() }),
      }),
    )
    .optional(),
});

export const ChatRequestSchema = z.looseObject({
  model: z.string().min(1),
  messages: z.array(ChatMessageSchema).min(1, 'messages must not be empty'),
  stream: z.boolean().optional(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullish(),
  max_tokens: z.number().int().positive().nullish(),
  max_completion_tokens: z.number().int().positive().nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  tools: z
    .array(
      z.looseObject({
        type: z.literal('function'),
        function: z.looseObject({
          name: z.string().min(1),
          description: z.string().optional(),
          parameters: z.unknown().optional(),
        }),
      }),
    )
    .optional(),
  studio_id: z.string().optional(),
});

export type ChatMessage = z.infer<typeof ChatMessageSchema>;
export type ChatRequest = z.infer<typeof ChatRequestSchema>;

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** Set by the gateway on an answer its response cache served: nothing was generated for it. */
  cached?: true;
}

export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: {
    index: number;
    message: { role: 'assistant'; content: string | null; tool_calls?: ToolCall[]; [key: string]: unknown };
    finish_reason: string | null;
    logprobs?: unknown;
  }[];
  usage?: ChatUsage;
  [key: string]: unknown;
}

export interface ChatChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: {
    index: number;
    delta: {
      role?: 'assistant';
      content?: string | null;
      tool_calls?: {
        index: number;
        id?: string;
        type?: 'function';
        function?: { name?: string; arguments?: string };
      }[];
      [key: string]: unknown;
    };
    finish_reason: string | null;
  }[];
  usage?: ChatUsage | null;
  [key: string]: unknown;
}

/** The text of a message's content, whether a string or an array of parts. */
export function textOf(content: ChatMessage['content']): string {
  if (typeof content === 'string') return content;
  if (!content) return '';
  return content
    .map((part) => (part.type === 'text' && typeof part.text === 'string' ? part.text : ''))
    .join('');
}

/**
 * Every output field of an assistant message or stream delta, as one text: its content, refusal and
 * reasoning (`reasoning_content`, `reasoning`), its tool calls' names and arguments (and the legacy
 * `function_call`'s), its audio's transcript. What a generation is charged for at least.
 */
export function outputTextOf(message: Readonly<Record<string, unknown>>): string {
  const texts: string[] = [];
  const add = (value: unknown) => {
    if (typeof value === 'string') texts.push(value);
  };
  const { content, refusal, reasoning_content, reasoning, tool_calls, function_call, audio } = message;
  if (Array.isArray(content)) {
    for (const part of content) add((part as { text?: unknown } | null)?.text);
  } else add(content);
  add(refusal);
  add(reasoning_content);
  add(reasoning);
  const calls = Array.isArray(tool_calls) ? tool_calls : [];
  for (const call of [...calls, { function: function_call }]) {
    const fn = (call as { function?: { name?: unknown; arguments?: unknown } } | null)?.function;
    add(fn?.name);
    add(fn?.arguments);
  }
  add((audio as { transcript?: unknown } | null | undefined)?.transcript);
  return texts.join('');
}
