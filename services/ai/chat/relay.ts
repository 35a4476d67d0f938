import { ApiError } from '../../../shared/errors.ts';
import type { ActionContext } from '../../../shared/http/action.ts';
import { openSse } from '../../../shared/http/sse.ts';
import { estimateTokens, type Generation } from '../generation.ts';
import { FrameWriter } from './stream-out.ts';
import type { ChatChunk } from './wire.ts';

/** What a relayed stream came to, once its last chunk arrived. */
export interface RelayedStream {
  /** As the upstream reported it, or estimated from the prompt and the text streamed. */
  usage: { input_tokens: number; output_tokens: number };
  text: string;
  finishReason: string | null;
}

/** How one route writes a relayed stream: its frames, its ending and its error frame. */
export interface SseRelay<Chunk = ChatChunk> {
  /** The prompt's text, to estimate input tokens when the upstream reports none. */
  promptText: () => string;
  /** The frames one upstream chunk becomes, written in order at the client's pace. */
  frames: (chunk: Chunk) => string[];
  /** After the last chunk: records the usage and writes the closing frame. */
  finish: (stream: RelayedStream) => void | Promise<void>;
  /** The frame carrying the error when the stream breaks off (`body` is the one envelope). */
  errorFrame: (body: { error: Record<string, unknown> }, error: ApiError) => string;
}

/** What one upstream chunk tells the relay: the output text it adds, and usage or finish if it says. */
export interface ChunkReading {
  text: string;
  usage?: { input_tokens: number; output_tokens: number };
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

/** What a chat chunk tells: its text, its finish reason, the usage it reports. */
export function readChatChunk(chunk: ChatChunk): ChunkReading {
  let text = '';
  let finishReason: string | undefined;
  for (const choice of chunk.choices) {
    finishReason = choice.finish_reason ?? finishReason;
    text += choice.delta.content ?? '';
  }
  const usage = chunk.usage
    ? { input_tokens: chunk.usage.prompt_tokens, output_tokens: chunk.usage.completion_tokens }
    : undefined;
  return { text, ...(usage ? { usage } : {}), ...(finishReason ? { finishReason } : {}) };
}

/**
 * Relays upstream chunks of any wire format (`read` says what each one carries) to the client as
 * server-sent events and ends the response. A stream that breaks off is recorded as failed
 * (cancelled when the client went away); a client still there gets the error envelope as the last
 * frame.
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
  let reported: ChunkReading['usage'];
  const used = () => ({
    input_tokens: reported?.input_tokens ?? estimateTokens(relay.promptText()),
    output_tokens: reported?.output_tokens ?? estimateTokens(text),
  });
  let first = true;
  const out = new FrameWriter(ctx.res);
  try {
    for await (const chunk of chunks) {
      const reading = read(chunk);
      if (reading.usage) reported = reading.usage;
      finishReason = reading.finishReason ?? finishReason;
      // An upstream that does not keep to the cap it was sent is cut off before the budget is passed.
      if (!generation.allowsOutput(estimateTokens(text + reading.text))) {
        throw new ApiError(
          'budget_exceeded',
          'the stream was cut off: its budget cannot pay for more output',
        );
      }
      text += reading.text;
      await out.write(relay.frames(chunk));
      if (first) {
        first = false;
        generation.firstByte();
      }
    }
    out.flush();
    await relay.finish({ usage: used(), text, finishReason });
  } catch (error) {
    out.flush();
    // What was streamed before the break was generated upstream: it is charged.
    const { input_tokens, output_tokens } = used();
    await generation.failed(error, input_tokens, output_tokens).catch(() => undefined);
    const api =
      error instanceof ApiError ? error : new ApiError('upstream_error', 'the upstream stream broke off');
    if (!ctx.res.destroyed) ctx.res.write(relay.errorFrame(api.toBody(ctx.requestId), api));
  }
  ctx.res.end();
  return undefined;
}
