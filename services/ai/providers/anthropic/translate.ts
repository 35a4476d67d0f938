import { randomBytes } from 'node:crypto';
import type {
  ChatChunk,
  ChatCompletion,
  ChatMessage,
  ChatRequest,
  ChatUsage,
  ToolCall,
} from '../../chat/wire.ts';
import { chunkWriter, toolCallDeltas } from '../chunks.ts';
import { completionOf, turnsOf } from '../translation.ts';

/** Read from here by Gemini's translation and the Anthropic API's. */
export { parseArguments } from '../translation.ts';

/** Translation between OpenAI's chat format (ours) and Anthropic's Messages API, both ways. */

type Block =
  | { type: 'text'; text: string }
  | {
      type: 'image';
      source: { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string };
    }
  | { type: 'tool_use'; id: string; name: string; input: unknown }
  | { type: 'tool_result'; tool_use_id: string; content: string };

export interface AnthropicMessage {
  role: 'user' | 'assistant';
  content: Block[];
}

type ToolChoice = ({ type: 'auto' | 'any' | 'none' } | { type: 'tool'; name: string }) & {
  disable_parallel_tool_use?: boolean;
};

export interface AnthropicRequest {
  model: string;
  max_tokens: number;
  messages: AnthropicMessage[];
  system?: string;
  temperature?: number;
  top_p?: number;
  stop_sequences?: string[];
  tools?: { name: string; description?: string; input_schema: unknown }[];
  tool_choice?: ToolChoice;
  metadata?: { user_id: string };
  stream?: boolean;
}

/** Anthropic requires `max_tokens`; OpenAI's clients usually leave it out. */
export const DEFAULT_MAX_TOKENS = 4096;

function contentBlocks(content: ChatMessage['content']): Block[] {
  if (typeof content === 'string') return content ? [{ type: 'text', text: content }] : [];
  return (content ?? []).flatMap((part): Block[] => {
    if (part.type === 'text' && typeof part.text === 'string')
      return part.text ? [{ type: 'text', text: part.text }] : [];
    if (part.type === 'image_url') {
      const image = part.image_url as { url?: string } | string | undefined;
      const url = typeof image === 'string' ? image : (image?.url ?? '');
      const data = /^data:([^;,]+);base64,(.*)$/s.exec(url);
      return [
        data
          ? { type: 'image', source: { type: 'base64', media_type: data[1]!, data: data[2]! } }
          : { type: 'image', source: { type: 'url', url } },
      ];
    }
    return [];
  });
}

function toolChoice(request: ChatRequest): ToolChoice | undefined {
  const choice = request.tool_choice as string | { function?: { name?: string } } | null | undefined;
  const parallel = request.parallel_tool_calls === false ? { disable_parallel_tool_use: true } : {};
  if (choice == null)
    return request.parallel_tool_calls === false ? { type: 'auto', ...parallel } : undefined;
  if (choice === 'none') return { type: 'none' };
  if (choice === 'required') return { type: 'any', ...parallel };
  if (typeof choice === 'object' && choice.function?.name)
    return { type: 'tool', name: choice.function.name, ...parallel };
  return { type: 'auto', ...parallel };
}

export function toAnthropic(request: ChatRequest, upstreamModel: string): AnthropicRequest {
  const { system, turns: messages } = turnsOf<Block>(request.messages, {
    content: contentBlocks,
    toolUse: (id, name, input) => ({ type: 'tool_use', id, name, input }),
    toolResult: (id, text) => ({ type: 'tool_result', tool_use_id: id, content: text }),
  });
  const stop = request.stop as string | string[] | null | undefined;
  const choice = request.tools?.length ? toolChoice(request) : undefined;
  const user = typeof request.user === 'string' && request.user ? request.user : undefined;
  return {
    model: upstreamModel,
    max_tokens: request.max_completion_tokens ?? request.max_tokens ?? DEFAULT_MAX_TOKENS,
    messages,
    ...(system.some(Boolean) ? { system: system.filter(Boolean).join('\n\n') } : {}),
    // OpenAI's temperature goes to 2, Anthropic's to 1.
    ...(request.temperature == null ? {} : { temperature: Math.min(request.temperature, 1) }),
    ...(typeof request.top_p === 'number' ? { top_p: request.top_p } : {}),
    ...(stop?.length ? { stop_sequences: Array.isArray(stop) ? stop : [stop] } : {}),
    ...(request.tools?.length
      ? {
          tools: request.tools.map((t) => ({
            name: t.function.name,
            ...(t.function.description ? { description: t.function.description } : {}),
            input_schema: t.function.parameters ?? { type: 'object', properties: {} },
          })),
        }
      : {}),
    ...(choice ? { tool_choice: choice } : {}),
    ...(user ? { metadata: { user_id: user } } : {}),
  };
}

export function finishReason(stop: string | null | undefined): string | null {
  switch (stop) {
    case null:
    case undefined:
      return null;
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default: // end_turn, stop_sequence, pause_turn
      return 'stop';
  }
}

export interface AnthropicUsage {
  input_tokens?: number;
  output_tokens?: number;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
}

/** Anthropic counts cached prompt tokens apart; OpenAI's `prompt_tokens` includes them. */
export const promptTokens = (usage: AnthropicUsage | undefined) =>
  (usage?.input_tokens ?? 0) +
  (usage?.cache_creation_input_tokens ?? 0) +
  (usage?.cache_read_input_tokens ?? 0);

const chatUsage = (prompt: number, completion: number): ChatUsage => ({
  prompt_tokens: prompt,
  completion_tokens: completion,
  total_tokens: prompt + completion,
});

type ResponseBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown }
  | { type: 'thinking' | 'redacted_thinking' | 'server_tool_use' };

export interface AnthropicResponse {
  id: string;
  content: ResponseBlock[];
  stop_reason: string | null;
  usage: AnthropicUsage;
}

export function fromAnthropic(response: AnthropicResponse, model: string): ChatCompletion {
  const blocks = response.content ?? [];
  const text = blocks.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');
  const toolCalls = blocks.flatMap((b): ToolCall[] =>
    b.type === 'tool_use'
      ? [{ id: b.id, type: 'function', function: { name: b.name, arguments: JSON.stringify(b.input ?? {}) } }]
      : [],
  );
  return completionOf(model, {
    text,
    toolCalls,
    finishReason: finishReason(response.stop_reason) ?? 'stop',
    usage: chatUsage(promptTokens(response.usage), response.usage?.output_tokens ?? 0),
  });
}

interface StreamEvent {
  index?: number;
  message?: { usage?: AnthropicUsage };
  content_block?: { type: string; id?: string; name?: string; text?: string };
  delta?: { type?: string; text?: string; partial_json?: string; stop_reason?: string | null };
  usage?: AnthropicUsage;
}

/**
 * Anthropic's stream events → OpenAI chunks, one event at a time: a role chunk first, text deltas,
 * tool calls as index/id/name then argument pieces, a finish chunk, and a usage chunk when asked for.
 */
export function streamTranslator(model: string, includeUsage: boolean) {
  const { chunk, usage } = chunkWriter(model);
  const tools = toolCallDeltas();
  let inputTokens = 0;
  let outputTokens = 0;
  let stop: string | null = null;

  return (type: string, event: StreamEvent): ChatChunk[] => {
    switch (type) {
      case 'message_start':
        // Its output count (1) is said before anything is generated: only `message_delta`'s counts.
        inputTokens = promptTokens(event.message?.usage);
        return [chunk({ role: 'assistant', content: '' })];
      case 'content_block_start': {
        const block = event.content_block;
        if (block?.type === 'text' && block.text) return [chunk({ content: block.text })];
        if (block?.type !== 'tool_use') return [];
        const callId = block.id ?? `toolu_${randomBytes(8).toString('hex')}`;
        return [chunk(tools.start(event.index ?? 0, callId, block.name ?? ''))];
      }
      case 'content_block_delta': {
        const delta = event.delta;
        if (delta?.type === 'text_delta' && delta.text) return [chunk({ content: delta.text })];
        if (delta?.type === 'input_json_delta' && delta.partial_json)
          return [chunk(tools.arguments(event.index ?? 0, delta.partial_json))];
        return []; // thinking, signatures
      }
      case 'message_delta':
        stop = event.delta?.stop_reason ?? stop;
        inputTokens = Math.max(inputTokens, promptTokens(event.usage)); // newer streams repeat it here
        outputTokens = event.usage?.output_tokens ?? outputTokens;
        return [];
      case 'message_stop':
        return [
          chunk({}, finishReason(stop) ?? 'stop'),
          ...(includeUsage ? [usage(chatUsage(inputTokens, outputTokens))] : []),
        ];
      default: // ping, content_block_stop
        return [];
    }
  };
}
