import type { ActionContext } from '../../../shared/http/action.ts';
import { writeWithBackpressure } from '../../../shared/http/backpressure.ts';
import type { CatalogEntry } from '../catalog.ts';
import { relayChunks, relayStream } from '../chat/relay.ts';
import type { ChatChunk, ChatCompletion, ChatRequest } from '../chat/wire.ts';
import type { Generation } from '../generation.ts';
import type { CallContext } from '../providers/types.ts';
import { tokensAtLeast } from '../usage/metering.ts';
import { responseOfCompletion } from './from-chat.ts';
import { ChatStreamEvents } from './from-chat-stream.ts';
import { asGatewayResponse, NativeStreamEvents, nativeBody } from './native.ts';
import type { ResponseHeader } from './response-object.ts';
import { chatRequestOf } from './to-chat.ts';
import {
  eventFrame,
  type Item,
  itemsOutputText,
  type ResponseObject,
  type ResponseStreamEvent,
} from './wire.ts';

/** One request to answer, whichever way its model answers it. */
export interface Turn {
  ctx: ActionContext;
  header: ResponseHeader;
  /** The items of the earlier responses, then this request's own. */
  conversation: Item[];
  /** Records the response when it is to be kept; resolves once it is durable. */
  save(response: ResponseObject, native: boolean): Promise<void>;
}

/** The model that answers, the generation it answers under, and how to call it. */
export interface Answerer {
  target: CatalogEntry;
  generation: Generation;
  call: CallContext;
  /** A stream as it may be relayed (once its first event arrived, when a caller waits for that). */
  firstChunk?<T>(stream: AsyncIterable<T>): Promise<AsyncIterable<T>>;
}

/** An upstream's answer once it has begun: what `deliverAnswer` turns into the client's. */
export type OpenedAnswer =
  | { native: true; upstream: ResponseObject }
  | { native: true; body: Record<string, unknown>; events: AsyncIterable<ResponseStreamEvent> }
  | { native: false; completion: ChatCompletion }
  | { native: false; request: ChatRequest; chunks: AsyncIterable<ChatChunk> };

/** Whether the model's provider speaks the Responses API itself. */
export const answersNatively = (target: CatalogEntry) =>
  target.provider.responses !== undefined && target.provider.responsesStream !== undefined;

/**
 * Calls the upstream: its own Responses API when it speaks it, else chat completions with the
 * request translated. Resolves once the answer has begun (a stream: accepted upstream).
 */
export async function openAnswer(turn: Turn, answerer: Answerer): Promise<OpenedAnswer> {
  const { target, generation, call } = answerer;
  const { provider, model } = target;
  const { header, conversation } = turn;
  const streamed = header.request.stream === true;
  const firstChunk = answerer.firstChunk ?? (async <T>(stream: AsyncIterable<T>) => stream);
  if (answersNatively(target)) {
    const body = nativeBody(header, conversation, generation.outputCap);
    if (!streamed) return { native: true, upstream: await provider.responses!(model, body, call) };
    return {
      native: true,
      body,
      events: await firstChunk(await provider.responsesStream!(model, body, call)),
    };
  }
  const request: ChatRequest = {
    ...chatRequestOf(header.request, conversation),
    model: model.upstreamModel,
    ...(generation.outputCap === undefined ? {} : { max_tokens: generation.outputCap }),
  };
  if (!streamed) return { native: false, completion: await provider.chat!(model, request, call) };
  const asked = { ...request, stream: true, stream_options: { include_usage: true } };
  return { native: false, request, chunks: await firstChunk(await provider.chatStream!(model, asked, call)) };
}

/**
 * Answers the client: a response object, or its stream of events. The response is recorded, then
 * the usage, before the answer's end (the JSON body, the stream's last event).
 */
export async function deliverAnswer(turn: Turn, generation: Generation, opened: OpenedAnswer) {
  const { ctx, header } = turn;
  if ('upstream' in opened || 'completion' in opened) {
    const response =
      'upstream' in opened
        ? asGatewayResponse(opened.upstream, header)
        : responseOfCompletion(header, opened.completion);
    await generation.guard(() => turn.save(response, opened.native));
    await generation.completed({
      reported: { inputTokens: response.usage?.input_tokens, outputTokens: response.usage?.output_tokens },
      deliveredOutputTokens: tokensAtLeast(itemsOutputText(response.output)),
    });
    return response;
  }
  if ('events' in opened) {
    const events = new NativeStreamEvents(header);
    return relayStream(ctx, generation, opened.events, (event) => events.read(event), {
      frames: (event) => events.frames(event),
      finish: async ({ metered }) => {
        await turn.save(events.response(), true);
        await generation.completed(metered);
        await writeWithBackpressure(ctx.res, events.end());
      },
      errorFrame: (body) => events.error(body),
    });
  }
  const events = new ChatStreamEvents(header);
  return relayChunks(ctx, generation, opened.chunks, {
    frames: (chunk) => events.chunk(chunk).map(eventFrame),
    finish: async ({ metered, finishReason }) => {
      // The response shows the tokens charged: the upstream's counts, or the gateway's where higher.
      const charged = generation.charged(metered);
      const usage = { input_tokens: charged.inputTokens, output_tokens: charged.outputTokens };
      const { events: closing, response } = events.finish(finishReason, usage);
      for (const event of closing) await writeWithBackpressure(ctx.res, eventFrame(event));
      await turn.save(response, false);
      await generation.completed(metered);
      await writeWithBackpressure(ctx.res, eventFrame(events.end(response)));
    },
    errorFrame: (body) => eventFrame(events.error(body)),
  });
}
