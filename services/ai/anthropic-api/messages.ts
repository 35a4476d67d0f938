import { ApiError } from '../../../shared/errors.ts';
import type { ActionContext } from '../../../shared/http/action.ts';
import { callContext } from '../call-context.ts';
import { relayChunks, relayStream, type StreamReading } from '../chat/relay.ts';
import { writeWithBackpressure } from '../chat/stream-out.ts';
import { type ChatChunk, type ChatCompletion, textOf } from '../chat/wire.ts';
import type { AiDeps } from '../deps.ts';
import { estimateTokens, Generation } from '../generation.ts';
import { type GenerationAsk, tokensAtMost } from '../generation-ask.ts';
import { type AnthropicUsage, promptTokens } from '../providers/anthropic-translate.ts';
import type { CallContext, ModelDefinition, Provider } from '../providers/types.ts';
import { anthropicErrorBody } from './dialect.ts';
import { chatToEvents, messageFromChat } from './from-chat.ts';
import { toChat } from './to-chat.ts';
import {
  eventFrame,
  type MessagesCall,
  type MessagesEvent,
  type MessagesRequest,
  type MessagesResponse,
} from './wire.ts';

/**
 * Answers a Messages request as a generation like any chat completion: model access, rate limits
 * and the hard budget's reservation first (`max_tokens` is required here, so the budget can only
 * lower it), then the upstream call (`openMessages`), then the answer (`answerMessages`), its usage
 * recorded before its last byte.
 */
export async function anthropicMessages(
  deps: AiDeps,
  input: MessagesRequest,
  native: MessagesCall,
  ctx: ActionContext,
): Promise<unknown> {
  const { provider, model } = deps.catalog.resolve(input.model, 'chat');
  const generation = await Generation.start(deps, ctx, model, 'chat', messagesAsk(input));
  const call = callContext(deps.env, ctx);
  const upstream = await generation.guard(() =>
    openMessages({ provider, model, generation, call }, input, native),
  );
  return answerMessages(ctx, generation, model, upstream);
}

/** What a Messages request may consume: everything the model reads (their JSON has at least as many bytes), and `max_tokens`. */
export const messagesAsk = (input: MessagesRequest): GenerationAsk => ({
  inputTokensAtMost: tokensAtMost(
    JSON.stringify([input.system ?? null, input.messages, input.tools ?? null]),
  ),
  maxOutputTokens: input.max_tokens,
});

/** Who answers, for which generation. */
export interface MessagesTarget {
  provider: Provider;
  model: ModelDefinition;
  generation: Generation;
  call: CallContext;
}

/** What the upstream gave: a message or events as they are, or a chat answer to translate. */
export type MessagesUpstream =
  | { kind: 'message'; message: MessagesResponse }
  | { kind: 'events'; events: AsyncIterable<MessagesEvent>; prompt: string }
  | { kind: 'completion'; completion: ChatCompletion; prompt: string }
  | { kind: 'chunks'; chunks: AsyncIterable<ChatChunk>; prompt: string };

/**
 * Calls the target's upstream: natively when its provider speaks the Messages API (the client's body
 * with `model` renamed and `max_tokens` lowered to what the budget pays for), else as a chat request.
 */
export async function openMessages(
  { provider, model, generation, call }: MessagesTarget,
  input: MessagesRequest,
  native: MessagesCall,
): Promise<MessagesUpstream> {
  const maxTokens = Math.min(input.max_tokens, generation.outputCap ?? input.max_tokens);
  if (provider.messages && provider.messagesStream) {
    const sent = { ...native, body: { ...native.body, max_tokens: maxTokens } };
    if (input.stream !== true)
      return { kind: 'message', message: await clientsFault(() => provider.messages!(model, sent, call)) };
    const events = await clientsFault(() => provider.messagesStream!(model, sent, call));
    return { kind: 'events', events, prompt: JSON.stringify(input.messages) };
  }
  const request = toChat(input, model.upstreamModel, maxTokens);
  const prompt = request.messages.map((m) => textOf(m.content)).join(' ');
  if (input.stream !== true)
    return { kind: 'completion', completion: await provider.chat!(model, request, call), prompt };
  return { kind: 'chunks', chunks: await provider.chatStream!(model, request, call), prompt };
}

/** Writes the answer in Messages form, its usage recorded first: as JSON, or as the stream's events. */
export async function answerMessages(
  ctx: ActionContext,
  generation: Generation,
  model: ModelDefinition,
  upstream: MessagesUpstream,
): Promise<unknown> {
  const errorFrame = (_body: unknown, error: ApiError) =>
    eventFrame({ event: 'error', data: anthropicErrorBody(error, ctx.requestId) });
  switch (upstream.kind) {
    case 'message': {
      const { message } = upstream;
      await generation.completed(promptTokens(message.usage), message.usage.output_tokens ?? 0);
      return { ...message, model: model.id };
    }
    case 'events':
      return relayStream(ctx, generation, upstream.events, nativeReader(), {
        promptText: () => upstream.prompt,
        // The last event leaves once the usage is recorded.
        frames: (e) => (e.event === 'message_stop' ? [] : [eventFrame(withModel(e, model.id))]),
        finish: async ({ usage }) => {
          await generation.completed(usage.input_tokens, usage.output_tokens);
          await writeWithBackpressure(
            ctx.res,
            eventFrame({ event: 'message_stop', data: { type: 'message_stop' } }),
          );
        },
        errorFrame,
      });
    case 'completion': {
      const { completion, prompt } = upstream;
      const usage = {
        input_tokens: completion.usage?.prompt_tokens ?? estimateTokens(prompt),
        output_tokens:
          completion.usage?.completion_tokens ?? estimateTokens(completion.choices[0]?.message.content ?? ''),
      };
      await generation.completed(usage.input_tokens, usage.output_tokens);
      return messageFromChat(completion, model.id, usage);
    }
    case 'chunks': {
      const events = chatToEvents(model.id);
      return relayChunks(ctx, generation, upstream.chunks, {
        promptText: () => upstream.prompt,
        frames: (chunk) => events.push(chunk).map(eventFrame),
        finish: async ({ usage, finishReason }) => {
          await generation.completed(usage.input_tokens, usage.output_tokens);
          for (const e of events.end(usage, finishReason))
            await writeWithBackpressure(ctx.res, eventFrame(e));
        },
        errorFrame,
      });
    }
    default: {
      const unknown: never = upstream;
      throw new Error(`unknown upstream answer ${JSON.stringify(unknown)}`);
    }
  }
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

/** `message_start` names the model by the gateway's id, as every answer does. */
function withModel(e: MessagesEvent, model: string): MessagesEvent {
  if (e.event !== 'message_start' || typeof e.data.message !== 'object' || e.data.message === null) return e;
  return { event: e.event, data: { ...e.data, message: { ...e.data.message, model } } };
}

interface NativeEventData {
  message?: { usage?: AnthropicUsage };
  delta?: { text?: string; thinking?: string; partial_json?: string; stop_reason?: string | null };
  usage?: AnthropicUsage;
}

/**
 * What Anthropic's events tell: input tokens (cache reads and writes included) from `message_start`,
 * and again from `message_delta` when newer streams repeat them there, output tokens from
 * `message_delta`, and the output text, thinking and tool input that the budget's cut-off weighs.
 */
function nativeReader() {
  let inputTokens = 0;
  return ({ event, data }: MessagesEvent): StreamReading => {
    const { message, delta, usage } = data as NativeEventData;
    switch (event) {
      case 'message_start':
        inputTokens = promptTokens(message?.usage);
        return { inputTokens, outputTokens: message?.usage?.output_tokens ?? 0 };
      case 'content_block_delta':
        return { text: delta?.text ?? delta?.thinking ?? delta?.partial_json ?? '' };
      case 'message_delta':
        if (usage?.input_tokens != null) inputTokens = Math.max(inputTokens, promptTokens(usage));
        return {
          inputTokens,
          ...(usage?.output_tokens == null ? {} : { outputTokens: usage.output_tokens }),
          ...(delta?.stop_reason ? { finishReason: delta.stop_reason } : {}),
        };
      default:
        return {};
    }
  };
}
