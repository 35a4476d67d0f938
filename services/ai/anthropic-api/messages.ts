import { ApiError } from '../../../shared/errors.ts';
import type { ActionContext } from '../../../shared/http/action.ts';
import { callContext } from '../call-context.ts';
import { relayChunks, relayStream, type StreamReading } from '../chat/relay.ts';
import { writeWithBackpressure } from '../chat/stream-out.ts';
import { textOf } from '../chat/wire.ts';
import type { AiDeps } from '../deps.ts';
import { estimateTokens, Generation } from '../generation.ts';
import { tokensAtMost } from '../generation-ask.ts';
import { type AnthropicUsage, promptTokens } from '../providers/anthropic-translate.ts';
import type { CallContext, ModelDefinition, Provider } from '../providers/types.ts';
import { anthropicErrorBody } from './dialect.ts';
import { chatToEvents, messageFromChat } from './from-chat.ts';
import { toChat } from './to-chat.ts';
import { eventFrame, type MessagesCall, type MessagesEvent, type MessagesRequest } from './wire.ts';

/** One model's part in answering a Messages request: who answers, for which generation. */
interface Answering {
  provider: Provider;
  model: ModelDefinition;
  generation: Generation;
  call: CallContext;
  /** Anthropic's `max_tokens`, lowered to the cap the budget can pay for. */
  maxTokens: number;
}

/**
 * Answers a Messages request as a generation like any chat completion: model access, rate limits
 * and the hard budget's reservation first (`max_tokens` is required here, so the budget can only
 * lower it), usage recorded before the answer's last byte.
 */
export async function anthropicMessages(
  deps: AiDeps,
  input: MessagesRequest,
  native: MessagesCall,
  ctx: ActionContext,
): Promise<unknown> {
  const { provider, model } = deps.catalog.resolve(input.model, 'chat');
  const generation = await Generation.start(deps, ctx, model, 'chat', {
    // Everything the model reads travels in these fields; their JSON has at least as many bytes.
    inputTokensAtMost: tokensAtMost(
      JSON.stringify([input.system ?? null, input.messages, input.tools ?? null]),
    ),
    maxOutputTokens: input.max_tokens,
  });
  const answering: Answering = {
    provider,
    model,
    generation,
    call: callContext(deps.env, ctx),
    maxTokens: Math.min(input.max_tokens, generation.outputCap ?? input.max_tokens),
  };
  const call = { ...native, body: { ...native.body, max_tokens: answering.maxTokens } };
  if (provider.messages && provider.messagesStream) return answerNatively(answering, call, ctx);
  return answerThroughChat(answering, input, ctx);
}

/** The anthropic provider: the body goes upstream as sent, its answer or events come back as they are. */
async function answerNatively(
  { provider, model, generation, call }: Answering,
  native: MessagesCall,
  ctx: ActionContext,
): Promise<unknown> {
  if (native.body.stream !== true) {
    const message = await generation.guard(() => clientsFault(() => provider.messages!(model, native, call)));
    await generation.completed(promptTokens(message.usage), message.usage.output_tokens ?? 0);
    return { ...message, model: model.id };
  }
  const events = await generation.guard(() =>
    clientsFault(() => provider.messagesStream!(model, native, call)),
  );
  const read = nativeReader();
  return relayStream(ctx, generation, events, read, {
    promptText: () => JSON.stringify(native.body.messages),
    // The last event leaves once the usage is recorded.
    frames: (e) => (e.event === 'message_stop' ? [] : [eventFrame(withModel(e, model.id))]),
    finish: async ({ usage }) => {
      await generation.completed(usage.input_tokens, usage.output_tokens);
      await writeWithBackpressure(
        ctx.res,
        eventFrame({ event: 'message_stop', data: { type: 'message_stop' } }),
      );
    },
    errorFrame: (_body, error) => errorFrame(error, ctx.requestId),
  });
}

/** Any other provider: the request as a chat request, its answer or chunks back as Messages ones. */
async function answerThroughChat(
  { provider, model, generation, call, maxTokens }: Answering,
  input: MessagesRequest,
  ctx: ActionContext,
): Promise<unknown> {
  const request = toChat(input, model.upstreamModel, maxTokens);
  const promptText = () => request.messages.map((m) => textOf(m.content)).join(' ');
  if (input.stream !== true) {
    const completion = await generation.guard(() => provider.chat!(model, request, call));
    const usage = {
      input_tokens: completion.usage?.prompt_tokens ?? estimateTokens(promptText()),
      output_tokens:
        completion.usage?.completion_tokens ?? estimateTokens(completion.choices[0]?.message.content ?? ''),
    };
    await generation.completed(usage.input_tokens, usage.output_tokens);
    return messageFromChat(completion, model.id, usage);
  }
  const chunks = await generation.guard(() => provider.chatStream!(model, request, call));
  const events = chatToEvents(model.id);
  return relayChunks(ctx, generation, chunks, {
    promptText,
    frames: (chunk) => events.push(chunk).map(eventFrame),
    finish: async ({ usage, finishReason }) => {
      await generation.completed(usage.input_tokens, usage.output_tokens);
      for (const e of events.end(usage, finishReason)) await writeWithBackpressure(ctx.res, eventFrame(e));
    },
    errorFrame: (_body, error) => errorFrame(error, ctx.requestId),
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

/** A stream that breaks off ends with Anthropic's `error` event. */
const errorFrame = (error: ApiError, requestId: string) =>
  eventFrame({ event: 'error', data: anthropicErrorBody(error, requestId) });

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
