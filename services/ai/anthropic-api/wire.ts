import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { sseFrame } from '../../../shared/http/sse.ts';

/**
 * Anthropic's Messages API as clients send it. Checked for what the gateway itself reads; every
 * object is loose, because Anthropic adds fields (and betas) that the anthropic provider passes on
 * untouched, so `looseObject` is deliberate here.
 */

const TextBlock = z.looseObject({ type: z.literal('text'), text: z.string() });
const ImageBlock = z.looseObject({
  type: z.literal('image'),
  source: z.union([
    z.looseObject({ type: z.literal('base64'), media_type: z.string().min(1), data: z.string() }),
    z.looseObject({ type: z.literal('url'), url: z.string().min(1) }),
  ]),
});
const ToolUseBlock = z.looseObject({
  type: z.literal('tool_use'),
  id: z.string().min(1),
  name: z.string().min(1),
  input: z.unknown(),
});
const ToolResultBlock = z.looseObject({
  type: z.literal('tool_result'),
  tool_use_id: z.string().min(1),
  content: z.union([z.string(), z.array(z.union([TextBlock, ImageBlock]))]).optional(),
  is_error: z.boolean().optional(),
});
/** The blocks the gateway reads, checked for the fields it reads; any other type passes on as it is. */
const KNOWN_BLOCKS = new Map<string, z.ZodType>([
  ['text', TextBlock],
  ['image', ImageBlock],
  ['tool_use', ToolUseBlock],
  ['tool_result', ToolResultBlock],
]);

/** A content block: thinking, documents, server tools' blocks… pass on untouched (the native path sends them). */
export const ContentBlockSchema = z.looseObject({ type: z.string() }).superRefine((block, ctx) => {
  const known = KNOWN_BLOCKS.get(block.type)?.safeParse(block);
  for (const issue of known?.error?.issues ?? [])
    ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path });
});

export const MessageParamSchema = z.looseObject({
  role: z.enum(['user', 'assistant']),
  content: z.union([z.string(), z.array(ContentBlockSchema)]),
});

export const ToolSchema = z.looseObject({
  /** Absent or `custom` for a tool the client runs; a dated type (`web_search_20250305`) for Anthropic's own. */
  type: z.string().optional(),
  name: z.string().min(1),
  description: z.string().optional(),
  input_schema: z.unknown().optional(),
});

export const ToolChoiceSchema = z
  .looseObject({
    type: z.enum(['auto', 'any', 'tool', 'none']),
    name: z.string().min(1).optional(),
    disable_parallel_tool_use: z.boolean().optional(),
  })
  .refine((choice) => choice.type !== 'tool' || choice.name !== undefined, {
    message: 'tool_choice of type "tool" names the tool',
    path: ['name'],
  });

const MessagesBody = {
  model: z.string().min(1),
  messages: z.array(MessageParamSchema).min(1, 'messages must not be empty'),
  system: z.union([z.string(), z.array(TextBlock)]).optional(),
  tools: z.array(ToolSchema).optional(),
  tool_choice: ToolChoiceSchema.optional(),
  studio_id: z.string().optional(),
};

export const MessagesRequestSchema = z.looseObject({
  ...MessagesBody,
  max_tokens: z.number().int().positive(),
  stream: z.boolean().optional(),
  stop_sequences: z.array(z.string()).optional(),
  temperature: z.number().min(0).max(1).optional(),
  top_p: z.number().min(0).max(1).optional(),
  metadata: z.looseObject({ user_id: z.string().nullish() }).optional(),
});

/** `count_tokens` takes what a message request takes but its generation settings. */
export const CountTokensRequestSchema = z.looseObject(MessagesBody);

export type ContentBlock = z.infer<typeof ContentBlockSchema>;
interface KnownBlocks {
  text: z.infer<typeof TextBlock>;
  image: z.infer<typeof ImageBlock>;
  tool_use: z.infer<typeof ToolUseBlock>;
  tool_result: z.infer<typeof ToolResultBlock>;
}
/** Sound because the schema lets a known type through only with its fields. */
export const isBlock = <T extends keyof KnownBlocks>(block: ContentBlock, type: T): block is KnownBlocks[T] =>
  block.type === type;
export type MessageParam = z.infer<typeof MessageParamSchema>;
export type MessagesRequest = z.infer<typeof MessagesRequestSchema>;
export type CountTokensRequest = z.infer<typeof CountTokensRequestSchema>;

/** A request body on its way to a native upstream, with the headers of Anthropic's that go with it. */
export interface MessagesCall {
  body: Record<string, unknown>;
  /** The client's `anthropic-version` and `anthropic-beta` (a beta's fields need its header upstream). */
  version?: string;
  beta?: string;
}

export interface MessagesUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  [key: string]: unknown;
}

export type ResponseBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown }
  | { type: string; [key: string]: unknown };

/** A whole answer (`type: "message"`). */
export interface MessagesResponse {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: ResponseBlock[];
  stop_reason: string | null;
  stop_sequence: string | null;
  usage: MessagesUsage;
  [key: string]: unknown;
}

/** One server-sent event of a streamed answer: its name and its data (which repeats the name as `type`). */
export interface MessagesEvent {
  event: string;
  data: Record<string, unknown>;
}

export const messageId = () => `msg_${randomBytes(12).toString('base64url')}`;

/** An event as it goes on the wire. */
export const eventFrame = ({ event, data }: MessagesEvent) => sseFrame({ event, data: JSON.stringify(data) });

/**
 * Every output field of a Messages answer's content, as one text: text, thinking, and each tool
 * use's name and input. What a generation is charged for at least.
 */
export function contentOutputText(content: readonly ResponseBlock[]): string {
  const texts: string[] = [];
  for (const block of content) {
    const { text, thinking, name, input } = block as Record<string, unknown>;
    for (const value of [text, thinking, name]) if (typeof value === 'string') texts.push(value);
    if (input !== undefined) texts.push(JSON.stringify(input));
  }
  return texts.join('');
}
