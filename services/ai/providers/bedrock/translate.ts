import { randomBytes } from 'node:crypto';
import { ApiError } from '../../../../shared/errors.ts';
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

/** Translation between OpenAI's chat format (ours) and Amazon Bedrock's Converse API, both ways. */

const IMAGE_FORMATS: Record<string, ImageFormat> = {
  'image/png': 'png',
  'image/jpeg': 'jpeg',
  'image/jpg': 'jpeg',
  'image/gif': 'gif',
  'image/webp': 'webp',
};
type ImageFormat = 'png' | 'jpeg' | 'gif' | 'webp';

type ToolResultContent = { json: Record<string, unknown> } | { text: string };

export type ConverseBlock =
  | { text: string }
  | { image: { format: ImageFormat; source: { bytes: string } } }
  | { toolUse: { toolUseId: string; name: string; input: unknown } }
  | { toolResult: { toolUseId: string; content: ToolResultContent[] } };

export interface ConverseMessage {
  role: 'user' | 'assistant';
  content: ConverseBlock[];
}

type ToolChoice =
  | { auto: Record<string, never> }
  | { any: Record<string, never> }
  | { tool: { name: string } };

export interface ConverseRequest {
  messages: ConverseMessage[];
  system?: { text: string }[];
  inferenceConfig?: { maxTokens?: number; temperature?: number; topP?: number; stopSequences?: string[] };
  toolConfig?: {
    tools: { toolSpec: { name: string; description?: string; inputSchema: { json: unknown } } }[];
    toolChoice?: ToolChoice;
  };
}

function image(part: Record<string, unknown>): ConverseBlock {
  const value = part.image_url as { url?: unknown } | string | undefined;
  const url = typeof value === 'string' ? value : typeof value?.url === 'string' ? value.url : '';
  const data = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  if (!data)
    throw new ApiError(
      'validation_failed',
      'Bedrock takes images only inline: send a data: URL (base64 PNG, JPEG, GIF or WebP), not a link',
    );
  const format = IMAGE_FORMATS[data[1]!.toLowerCase()];
  if (!format)
    throw new ApiError('validation_failed', `Bedrock takes PNG, JPEG, GIF or WebP images, not ${data[1]}`);
  return { image: { format, source: { bytes: data[2]! } } };
}

function contentBlocks(content: ChatMessage['content']): ConverseBlock[] {
  if (typeof content === 'string') return content ? [{ text: content }] : [];
  return (content ?? []).flatMap((part): ConverseBlock[] => {
    if (part.type === 'text' && typeof part.text === 'string') return part.text ? [{ text: part.text }] : [];
    if (part.type === 'image_url') return [image(part)];
    return [];
  });
}

/** A tool's answer goes as JSON when it is a JSON object (what Converse's `json` holds), else as text. */
function toolResultContent(text: string): ToolResultContent[] {
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed))
      return [{ json: parsed as Record<string, unknown> }];
  } catch {
    // plain text
  }
  return [{ text }];
}

/**
 * OpenAI's `tool_choice` → Converse's. Converse has no "none": then no tool is declared, so none can
 * be called. `undefined` leaves the model's default (auto).
 */
function toolChoice(choice: unknown): ToolChoice | 'none' | undefined {
  if (choice === 'none') return 'none';
  if (choice === 'required') return { any: {} };
  if (choice === 'auto') return { auto: {} };
  const name = (choice as { function?: { name?: unknown } } | null | undefined)?.function?.name;
  if (typeof name === 'string' && name) return { tool: { name } };
  return undefined;
}

const hasToolBlocks = (messages: ConverseMessage[]) =>
  messages.some((m) => m.content.some((b) => 'toolUse' in b || 'toolResult' in b));

export function toConverse(request: ChatRequest): ConverseRequest {
  const turns = turnsOf<ConverseBlock>(request.messages, {
    content: contentBlocks,
    toolUse: (toolUseId, name, input) => ({ toolUse: { toolUseId, name, input } }),
    toolResult: (toolUseId, text) => ({ toolResult: { toolUseId, content: toolResultContent(text) } }),
  });
  const system = turns.system.filter(Boolean).map((text) => ({ text }));
  const messages = turns.turns;

  const stop = request.stop as string | string[] | null | undefined;
  const maxTokens = request.max_completion_tokens ?? request.max_tokens;
  const inferenceConfig = {
    ...(maxTokens == null ? {} : { maxTokens }),
    // OpenAI's temperature goes to 2; the models behind Converse take at most 1.
    ...(request.temperature == null ? {} : { temperature: Math.min(request.temperature, 1) }),
    ...(typeof request.top_p === 'number' ? { topP: request.top_p } : {}),
    ...(stop?.length ? { stopSequences: Array.isArray(stop) ? stop : [stop] } : {}),
  };

  const choice = toolChoice(request.tool_choice);
  // Bedrock refuses toolUse/toolResult blocks unless tools are declared, so with `none` the tools
  // stay declared (without a choice) when the conversation already holds tool calls.
  const declareTools = !!request.tools?.length && (choice !== 'none' || hasToolBlocks(messages));
  return {
    messages,
    ...(system.length ? { system } : {}),
    ...(Object.keys(inferenceConfig).length ? { inferenceConfig } : {}),
    ...(declareTools
      ? {
          toolConfig: {
            tools: (request.tools ?? []).map((t) => ({
              toolSpec: {
                name: t.function.name,
                ...(t.function.description ? { description: t.function.description } : {}),
                inputSchema: { json: t.function.parameters ?? { type: 'object', properties: {} } },
              },
            })),
            ...(choice && choice !== 'none' ? { toolChoice: choice } : {}),
          },
        }
      : {}),
  };
}

/** Converse's `stopReason` → OpenAI's `finish_reason`; anything else is a plain stop. */
const FINISH_REASONS: Record<string, string> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  guardrail_intervened: 'content_filter',
  content_filtered: 'content_filter',
};
export const finishReason = (stop: string | null | undefined): string =>
  (stop && FINISH_REASONS[stop]) || 'stop';

export interface ConverseUsage {
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
}

const chatUsage = (usage: ConverseUsage | undefined): ChatUsage => {
  const prompt = usage?.inputTokens ?? 0;
  const completion = usage?.outputTokens ?? 0;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: usage?.totalTokens ?? prompt + completion,
  };
};

type ResponseBlock = { text?: string; toolUse?: { toolUseId?: string; name?: string; input?: unknown } };

export interface ConverseResponse {
  output: { message: { role: string; content: ResponseBlock[] } };
  stopReason?: string;
  usage?: ConverseUsage;
}

export function fromConverse(response: ConverseResponse, model: string): ChatCompletion {
  const blocks = response.output.message.content;
  const text = blocks.flatMap((b) => (typeof b.text === 'string' ? [b.text] : [])).join('');
  const toolCalls = blocks.flatMap((b): ToolCall[] =>
    b.toolUse
      ? [
          {
            id: b.toolUse.toolUseId ?? `tooluse_${randomBytes(8).toString('hex')}`,
            type: 'function',
            function: { name: b.toolUse.name ?? '', arguments: JSON.stringify(b.toolUse.input ?? {}) },
          },
        ]
      : [],
  );
  return completionOf(model, {
    text,
    toolCalls,
    finishReason: finishReason(response.stopReason),
    usage: chatUsage(response.usage),
  });
}

interface StreamEvent {
  contentBlockIndex?: number;
  start?: { toolUse?: { toolUseId?: string; name?: string } };
  delta?: { text?: string; toolUse?: { input?: string } };
  stopReason?: string;
  usage?: ConverseUsage;
}

/**
 * ConverseStream's events → OpenAI chunks, one event at a time: a role chunk first, text deltas,
 * tool calls as index/id/name then argument pieces, a finish chunk at `messageStop`, and a usage
 * chunk at `metadata` (which follows it) when asked for.
 */
export function streamTranslator(model: string, includeUsage: boolean) {
  const { chunk, usage } = chunkWriter(model);
  const tools = toolCallDeltas();

  return (type: string, event: StreamEvent): ChatChunk[] => {
    switch (type) {
      case 'messageStart':
        return [chunk({ role: 'assistant', content: '' })];
      case 'contentBlockStart': {
        const tool = event.start?.toolUse;
        if (!tool) return [];
        const callId = tool.toolUseId ?? `tooluse_${randomBytes(8).toString('hex')}`;
        return [chunk(tools.start(event.contentBlockIndex ?? 0, callId, tool.name ?? ''))];
      }
      case 'contentBlockDelta': {
        const delta = event.delta;
        if (typeof delta?.text === 'string' && delta.text) return [chunk({ content: delta.text })];
        const input = delta?.toolUse?.input;
        if (typeof input === 'string' && input)
          return [chunk(tools.arguments(event.contentBlockIndex ?? 0, input))];
        return []; // reasoning, citations
      }
      case 'messageStop':
        return [chunk({}, finishReason(event.stopReason))];
      case 'metadata':
        return includeUsage ? [usage(chatUsage(event.usage))] : [];
      default: // contentBlockStop, and events added later
        return [];
    }
  };
}
