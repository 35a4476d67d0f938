import type { ChatChunk } from '../chat/wire.ts';
import { functionCall, outputMessage, outputText } from './from-chat.ts';
import { itemIdOf } from './ids.ts';
import { outcomeOf, type ResponseHeader, responseObject, responseUsage } from './response-object.ts';
import type { FunctionCallOutput, Item, ResponseObject, ResponseStreamEvent } from './wire.ts';

type ToolCallDelta = NonNullable<ChatChunk['choices'][number]['delta']['tool_calls']>[number];

interface OpenMessage {
  kind: 'message';
  outputIndex: number;
  id: string;
  text: string;
}
interface OpenCall {
  kind: 'call';
  outputIndex: number;
  id: string;
  call: Pick<FunctionCallOutput, 'call_id' | 'name' | 'arguments'>;
}

/**
 * A chat-completion stream as the Responses API's typed events, numbered in order: `created` and
 * `in_progress` first; the text opens a `message` item (`output_item.added`, `content_part.added`)
 * and streams as `output_text.delta`; each tool call opens a `function_call` item whose arguments
 * stream as `function_call_arguments.delta`; at the end every item is closed (`….done`) in order.
 * `response.completed` (or `response.incomplete`) is the caller's, once the response is recorded.
 */
export class ChatStreamEvents {
  #sequence = 0;
  readonly #items: (OpenMessage | OpenCall)[] = [];
  #message: OpenMessage | undefined;
  readonly #calls = new Map<number, OpenCall>();
  #opened = false;

  constructor(private readonly header: ResponseHeader) {}

  chunk(chunk: ChatChunk): ResponseStreamEvent[] {
    const events = this.#opening();
    for (const choice of chunk.choices) {
      if (choice.index !== 0) continue;
      if (choice.delta.content) events.push(...this.#text(choice.delta.content));
      for (const delta of choice.delta.tool_calls ?? []) events.push(...this.#toolCall(delta));
    }
    return events;
  }

  /** Closes every item; gives their events and the response they make. */
  finish(
    finishReason: string | null,
    usage: { input_tokens: number; output_tokens: number },
  ): { events: ResponseStreamEvent[]; response: ResponseObject } {
    const events = this.#opening();
    // An answer with nothing in it still says so with an (empty) message.
    if (this.#items.length === 0) events.push(...this.#openMessage());
    const outcome = outcomeOf(finishReason);
    const status = outcome.status === 'completed' ? 'completed' : 'incomplete';
    const output: Item[] = [];
    for (const item of this.#items) {
      const { outputIndex: output_index, id: item_id } = item;
      if (item.kind === 'message') {
        const part = outputText(item.text);
        const done = outputMessage(item_id, status, [part]);
        events.push(
          this.#event('response.output_text.done', {
            item_id,
            output_index,
            content_index: 0,
            text: item.text,
            logprobs: [],
          }),
          this.#event('response.content_part.done', { item_id, output_index, content_index: 0, part }),
          this.#event('response.output_item.done', { output_index, item: done }),
        );
        output.push(done);
      } else {
        const done = functionCall(item_id, status, item.call);
        events.push(
          this.#event('response.function_call_arguments.done', {
            item_id,
            output_index,
            name: item.call.name,
            arguments: item.call.arguments,
          }),
          this.#event('response.output_item.done', { output_index, item: done }),
        );
        output.push(done);
      }
    }
    return {
      events,
      response: responseObject(this.header, {
        ...outcome,
        output,
        usage: responseUsage(usage.input_tokens, usage.output_tokens),
      }),
    };
  }

  /** The last event: the whole response, once it is recorded. */
  end(response: ResponseObject): ResponseStreamEvent {
    const type = response.status === 'incomplete' ? 'response.incomplete' : 'response.completed';
    return this.#event(type, { response });
  }

  /** The event of a stream that broke off: OpenAI's `error` event, carrying the gateway's envelope. */
  error(body: { error: Record<string, unknown> }): ResponseStreamEvent {
    return errorEvent(this.#sequence++, body);
  }

  /** `response.created` and `response.in_progress`, before the first event of the answer. */
  #opening(): ResponseStreamEvent[] {
    if (this.#opened) return [];
    this.#opened = true;
    const response = responseObject(this.header, { status: 'in_progress', output: [], usage: null });
    return [this.#event('response.created', { response }), this.#event('response.in_progress', { response })];
  }

  #text(delta: string): ResponseStreamEvent[] {
    const events = this.#message ? [] : this.#openMessage();
    const message = this.#message!;
    message.text += delta;
    events.push(
      this.#event('response.output_text.delta', {
        item_id: message.id,
        output_index: message.outputIndex,
        content_index: 0,
        delta,
        logprobs: [],
      }),
    );
    return events;
  }

  #openMessage(): ResponseStreamEvent[] {
    const outputIndex = this.#items.length;
    const id = itemIdOf(this.header.id, 'msg', outputIndex);
    this.#message = { kind: 'message', outputIndex, id, text: '' };
    this.#items.push(this.#message);
    return [
      this.#event('response.output_item.added', {
        output_index: outputIndex,
        item: outputMessage(id, 'in_progress', []),
      }),
      this.#event('response.content_part.added', {
        item_id: id,
        output_index: outputIndex,
        content_index: 0,
        part: outputText(''),
      }),
    ];
  }

  #toolCall(delta: ToolCallDelta): ResponseStreamEvent[] {
    const events: ResponseStreamEvent[] = [];
    let open = this.#calls.get(delta.index);
    if (!open) {
      const outputIndex = this.#items.length;
      const id = itemIdOf(this.header.id, 'fc', outputIndex);
      open = {
        kind: 'call',
        outputIndex,
        id,
        call: { call_id: delta.id ?? `call_${id}`, name: delta.function?.name ?? '', arguments: '' },
      };
      this.#calls.set(delta.index, open);
      this.#items.push(open);
      events.push(
        this.#event('response.output_item.added', {
          output_index: outputIndex,
          item: functionCall(id, 'in_progress', { ...open.call }),
        }),
      );
    }
    const args = delta.function?.arguments;
    if (args) {
      open.call.arguments += args;
      events.push(
        this.#event('response.function_call_arguments.delta', {
          item_id: open.id,
          output_index: open.outputIndex,
          delta: args,
        }),
      );
    }
    return events;
  }

  #event(type: string, fields: Record<string, unknown>): ResponseStreamEvent {
    return { type, sequence_number: this.#sequence++, ...fields };
  }
}

/** OpenAI's `error` stream event, with the gateway's error envelope beside its own fields. */
export function errorEvent(sequence: number, body: { error: Record<string, unknown> }): ResponseStreamEvent {
  const { code, message, param } = body.error;
  return {
    type: 'error',
    sequence_number: sequence,
    code: code ?? null,
    message: message ?? null,
    param: param ?? null,
    ...body,
  };
}
