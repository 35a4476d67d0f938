import type { ActionContext } from '../../../shared/http/action.ts';
import type { CatalogEntry } from '../catalog.ts';
import { relayChunks, relayStream } from '../chat/relay.ts';
import { writeWithBackpressure } from '../chat/stream-out.ts';
import { type ChatRequest, textOf } from '../chat/wire.ts';
import type { Generation } from '../generation.ts';
import type { CallContext } from '../providers/types.ts';
import { responseOfCompletion } from './from-chat.ts';
import { ChatStreamEvents } from './from-chat-stream.ts';
import { asGatewayResponse, NativeStreamEvents, nativeBody } from './native.ts';
import type { ResponseHeader } from './response-object.ts';
import type { ChatBody } from './to-chat.ts';
import { eventFrame, type Item, type ResponseObject } from './wire.ts';

/** One request to answer, whichever way its model answers it. */
export interface Turn {
  ctx: ActionContext;
  header: ResponseHeader;
  /** The items of the earlier responses, then this request's own. */
  conversation: Item[];
  /** Records the response when it is to be kept; resolves once it is durable. */
  save(response: ResponseObject, native: boolean): Promise<void>;
}

/** What the answering model is, and the generation it answers under. */
export interface Answerer {
  target: CatalogEntry;
  generation: Generation;
  call: CallContext;
}

/** Whether the model's provider speaks the Responses API itself. */
export const answersNatively = (target: CatalogEntry) =>
  target.provider.responses !== undefined && target.provider.responsesStream !== undefined;

/**
 * Answers through the upstream's own Responses API: the response as it gave it (under the gateway's
 * id), its stream event by event. The response is recorded, then the usage, before its last event.
 */
export async function answerNatively(turn: Turn, { target, generation, call }: Answerer) {
  const { ctx, header } = turn;
  const { provider, model } = target;
  const body = nativeBody(header, turn.conversation, generation.outputCap);
  if (header.request.stream !== true) {
    const upstream = await generation.guard(() => provider.responses!(model, body, call));
    const response = asGatewayResponse(upstream, header);
    await generation.guard(() => turn.save(response, true));
    await generation.completed(response.usage?.input_tokens ?? 0, response.usage?.output_tokens ?? 0);
    return response;
  }
  const upstream = await generation.guard(() => provider.responsesStream!(model, body, call));
  const events = new NativeStreamEvents(header);
  return relayStream(ctx, generation, upstream, (event) => events.read(event), {
    promptText: () => JSON.stringify(body.input),
    frames: (event) => events.frames(event),
    finish: async ({ usage }) => {
      await turn.save(events.response(), true);
      await generation.completed(usage.input_tokens, usage.output_tokens);
      await writeWithBackpressure(ctx.res, events.end());
    },
    errorFrame: (body) => events.error(body),
  });
}

/** Answers through chat completions, translating the request there and the answer back. */
export async function answerThroughChat(turn: Turn, { target, generation, call }: Answerer, chat: ChatBody) {
  const { ctx, header } = turn;
  const { provider, model } = target;
  const request: ChatRequest = {
    ...chat,
    model: model.upstreamModel,
    ...(generation.outputCap === undefined ? {} : { max_tokens: generation.outputCap }),
  };
  if (header.request.stream !== true) {
    const completion = await generation.guard(() => provider.chat!(model, request, call));
    const response = responseOfCompletion(header, completion);
    await generation.guard(() => turn.save(response, false));
    await generation.completed(response.usage?.input_tokens ?? 0, response.usage?.output_tokens ?? 0);
    return response;
  }
  const streamed = { ...request, stream: true, stream_options: { include_usage: true } };
  const chunks = await generation.guard(() => provider.chatStream!(model, streamed, call));
  const events = new ChatStreamEvents(header);
  return relayChunks(ctx, generation, chunks, {
    promptText: () => request.messages.map((m) => textOf(m.content)).join(' '),
    frames: (chunk) => events.chunk(chunk).map(eventFrame),
    finish: async (stream) => {
      const { events: closing, response } = events.finish(stream);
      for (const event of closing) await writeWithBackpressure(ctx.res, eventFrame(event));
      await turn.save(response, false);
      await generation.completed(stream.usage.input_tokens, stream.usage.output_tokens);
      await writeWithBackpressure(ctx.res, eventFrame(events.end(response)));
    },
    errorFrame: (body) => eventFrame(events.error(body)),
  });
}
