import { ApiError } from '../../../shared/errors.ts';
import type { ActionContext } from '../../../shared/http/action.ts';
import { rightsLost } from '../../../shared/http/rights.ts';
import { openSse } from '../../../shared/http/sse.ts';
import type { Generation, Metered } from '../generation.ts';
import { nonBlankLength, tokensOfCharacters } from '../usage/metering.ts';
import { FrameWriter } from './stream-out.ts';
import { type ChatChunk, outputTextOf } from './wire.ts';

/** What a relayed stream came to, once its last chunk arrived. */
export interface RelayedStream {
  /** What the upstream reported and the gateway counted: what the generation is charged for. */
  metered: Metered;
  /** The answer's text (its content, without tool calls or reasoning). */
  text: string;
  finishReason: string | null;
}

/** How one route writes a relayed stream: its frames, its ending and its error frame. */
export interface SseRelay<Chunk = ChatChunk> {
  /** The frames one upstream chunk becomes, written in order at the client's pace. */
  frames: (chunk: Chunk) => string[];
  /** After the last chunk: records the usage and writes the closing frame. */
  finish: (stream: RelayedStream) => void | Promise<void>;
  /** The frame carrying the error when the stream breaks off (`body` is the one envelope). */
  errorFrame: (body: { error: Record<string, unknown> }, error: ApiError) => string;
}

/** What one upstream chunk tells the relay. */
export interface ChunkReading {
  /** The answer's text it adds. */
  text: string;
  /** The other output it adds: tool-call names and arguments, reasoning, refusals, transcripts. */
  otherOutput?: string;
  /** Usage, where the chunk reports it: a count left out stays as an earlier chunk said. */
  usage?: { input_tokens?: number | undefined; output_tokens?: number | undefined };
  finishReason?: string;
}

/** Relays chat-completion chunks (see `relayStream`). */
export function relayChunks(
  ctx: ActionContext,
  generation: Generation,
  chunks: AsyncIterable<ChatChunk>,
  relay: SseRelay,
): Promise<undefined> {
  return relayStream(ctx, generation, chunks, readChatChunk, relay);
}

/** What a chat chunk tells: its text and other output, its finish reason, the usage it reports. */
export function readChatChunk(chunk: ChatChunk): ChunkReading {
  let text = '';
  let otherOutput = '';
  let finishReason: string | undefined;
  for (const choice of chunk.choices) {
    finishReason = choice.finish_reason ?? finishReason;
    const { content, ...rest } = choice.delta;
    text += typeof content === 'string' ? content : '';
    otherOutput += outputTextOf(rest);
  }
  const usage = chunk.usage
    ? { input_tokens: chunk.usage.prompt_tokens, output_tokens: chunk.usage.completion_tokens }
    : undefined;
  return {
    text,
    ...(otherOutput ? { otherOutput } : {}),
    ...(usage ? { usage } : {}),
    ...(finishReason ? { finishReason } : {}),
  };
}

/**
 * Relays upstream chunks of any wire format (`read` says what each one carries) to the client as
 * server-sent events and ends the response. Every output field streamed is counted, so whatever
 * the upstream reports, the generation is charged at least for what was delivered; a stream that
 * would deliver more than the budget reserved is cut off before it does. A stream that breaks off
 * is recorded as failed (cancelled when the client went away), charged for what it delivered; a
 * client still there gets the error envelope as the last frame.
 */
export async function relayStream<Chunk>(
  ctx: ActionContext,
  generation: Generation,
  chunks: AsyncIterable<Chunk>,
  read: (chunk: Chunk) => ChunkReading,
  relay: SseRelay<Chunk>,
): Promise<undefined> {
  openSse(ctx.res);
  let text = '';
  let finishReason: string | null = null;
  let deliveredCharacters = 0;
  const reported: { inputTokens?: number; outputTokens?: number } = {};
  const metered = (): Metered => ({
    reported: { ...reported },
    deliveredOutputTokens: tokensOfCharacters(deliveredCharacters),
  });
  let first = true;
  const out = new FrameWriter(ctx.res);
  try {
    for await (const chunk of chunks) {
      const reading = read(chunk);
      if (reading.usage?.input_tokens != null) reported.inputTokens = reading.usage.input_tokens;
      if (reading.usage?.output_tokens != null) reported.outputTokens = reading.usage.output_tokens;
      finishReason = reading.finishReason ?? finishReason;
      const adds = nonBlankLength(reading.text) + nonBlankLength(reading.otherOutput ?? '');
      // An upstream that does not keep to the cap it was sent is cut off before the budget is passed.
      if (!generation.allowsOutput(tokensOfCharacters(deliveredCharacters + adds))) {
        throw new ApiError(
          'budget_exceeded',
          'the stream was cut off: its budget cannot pay for more output',
        );
      }
      deliveredCharacters += adds;
      text += reading.text;
      await out.write(relay.frames(chunk));
      if (first) {
        first = false;
        generation.firstByte();
      }
    }
    out.flush();
    await relay.finish({ metered: metered(), text, finishReason });
  } catch (thrown) {
    out.flush();
    // A caller whose rights were taken mid-stream hears why; what was streamed before is charged.
    const error = rightsLost(ctx.signal) ?? thrown;
    await generation.failed(error, metered()).catch(() => undefined);
    const api =
      error instanceof ApiError ? error : new ApiError('upstream_error', 'the upstream stream broke off');
    if (!ctx.res.destroyed) ctx.res.write(relay.errorFrame(api.toBody(ctx.requestId), api));
  }
  ctx.res.end();
  return undefined;
}
