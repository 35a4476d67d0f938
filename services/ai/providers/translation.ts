import { completionId, nowSeconds } from '../chat/ids.ts';
import {
  type ChatCompletion,
  type ChatMessage,
  type ChatUsage,
  type ToolCall,
  textOf,
} from '../chat/wire.ts';

/** What the translations from and to a wire other than OpenAI's (Anthropic's, Converse) share. */

/** Tool arguments are a JSON string in OpenAI's format and an object in the others'. */
export function parseArguments(json: string): unknown {
  try {
    const parsed: unknown = json.trim() ? JSON.parse(json) : {};
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)
      ? parsed
      : { value: parsed };
  } catch {
    return { _raw: json };
  }
}

export interface Turn<Block> {
  role: 'user' | 'assistant';
  content: Block[];
}

/** An upstream's blocks for what OpenAI's messages hold. */
export interface TurnBlocks<Block> {
  /** A user's or assistant's content. */
  content(content: ChatMessage['content']): Block[];
  /** One tool call of the assistant, its arguments parsed. */
  toolUse(id: string, name: string, input: unknown): Block;
  /** A tool's answer to the call `id`. */
  toolResult(id: string, text: string): Block;
}

/**
 * OpenAI's messages as turns of an upstream's blocks, tool results the user's, and the system (and
 * developer) texts apart. Consecutive messages of one role merge into one turn: these upstreams
 * want the roles to alternate.
 */
export function turnsOf<Block>(
  messages: ChatMessage[],
  blocks: TurnBlocks<Block>,
): { system: string[]; turns: Turn<Block>[] } {
  const system: string[] = [];
  const turns: Turn<Block>[] = [];
  const push = (role: Turn<Block>['role'], content: Block[]) => {
    if (content.length === 0) return;
    const last = turns.at(-1);
    if (last?.role === role) last.content.push(...content);
    else turns.push({ role, content });
  };
  for (const message of messages) {
    switch (message.role) {
      case 'system':
      case 'developer':
        system.push(textOf(message.content));
        break;
      case 'user':
        push('user', blocks.content(message.content));
        break;
      case 'assistant':
        push('assistant', [
          ...blocks.content(message.content),
          ...(message.tool_calls ?? []).map((call) =>
            blocks.toolUse(call.id, call.function.name, parseArguments(call.function.arguments)),
          ),
        ]);
        break;
      case 'tool':
      case 'function':
        push('user', [
          blocks.toolResult(message.tool_call_id ?? message.name ?? '', textOf(message.content)),
        ]);
        break;
    }
  }
  return { system, turns };
}

/** An upstream's one answer (its text and tool calls) as an OpenAI chat completion. */
export function completionOf(
  model: string,
  answer: { text: string; toolCalls: ToolCall[]; finishReason: string; usage: ChatUsage },
): ChatCompletion {
  const { text, toolCalls } = answer;
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
        finish_reason: answer.finishReason,
      },
    ],
    usage: answer.usage,
  };
}
