import { ApiError } from '../../../shared/errors.ts';
import type { ChatMessage, ChatRequest } from '../chat/wire.ts';
import { type ContentBlock, isBlock, type MessageParam, type MessagesRequest } from './wire.ts';

/**
 * A Messages API request as OpenAI's chat format, for the providers that speak only that (the
 * reverse of the anthropic provider's `toAnthropic`). What has no equivalent in chat is refused
 * when it would change the answer (Anthropic's own tools, documents) and dropped when it would not
 * (`cache_control`, thinking blocks of earlier turns, `top_k`, betas' fields).
 */
export function toChat(request: MessagesRequest, upstreamModel: string, maxTokens: number): ChatRequest {
  const system = systemText(request.system);
  const messages: ChatMessage[] = [
    ...(system ? [{ role: 'system' as const, content: system }] : []),
    ...request.messages.flatMap(chatMessages),
  ];
  const user = request.metadata?.user_id;
  return {
    model: upstreamModel,
    messages,
    max_tokens: maxTokens,
    ...(request.stream ? { stream: true, stream_options: { include_usage: true } } : {}),
    ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
    ...(request.top_p === undefined ? {} : { top_p: request.top_p }),
    ...(request.stop_sequences?.length ? { stop: request.stop_sequences } : {}),
    ...(request.tools?.length ? { tools: request.tools.map(chatTool) } : {}),
    ...(request.tools?.length && request.tool_choice ? toolChoice(request.tool_choice) : {}),
    ...(user ? { user } : {}),
  };
}

export function systemText(system: MessagesRequest['system']): string {
  if (system === undefined) return '';
  if (typeof system === 'string') return system;
  return system
    .map((block) => block.text)
    .filter(Boolean)
    .join('\n\n');
}

export const blocksOf = (content: string | ContentBlock[]): ContentBlock[] =>
  typeof content === 'string' ? [{ type: 'text', text: content }] : content;

type ChatPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };

/** Blocks of an assistant's earlier turn: thinking is the model's own, not replayable elsewhere, and dropped. */
const ASSISTANT_BLOCKS: ReadonlySet<string> = new Set(['text', 'tool_use', 'thinking', 'redacted_thinking']);

function chatMessages(message: MessageParam): ChatMessage[] {
  const blocks = blocksOf(message.content);
  if (message.role === 'assistant') {
    for (const block of blocks) if (!ASSISTANT_BLOCKS.has(block.type)) refuse(block.type);
    const text = blocks.flatMap((b) => (isBlock(b, 'text') ? [b.text] : [])).join('');
    const calls = blocks.flatMap((b) =>
      isBlock(b, 'tool_use')
        ? [
            {
              id: b.id,
              type: 'function' as const,
              function: { name: b.name, arguments: JSON.stringify(b.input ?? {}) },
            },
          ]
        : [],
    );
    return [
      {
        role: 'assistant',
        content: text || (calls.length ? null : ''),
        ...(calls.length ? { tool_calls: calls } : {}),
      },
    ];
  }
  return userMessages(blocks);
}

/**
 * A user turn's tool results become `tool` messages, ahead of the rest of the turn (chat wants them
 * right after the assistant's calls); images a result holds follow in the user message, since a
 * chat tool message carries only text.
 */
function userMessages(blocks: ContentBlock[]): ChatMessage[] {
  const tools: ChatMessage[] = [];
  const parts: ChatPart[] = [];
  for (const block of blocks) {
    if (isBlock(block, 'text')) parts.push({ type: 'text', text: block.text });
    else if (isBlock(block, 'image')) parts.push(imagePart(block.source));
    else if (isBlock(block, 'tool_result')) {
      const inner = blocksOf(block.content ?? []);
      tools.push({
        role: 'tool',
        tool_call_id: block.tool_use_id,
        content: inner.flatMap((b) => (isBlock(b, 'text') ? [b.text] : [])).join(''),
      });
      for (const b of inner) if (isBlock(b, 'image')) parts.push(imagePart(b.source));
    } else refuse(block.type);
  }
  if (parts.length === 0) return tools;
  const [only] = parts;
  return [
    ...tools,
    { role: 'user', content: parts.length === 1 && only?.type === 'text' ? only.text : parts },
  ];
}

function imagePart(
  source: { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string },
): ChatPart {
  const url = source.type === 'base64' ? `data:${source.media_type};base64,${source.data}` : source.url;
  return { type: 'image_url', image_url: { url } };
}

function refuse(type: string): never {
  throw new ApiError(
    'validation_failed',
    `content blocks of type "${type}" are served by anthropic/* models only`,
    {
      param: 'messages',
    },
  );
}

function chatTool(tool: NonNullable<MessagesRequest['tools']>[number]) {
  if (tool.type !== undefined && tool.type !== 'custom') {
    throw new ApiError(
      'validation_failed',
      `the tool "${tool.name}" (${tool.type}) is served by anthropic/* models only`,
      { param: 'tools' },
    );
  }
  return {
    type: 'function' as const,
    function: {
      name: tool.name,
      ...(tool.description ? { description: tool.description } : {}),
      parameters: tool.input_schema ?? { type: 'object', properties: {} },
    },
  };
}

function toolChoice(choice: NonNullable<MessagesRequest['tool_choice']>): Partial<ChatRequest> {
  const parallel = choice.disable_parallel_tool_use ? { parallel_tool_calls: false } : {};
  switch (choice.type) {
    case 'auto':
      return { tool_choice: 'auto', ...parallel };
    case 'any':
      return { tool_choice: 'required', ...parallel };
    case 'none':
      return { tool_choice: 'none' };
    case 'tool':
      return { tool_choice: { type: 'function', function: { name: choice.name } }, ...parallel };
  }
}
