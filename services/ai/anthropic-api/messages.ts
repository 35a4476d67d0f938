import { ApiError } from '../../../shared/errors.ts';
import type { ActionContext } from '../../../shared/http/action.ts';
import { writeWithBackpressure } from '../../../shared/http/backpressure.ts';
import { messagesCacheRequest } from '../cache/normalize.ts';
import { type ChunkReading, relayStream } from '../chat/relay.ts';
import { textOf } from '../chat/wire.ts';
import type { AiDeps } from '../deps.ts';
import { type Answered, type Attempt, generate } from '../generate.ts';
import { estimateTokens } from '../generation.ts';
import { type GenerationAsk, tokensAtMost } from '../generation-ask.ts';
import { type AnthropicUsage, finishReason, promptTokens } from '../providers/anthropic/translate.ts';
import { inputTokensAtLeast, tokensAtLeast } from '../usage/metering.ts';
import { anthropicErrorBody } from './dialect.ts';
import { eventsFromChat, messageFromChat } from './from-chat.ts';
import { toChat } from './to-chat.ts';
import {
  contentOutputText,
  eventFrame,
  type MessagesCall,
  type MessagesEvent,
  type MessagesRequest,
  type MessagesResponse,
} from './wire.ts';

/**
 * Answers a Messages request as a generation like any chat completion, through `generate`: a
 * model or a route, the response cache, model access, rate limits and the hard budget's
 * reservation first (`max_tokens` is required here, so the budget can only lower it), then the
 * upstream call (`openMessages`), then the answer (`answerMessages`), its usage recorded before its
 * last byte.
 */
export async function anthropicMessages(
  deps: AiDeps,
  input: MessagesRequest,
  native: MessagesCall,
  ctx: ActionContext,
): Promise<unknown> {
  const answered = await generate(
    deps,
    ctx,
    {
      model: input.model,
      modality: 'chat',
      ask: messagesAsk(input),
      cacheable: messagesCacheRequest(input.model, native.body, native),
    },
    (attempt) => openMessages(attempt, input, native),
  );
  return answerMessages(ctx, answered);
}

/** What a Messages request may consume: everything the model reads (their JSON has at least as many bytes), and `max_tokens`. */
export function messagesAsk(input: MessagesRequest): GenerationAsk {
  const read = [input.system ?? null, input.messages, input.tools ?? null];
  return {
    inputTokensAtMost: tokensAtMost(JSON.stringify(read)),
    inputTokensAtLeast: inputTokensAtLeast(read),
    maxOutputTokens: input.max_tokens,
  };
}

/** What a target gave, already in Messages form: a whole message, or a stream's events. */
export type MessagesUpstream =
  | { kind: 'message'; message: MessagesResponse }
  | { kind: 'events'; events: AsyncIterable<MessagesEvent>; prompt: string };

/**
 * One target's try: natively when its provider speaks the Messages API (the client's body with
 * `model` renamed and `max_tokens` lowered to what the budget pays for), else as a chat request
 * whose answer is translated back. The cache keeps and replays the Messages form, whichever target
 * answered.
 */
export async function openMessages(
  { target: { provider, model }, generation, cache, call, firstChunk }: Attempt,
  input: MessagesRequest,
  native: MessagesCall,
): Promise<MessagesUpstream> {
  const maxTokens = Math.min(input.max_tokens, generation.outputCap ?? input.max_tokens);
  if (provider.messages && provider.messagesStream) {
    const sent = { ...native, body: { ...native.body, max_tokens: maxTokens } };
    const prompt = JSON.stringify(input.messages);
    if (input.stream !== true) {
      const message = await cache.completion(() => clientsFault(() => provider.messages!(model, sent, call)));
      return { kind: 'message', message };
    }
    const events = await cache.chunks(() => clientsFault(() => provider.messagesStream!(model, sent, call)));
    return { kind: 'events', events: await firstChunk(events), prompt };
  }
  const request = toChat(input, model.upstreamModel, maxTokens);
  const prompt = request.messages.map((m) => textOf(m.content)).join(' ');
  if (input.stream !== true) {
    const message = await cache.completion(async () => {
      const completion = await provider.chat!(model, request, call);
      return messageFromChat(completion, model.id, {
        input_tokens: completion.usage?.prompt_tokens ?? estimateTokens(prompt),
        output_tokens:
          completion.usage?.completion_tokens ?? estimateTokens(completion.choices[0]?.message.content ?? ''),
      });
    });
    return { kind: 'message', message };
  }
  const events = await cache.chunks(async () =>
    eventsFromChat(await provider.chatStream!(model, request, call), model.id, prompt),
  );
  return { kind: 'events', events: await firstChunk(events), prompt };
}

/** Writes the answer, its usage recorded first: as JSON, or as the stream's events. */
export async function answerMessages(
  ctx: ActionContext,
  { target: { model }, generation, cache, result }: Answered<MessagesUpstream>,
): Promise<unknown> {
  if (result.kind === 'message') {
    const { message } = result;
    await generation.completed({
      reported: { inputTokens: promptTokens(message.usage), outputTokens: message.usage.output_tokens },
      deliveredOutputTokens: tokensAtLeast(contentOutputText(message.content ?? [])),
    });
    await cache.store(generation, finishReason(message.stop_reason));
    return { ...message, model: model.id, usage: cache.mark(message.usage) };
  }
  return relayStream(ctx, generation, result.events, nativeReader(), {
    // The last event leaves once the usage is recorded.
    frames: (e) => (e.event === 'message_stop' ? [] : [eventFrame(named(e, model.id, cache.cached))]),
    finish: async ({ metered, finishReason: stopReason }) => {
      await generation.completed(metered);
      await cache.store(generation, finishReason(stopReason));
      await writeWithBackpressure(
        ctx.res,
        eventFrame({ event: 'message_stop', data: { type: 'message_stop' } }),
      );
    },
    errorFrame: (_body, error) =>
      eventFrame({ event: 'error', data: anthropicErrorBody(error, ctx.requestId) }),
  });
}

/**
 * A native call sends the client's body as it was written, so an upstream 400 or 413 is about that
 * body: the client hears it as its own 400 or 413 (which it will not retry), the upstream's message
 * and status kept. Any other upstream failure (our key refused, upstream busy) stays a 502.
 */
export async function clientsFault<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (!(error instanceof ApiError) || error.code !== 'upstream_error') throw error;
    const status = (error.options.details as { upstream_status?: unknown } | undefined)?.upstream_status;
    const code = status === 400 ? 'validation_failed' : status === 413 ? 'payload_too_large' : undefined;
    throw code ? new ApiError(code, error.message, error.options) : error;
  }
}

/**
 * `message_start` names the model by the gateway's id, as every answer does; a replayed answer's
 * usage (in `message_delta`) says `cached: true`.
 */
function named(e: MessagesEvent, model: string, cached: boolean): MessagesEvent {
  const { message, usage } = e.data as { message?: object; usage?: object };
  if (e.event === 'message_start' && typeof message === 'object' && message !== null)
    return { event: e.event, data: { ...e.data, message: { ...message, model } } };
  if (cached && e.event === 'message_delta' && typeof usage === 'object' && usage !== null)
    return { event: e.event, data: { ...e.data, usage: { ...usage, cached: true } } };
  return e;
}

interface NativeEventData {
  message?: { usage?: AnthropicUsage };
  content_block?: { name?: unknown; input?: unknown };
  delta?: { text?: string; thinking?: string; partial_json?: string; stop_reason?: string | null };
  usage?: AnthropicUsage;
}

/**
 * What Messages events tell: input tokens (cache reads and writes included) from `message_start`,
 * and again from `message_delta` when it repeats them (newer streams, and translated ones); output
 * tokens only from `message_delta`, the final count (`message_start` says 1 before anything is
 * generated); and the output delivered: text, thinking, tool names and input.
 */
function nativeReader() {
  let inputTokens = 0;
  return ({ event, data }: MessagesEvent): ChunkReading => {
    const { message, content_block: block, delta, usage: reported } = data as NativeEventData;
    switch (event) {
      case 'message_start':
        inputTokens = promptTokens(message?.usage);
        return { text: '', usage: { input_tokens: inputTokens } };
      case 'content_block_start':
        return { text: '', otherOutput: typeof block?.name === 'string' ? block.name : '' };
      case 'content_block_delta':
        return {
          text: delta?.text ?? '',
          otherOutput: (delta?.thinking ?? '') + (delta?.partial_json ?? ''),
        };
      case 'message_delta':
        if (reported?.input_tokens != null) inputTokens = Math.max(inputTokens, promptTokens(reported));
        return {
          text: '',
          usage: { input_tokens: inputTokens, output_tokens: reported?.output_tokens ?? undefined },
          ...(delta?.stop_reason ? { finishReason: delta.stop_reason } : {}),
        };
      default:
        return { text: '' };
    }
  };
}
