import { ApiError } from '../../../shared/errors.ts';
import type { ChatMessage, ChatRequest } from '../chat/wire.ts';
import type { Item, ResponsesRequest } from './wire.ts';

/** A chat-completions request but for `model` and `stream`, which the caller sets. */
export type ChatBody = { messages: ChatMessage[] } & Omit<ChatRequest, 'model' | 'messages'>;

const refuse = (message: string, param = 'input') =>
  new ApiError('validation_failed', `${message}: this model answers through chat completions`, { param });

/**
 * A Responses request for a model without OpenAI's Responses API, as chat completions: the
 * instructions become the first system message, the conversation's items become messages (function
 * calls an assistant's `tool_calls`, their outputs `tool` messages), function tools chat tools.
 * What chat cannot carry (hosted tools, items of other kinds, file ids) is a 400 before anything
 * goes upstream; reasoning items are dropped (they are the upstream's own).
 */
export function chatRequestOf(request: ResponsesRequest, items: readonly Item[]): ChatBody {
  if (request.prompt != null) throw refuse('prompt templates are not supported', 'prompt');
  const messages: ChatMessage[] = [];
  if (request.instructions) messages.push({ role: 'system', content: request.instructions });
  for (const item of items) addItem(messages, item);
  if (messages.length === 0)
    throw new ApiError('validation_failed', 'input must not be empty', { param: 'input' });
  const tools = (request.tools ?? []).map(chatTool);
  const choice = toolChoiceOf(request.tool_choice);
  const format = responseFormatOf(request.text?.format);
  return {
    messages,
    ...(tools.length > 0 ? { tools } : {}),
    ...(choice === undefined ? {} : { tool_choice: choice }),
    ...(tools.length > 0 && request.parallel_tool_calls != null
      ? { parallel_tool_calls: request.parallel_tool_calls }
      : {}),
    ...(request.max_output_tokens == null ? {} : { max_tokens: request.max_output_tokens }),
    ...(request.temperature == null ? {} : { temperature: request.temperature }),
    ...(request.top_p == null ? {} : { top_p: request.top_p }),
    ...(request.user == null ? {} : { user: request.user }),
    ...(request.reasoning?.effort == null ? {} : { reasoning_effort: request.reasoning.effort }),
    ...(format === undefined ? {} : { response_format: format }),
  };
}

function addItem(messages: ChatMessage[], item: Item): void {
  switch (item.type) {
    case 'message': {
      const role = String(item.role);
      if (role === 'assistant') messages.push({ role: 'assistant', content: textOfParts(item.content) });
      else
        messages.push({
          role: role === 'user' ? 'user' : 'system',
          content: userContent(item.content),
        });
      return;
    }
    case 'function_call': {
      const call = {
        id: String(item.call_id),
        type: 'function' as const,
        function: { name: String(item.name), arguments: String(item.arguments ?? '') },
      };
      // The calls of one turn (and the text before them) are one assistant message in chat.
      const last = messages.at(-1);
      if (last?.role === 'assistant') last.tool_calls = [...(last.tool_calls ?? []), call];
      else messages.push({ role: 'assistant', content: null, tool_calls: [call] });
      return;
    }
    case 'function_call_output':
      messages.push({ role: 'tool', tool_call_id: String(item.call_id), content: textOfParts(item.output) });
      return;
    case 'reasoning':
      return;
    case 'item_reference':
      throw new ApiError('not_found', `item ${String(item.id)} does not exist`, { param: 'input' });
    default:
      throw refuse(`input items of type "${item.type}" are not supported`);
  }
}

type Part = { type?: unknown; [key: string]: unknown };
const partsOf = (content: unknown): Part[] =>
  Array.isArray(content) ? content.filter((p): p is Part => typeof p === 'object' && p !== null) : [];

/** The text of a content string or of its text parts (input, output, refusal). */
function textOfParts(content: unknown): string {
  if (typeof content === 'string') return content;
  return partsOf(content)
    .map((part) => {
      if (typeof part.text === 'string') return part.text;
      return typeof part.refusal === 'string' ? part.refusal : '';
    })
    .join('');
}

/** A user or system message's content: a string when it is all text, else chat's parts. */
function userContent(content: unknown): ChatMessage['content'] {
  if (typeof content === 'string') return content;
  const parts = partsOf(content).map(chatPart);
  if (parts.every((part) => part.type === 'text')) return parts.map((part) => part.text).join('');
  return parts;
}

function chatPart(part: Part): { type: string; [key: string]: unknown } {
  switch (part.type) {
    case 'input_text':
    case 'output_text':
      return { type: 'text', text: String(part.text ?? '') };
    case 'input_image':
      if (typeof part.image_url !== 'string')
        throw refuse('an input_image needs an image_url (file ids are not supported)');
      return {
        type: 'image_url',
        image_url: {
          url: part.image_url,
          ...(typeof part.detail === 'string' ? { detail: part.detail } : {}),
        },
      };
    case 'input_file':
      if (typeof part.file_data !== 'string')
        throw refuse('an input_file needs file_data (file ids and URLs are not supported)');
      return {
        type: 'file',
        file: {
          file_data: part.file_data,
          ...(typeof part.filename === 'string' ? { filename: part.filename } : {}),
        },
      };
    default:
      throw refuse(`content parts of type "${String(part.type)}" are not supported`);
  }
}

function chatTool(tool: NonNullable<ResponsesRequest['tools']>[number]) {
  if (tool.type !== 'function') throw refuse(`tools of type "${tool.type}" are not supported`, 'tools');
  const { name, description, parameters, strict } = tool as Record<string, unknown>;
  return {
    type: 'function' as const,
    function: {
      name: String(name),
      ...(typeof description === 'string' ? { description } : {}),
      ...(parameters == null ? {} : { parameters }),
      ...(typeof strict === 'boolean' ? { strict } : {}),
    },
  };
}

function toolChoiceOf(choice: ResponsesRequest['tool_choice']): unknown {
  if (choice == null || typeof choice === 'string') return choice ?? undefined;
  if (choice.type === 'function' && typeof choice.name === 'string')
    return { type: 'function', function: { name: choice.name } };
  throw refuse(`tool_choice of type "${choice.type}" is not supported`, 'tool_choice');
}

function responseFormatOf(format: { type: string; [key: string]: unknown } | null | undefined): unknown {
  if (format == null || format.type === 'text') return undefined;
  if (format.type === 'json_object') return { type: 'json_object' };
  if (format.type === 'json_schema') {
    const { type: _type, ...schema } = format;
    return { type: 'json_schema', json_schema: schema };
  }
  throw refuse(`text.format of type "${format.type}" is not supported`, 'text.format');
}
