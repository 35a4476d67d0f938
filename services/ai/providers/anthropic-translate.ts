import { randomBytes } from 'node:crypto';
import { completionId, nowSeconds } from '../chat/ids.ts';
import type { ChatChunk, ChatCompletion, ChatMessage, ChatRequest, ToolCall } from '../chat/wire.ts';
import { textOf } from '../chat/wire.ts';

/** Translation between OpenAI's chat format (ours) and Anthropic's Messages API, both ways. */

type Block =
  | { type: 'text'; text: string }
  | {
      type: 'image';
      source: { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string };
    }
  | { type: 'tool_use'; id: string; name: string; input: unknown }
  | { type: 'tool_result'; tool_use_id: string; content: string; is_error?: boolean };

export interface AnthropicMessage {
  role: 'user' | 'assistant';
  content: Block[];
}

export interface AnthropicRequest {
  model: string;
  max_tokens: number;
  messages: AnthropicMessage[];
  system?: string;
  temperature?: number;
  top_p?: number;
  stop_sequences?: string[];
  tools?: { name: string; description?: string; input_schema: unknown }[];
  tool_choice?: { type: 'auto' | 'any' | 'none' } | { type: 'tool'; name: string };
  stream?: boolean;
}

export const DEFAULT_MAX_TOKENS = 4096;

function contentBlocks(content: ChatMessage['content']): Block[] {
  if (typeof content === 'string') return content ? [{ type: 'text', text: content }] : [];
  if (!content) return [];
  return content.flatMap((part): Block[] => {
    if (part.type === 'text' && typeof part.text === 'string') return [{ type: 'text', text: part.text }];
    if (part.type === 'image_url') {
      const url = (part.image_url as { url?: string } | undefined)?.url ?? '';
      const data = /^data:([^;]+);base64,(.*)$/s.exec(url);
      return [
        data
          ? { type: 'image', source: { type: 'base64', media_type: data[1]!, data: data[2]! } }
          : { type: 'image', source: { type: 'url', url } },
      ];
    }
    return [];
  });
}

function parseArguments(json: string): unknown {
  try {
    return json.trim() ? JSON.parse(json) : {};
  } catch {
    return { _raw: json };
  }
}

/** Consecutive messages of one role merge: Anthropic wants user and assistant to alternate. */
function push(messages: AnthropicMessage[], role: 'user' | 'assistant', blocks: Block[]): void {
  if (blocks.length === 0) return;
  const last = messages.at(-1);
  if (last?.role === role) last.content.push(...blocks);
  else messages.push({ role, content: blocks });
}

export function toAnthropic(request: ChatRequest, upstreamModel: string): AnthropicRequest {
  const system: string[] = [];
  const messages: AnthropicMessage[] = [];
  for (const message of request.messages) {
    switch (message.role) {
      case 'system':
      case 'developer':
        system.push(textOf(message.content));
        break;
      case 'user':
        push(messages, 'user', contentBlocks(message.content));
        break;
      case 'assistant':
        push(messages, 'assistant', [
          ...contentBlocks(message.content),
          ...(message.tool_calls ?? []).map(
            (call): Block => ({
              type: 'tool_use',
              id: call.id,
              name: call.function.name,
              input: parseArguments(call.function.arguments),
            }),
          ),
        ]);
        break;
      case 'tool':
      case 'function':
        push(messages, 'user', [
          {
            type: 'tool_result',
            tool_use_id: message.tool_call_id ?? message.name ?? '',
            content: textOf(message.content),
          },
        ]);
        break;
    }
  }
  const stop = request.stop as string | string[] | null | undefined;
  const choice = request.tool_choice as string | { type: string; function?: { name: string } } | undefined;
  return {
    model: upstreamModel,
    max_tokens: request.max_completion_tokens ?? request.max_tokens ?? DEFAULT_MAX_TOKENS,
    messages,
    ...(system.length ? { system: system.join('\n\n') } : {}),
    ...(request.temperature == null ? {} : { temperature: Math.min(request.temperature, 1) }),
    ...(typeof request.top_p === 'number' ? { top_p: request.top_p } : {}),
    ...(stop ? { stop_sequences: Array.isArray(stop) ? stop : [stop] } : {}),
    ...(request.tools?.length
      ? {
          tools: request.tools.map((t) => ({
            name: t.function.name,
            ...(t.function.description ? { description: t.function.description } : {}),
            input_schema: t.function.parameters ?? { type: 'object', properties: {} },
          })),
        }
      : {}),
    ...(choice === undefined
      ? {}
      : {
          tool_choice:
            choice === 'required'
              ? { type: 'any' }
              : choice === 'none'
                ? { type: 'none' }
                : typeof choice === 'object' && choice.function
                  ? { type: 'tool', name: choice.function.name }
                  : { type: 'auto' },
        }),
  };
}

export const finishReason = (stop: string | null | undefined): string | null => {
  switch (stop) {
    case 'end_turn':
    case 'stop_sequence':
      return 'stop';
    case 'max_tokens':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case null:
    case undefined:
      return null;
    default:
      return 'stop';
  }
};

export interface AnthropicResponse {
  id: string;
  content: (
    | { type: 'text'; text: string }
    | { type: 'tool_use'; id: string; name: string; input: unknown }
    | { type: string }
  )[];
  stop_reason: string | null;
  usage: { input_tokens: number; output_tokens: number };
}

export function fromAnthropic(response: AnthropicResponse, model: string): ChatCompletion {
  const text = response.content
    .filter((b): b is { type: 'text'; text: string } => b.type === 'text')
    .map((b) => b.text)
    .join('');
  const toolCalls: ToolCall[] = response.content
    .filter((b): b is { type: 'tool_use'; id: string; name: string; input: unknown } => b.type === 'tool_use')
    .map((b) => ({
      id: b.id,
      type: 'function',
      function: { name: b.name, arguments: JSON.stringify(b.input ?? {}) },
    }));
  const { input_tokens, output_tokens } = response.usage;
  return {
    id: completionId(),
    object: 'chat.completion',
    created: nowSeconds(),
    model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: text || (toolCalls.length ? null : ''),
          ...(toolCalls.length ? { tool_calls: toolCalls } : {}),
        },
        finish_reason: finishReason(response.stop_reason),
      },
    ],
    usage: {
      prompt_tokens: input_tokens,
      completion_tokens: output_tokens,
      total_tokens: input_tokens + output_tokens,
    },
  };
}

/**
 * Anthropic's stream events → OpenAI chunks, one at a time: a role chunk first, tool calls as
 * index/id/name then argument pieces, a finish chunk, and a usage chunk when asked for.
 */
export function streamTranslator(model: string, includeUsage: boolean) {
  const id = completionId();
  const created = nowSeconds();
  const chunk = (delta: ChatChunk['choices'][number]['delta'], finish: string | null = null): ChatChunk => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  const toolIndex = new Map<number, number>();
  let inputTokens = 0;
  let outputTokens = 0;
  let stop: string | null = null;

  return (type: string, data: Record<string, unknown>): ChatChunk[] => {
    switch (type) {
      case 'message_start': {
        const usage = (data.message as { usage?: { input_tokens?: number } } | undefined)?.usage;
        inputTokens = usage?.input_tokens ?? 0;
        return [chunk({ role: 'assistant', content: '' })];
      }
      case 'content_block_start': {
        const block = data.content_block as { type: string; id?: string; name?: string };
        if (block.type !== 'tool_use') return [];
        const index = toolIndex.size;
        toolIndex.set(data.index as number, index);
        return [
          chunk({
            tool_calls: [
              {
                index,
                id: block.id ?? `toolu_${randomBytes(8).toString('hex')}`,
                type: 'function',
                function: { name: block.name ?? '', arguments: '' },
              },
            ],
          }),
        ];
      }
      case 'content_block_delta': {
        const delta = data.delta as { type: string; text?: string; partial_json?: string };
        if (delta.type === 'text_delta') return [chunk({ content: delta.text ?? '' })];
        if (delta.type === 'input_json_delta') {
          const index = toolIndex.get(data.index as number) ?? 0;
          return [chunk({ tool_calls: [{ index, function: { arguments: delta.partial_json ?? '' } }] })];
        }
        return [];
      }
      case 'message_delta': {
        stop = (data.delta as { stop_reason?: string | null } | undefined)?.stop_reason ?? stop;
        outputTokens = (data.usage as { output_tokens?: number } | undefined)?.output_tokens ?? outputTokens;
        return [];
      }
      case 'message_stop': {
        const out = [chunk({}, finishReason(stop) ?? 'stop')];
        if (includeUsage) {
          out.push({
            ...chunk({}),
            choices: [],
            usage: {
              prompt_tokens: inputTokens,
              completion_tokens: outputTokens,
              total_tokens: inputTokens + outputTokens,
            },
          });
        }
        return out;
      }
      default:
        return [];
    }
  };
}
