import { readChatChunk } from '../chat/relay.ts';
import type { ChatChunk, ChatCompletion } from '../chat/wire.ts';
import { estimateTokens } from '../generation.ts';
import { parseArguments } from '../providers/anthropic/translate.ts';
import { type MessagesEvent, type MessagesResponse, messageId, type ResponseBlock } from './wire.ts';

/** Usage as a Messages answer states it. */
export interface Tokens {
  input_tokens: number;
  output_tokens: number;
}

/** OpenAI's finish reason as Anthropic's stop reason (the reverse of the provider's `finishReason`). */
export function stopReason(finish: string | null | undefined): string {
  switch (finish) {
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
    case 'function_call':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    default: // stop, and a stream that ended without saying
      return 'end_turn';
  }
}

/** A chat completion as a Messages answer: its text, then its tool calls as `tool_use` blocks. */
export function messageFromChat(completion: ChatCompletion, model: string, usage: Tokens): MessagesResponse {
  const choice = completion.choices[0];
  const text = choice?.message.content ?? '';
  const content: ResponseBlock[] = [
    ...(text ? [{ type: 'text' as const, text }] : []),
    ...(choice?.message.tool_calls ?? []).map((call) => ({
      type: 'tool_use' as const,
      id: call.id,
      name: call.function.name,
      input: parseArguments(call.function.arguments),
    })),
  ];
  return {
    id: messageId(),
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: stopReason(choice?.finish_reason),
    stop_sequence: null,
    usage: { input_tokens: usage.input_tokens, output_tokens: usage.output_tokens },
  };
}

const event = (type: string, data: Record<string, unknown> = {}): MessagesEvent => ({
  event: type,
  data: { type, ...data },
});

/**
 * Chat chunks as Messages stream events, one chunk at a time: `message_start` with the first, a
 * text block opened by the first text, a `tool_use` block per tool call with its arguments as
 * `input_json_delta`s. `end` closes the open block and gives `message_delta` (stop reason and the
 * usage recorded) and `message_stop`, written once the usage is durable.
 */
export function chatToEvents(model: string) {
  const id = messageId();
  let started = false;
  /** The open block: its index in the message, and which tool call it is when it is one. */
  let open: { index: number; tool?: number } | undefined;
  let blocks = 0;

  const start = (): MessagesEvent[] => {
    if (started) return [];
    started = true;
    const message = { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null };
    return [
      event('message_start', {
        message: { ...message, stop_sequence: null, usage: { input_tokens: 0, output_tokens: 0 } },
      }),
    ];
  };
  const close = (): MessagesEvent[] => {
    if (open === undefined) return [];
    const { index } = open;
    open = undefined;
    return [event('content_block_stop', { index })];
  };
  const openBlock = (block: Record<string, unknown>, tool?: number): MessagesEvent[] => {
    const closing = close();
    open = { index: blocks++, ...(tool === undefined ? {} : { tool }) };
    return [...closing, event('content_block_start', { index: open.index, content_block: block })];
  };

  return {
    push(chunk: ChatChunk): MessagesEvent[] {
      const out = start();
      for (const { delta } of chunk.choices) {
        if (delta.content) {
          if (open === undefined || open.tool !== undefined)
            out.push(...openBlock({ type: 'text', text: '' }));
          out.push(
            event('content_block_delta', {
              index: open!.index,
              delta: { type: 'text_delta', text: delta.content },
            }),
          );
        }
        for (const call of delta.tool_calls ?? []) {
          if (open?.tool !== call.index) {
            const block = {
              type: 'tool_use',
              id: call.id ?? `toolu_${id}_${call.index}`,
              name: call.function?.name ?? '',
              input: {},
            };
            out.push(...openBlock(block, call.index));
          }
          const json = call.function?.arguments;
          if (json) {
            out.push(
              event('content_block_delta', {
                index: open!.index,
                delta: { type: 'input_json_delta', partial_json: json },
              }),
            );
          }
        }
      }
      return out;
    },
    end(usage: Tokens, finishReason: string | null): MessagesEvent[] {
      return [
        ...start(),
        ...close(),
        event('message_delta', {
          delta: { stop_reason: stopReason(finishReason), stop_sequence: null },
          usage,
        }),
        event('message_stop'),
      ];
    },
  };
}

/**
 * A chat stream as Messages events, whole: `chatToEvents` over its chunks, and its end with the usage
 * the stream reported, or estimated (four characters a token) from `prompt` and the text streamed.
 */
export async function* eventsFromChat(
  chunks: AsyncIterable<ChatChunk>,
  model: string,
  prompt: string,
): AsyncGenerator<MessagesEvent> {
  const events = chatToEvents(model);
  let text = '';
  let finishReason: string | null = null;
  const reported: Partial<Tokens> = {};
  for await (const chunk of chunks) {
    const reading = readChatChunk(chunk);
    text += reading.text + (reading.otherOutput ?? '');
    finishReason = reading.finishReason ?? finishReason;
    reported.input_tokens = reading.usage?.input_tokens ?? reported.input_tokens;
    reported.output_tokens = reading.usage?.output_tokens ?? reported.output_tokens;
    yield* events.push(chunk);
  }
  const usage = {
    input_tokens: reported.input_tokens ?? estimateTokens(prompt),
    output_tokens: reported.output_tokens ?? estimateTokens(text),
  };
  yield* events.end(usage, finishReason);
}
