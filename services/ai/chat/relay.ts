import { ApiError } from '../../../shared/errors.ts';
import type { ActionContext } from '../../../shared/http/action.ts';
import { openSse } from '../../../shared/http/sse.ts';
import { estimateTokens, type Generation } from '../generation.ts';
import { writeWithBackpressure } from './stream-out.ts';
import type { ChatChunk } from './wire.ts';

/** What a relayed stream came to, once its last item arrived. */
export interface RelayedStream {
  /** As the upstream reported it, or estimated from the prompt and the text streamed. */
  usage: { input_tokens: number; output_tokens: number };
  text: string;
  finishReason: string | null;
}

/** What one item of an upstream stream tells of the answer. */
export interface StreamReading {
  /** Output it adds: what the budget's cut-off weighs, and the estimate when no usage is reported. */
  text?: string;
  finishReason?: string;
  /** Usage as reported so far: a later report of a count replaces an earlier one. */
  inputTokens?: number;
  outputTokens?: number;
}

/** How one route writes a relayed stream: its frames, its ending and its error frame. */
export interface SseRelay<Item = ChatChunk> {
  /** The prompt's text, to estimate input tokens when the upstream reports none. */
  promptText: () => string;
  /** The frames one upstream item becomes, written in order at the client's pace. */
  frames: (item: Item) => string[];
  /** After the last item: records the usage and writes the closing frame. */
  finish: (stream: RelayedStream) => void | Promise<void>;
  /** The frame carrying the error when the stream breaks off (`body` is the one envelope). */
  errorFrame: (body: { error: Record<string, unknown> }, error: ApiError) => string;
}

/**
 * Relays upstream chunks to the client as server-sent events and ends the response. A stream that
 * breaks off is recorded as failed (cancelled when the client went away); a client still there gets
 * the error envelope as the last frame.
 */
export function relayChunks(
  ctx: ActionContext,
  generation: Generation,
  chunks: AsyncIterable<ChatChunk>,
  relay: SseRelay,
): Promise<undefined> {
  return relayStream(ctx, generation, chunks, readChatChunk, relay);
}

/** What a chat chunk tells: its text, its finish reason, the usage it reports. */
export function readChatChunk(chunk: ChatChunk): StreamReading {
  let text = '';
  let finishReason: string | undefined;
  for (const choice of chunk.choices) {
    finishReason = choice.finish_reason ?? finishReason;
    text += choice.delta.content ?? '';
  }
  return {
    text,
    ...(finishReason === undefined ? {} : { finishReason }),
    ...(chunk.usage
      ? { inputTokens: chunk.usage.prompt_tokens, outputTokens: chunk.usage.completion_tokens }
      : {}),
  };
}

/** `relayChunks` for a stream of any kind of item, `read` saying what each one tells. */
export async function relayStream<Item>(
  ctx: ActionContext,
  generation: Generation,
  items: AsyncIterable<Item>,
  read: (item: Item) => StreamReading,
  relay: SseRelay<Item>,
): Promise<undefined> {
  openSse(ctx.res);
  let text = '';
  let finishReason: string | null = null;
  let inputTokens: number | undefined;
  let outputTokens: number | undefined;
  const used = () => ({
    input_tokens: inputTokens ?? estimateTokens(relay.promptText()),
    output_tokens: outputTokens ?? estimateTokens(text),
  });
  try {
    for await (const item of items) {
      const reading = read(item);
      inputTokens = reading.inputTokens ?? inputTokens;
      outputTokens = reading.outputTokens ?? outputTokens;
      finishReason = reading.finishReason ?? finishReason;
      const added = reading.text ?? '';
      // An upstream that does not keep to the cap it was sent is cut off before the budget is passed.
      if (!generation.allowsOutput(estimateTokens(text + added))) {
        throw new ApiError(
          'budget_exceeded',
          'the stream was cut off: its budget cannot pay for more output',
        );
      }
      text += added;
      for (const frame of relay.frames(item)) await writeWithBackpressure(ctx.res, frame);
    }
    await relay.finish({ usage: used(), text, finishReason });
  } catch (error) {
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
