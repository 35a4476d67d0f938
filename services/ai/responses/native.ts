import { ApiError } from '../../../shared/errors.ts';
import type { ChunkReading } from '../chat/relay.ts';
import { errorEvent } from './from-chat-stream.ts';
import { withoutGatewayIds } from './items.ts';
import type { ResponseHeader } from './response-object.ts';
import { eventFrame, type Item, type ResponseObject, type ResponseStreamEvent } from './wire.ts';

/**
 * The request a native upstream gets: the client's, with the whole conversation as `input`. The
 * gateway keeps the conversation, so the upstream is never sent a `previous_response_id` (it would
 * name a response the upstream never saw); `max_output_tokens` is the budget's cap when it lowered it.
 */
export function nativeBody(
  header: ResponseHeader,
  conversation: readonly Item[],
  outputCap: number | undefined,
): Record<string, unknown> {
  const { previous_response_id: _previous, stream: _stream, studio_id: _studio, ...rest } = header.request;
  return {
    ...rest,
    input: withoutGatewayIds(conversation),
    ...(outputCap === undefined ? {} : { max_output_tokens: outputCap }),
  };
}

/** An upstream's response under the gateway's id and model id, continuing the gateway's conversation. */
export function asGatewayResponse(upstream: ResponseObject, header: ResponseHeader): ResponseObject {
  return {
    ...upstream,
    id: header.id,
    model: header.model,
    previous_response_id: header.request.previous_response_id ?? null,
    store: header.request.store ?? true,
  };
}

const FINAL_EVENTS: ReadonlySet<string> = new Set(['response.completed', 'response.incomplete']);
/** The events whose `delta` is output other than the answer's text. */
const OTHER_OUTPUT_DELTAS: ReadonlySet<string> = new Set([
  'response.function_call_arguments.delta',
  'response.custom_tool_call_input.delta',
  'response.refusal.delta',
  'response.reasoning_text.delta',
  'response.reasoning_summary_text.delta',
  'response.audio.transcript.delta',
]);

/**
 * A native upstream's stream as the client gets it: every event as it came, the response objects
 * in them under the gateway's id and model. The final event (`response.completed` or
 * `…incomplete`) is held back until the response is recorded.
 */
export class NativeStreamEvents {
  #lastSequence = -1;
  #final: ResponseStreamEvent | undefined;

  constructor(private readonly header: ResponseHeader) {}

  /** What an event tells the relay: output text, other output (tool calls, reasoning, refusals), usage. */
  read(event: ResponseStreamEvent): ChunkReading {
    const delta = typeof event.delta === 'string' ? event.delta : '';
    const item = event.item as Item | undefined;
    const usage = FINAL_EVENTS.has(event.type)
      ? (event.response as Partial<ResponseObject> | undefined)?.usage
      : undefined;
    return {
      text: event.type === 'response.output_text.delta' ? delta : '',
      otherOutput: OTHER_OUTPUT_DELTAS.has(event.type)
        ? delta
        : event.type === 'response.output_item.added' && typeof item?.name === 'string'
          ? item.name
          : '',
      ...(usage ? { usage: { input_tokens: usage.input_tokens, output_tokens: usage.output_tokens } } : {}),
    };
  }

  frames(event: ResponseStreamEvent): string[] {
    this.#lastSequence = Math.max(this.#lastSequence, event.sequence_number);
    const answered = this.#rewrite(event);
    if (FINAL_EVENTS.has(event.type)) {
      this.#final = answered;
      return [];
    }
    return [eventFrame(answered)];
  }

  /** The response the stream came to; a stream that ended without one broke off. */
  response(): ResponseObject {
    const response = this.#final?.response as ResponseObject | undefined;
    if (!response)
      throw new ApiError('upstream_error', 'the upstream stream ended before its response was complete');
    return response;
  }

  /** The final event, written once the response is recorded. */
  end(): string {
    return eventFrame(this.#final!);
  }

  error(body: { error: Record<string, unknown> }): string {
    return eventFrame(errorEvent(this.#lastSequence + 1, body));
  }

  #rewrite(event: ResponseStreamEvent): ResponseStreamEvent {
    const response = event.response;
    if (typeof response !== 'object' || response === null) return event;
    return { ...event, response: asGatewayResponse(response as ResponseObject, this.header) };
  }
}
