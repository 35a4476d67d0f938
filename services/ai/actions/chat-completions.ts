import { defineAction } from '../../../shared/http/action.ts';
import { writeWithBackpressure } from '../../../shared/http/backpressure.ts';
import { sseFrame } from '../../../shared/http/sse.ts';
import { chatCacheRequest } from '../cache/normalize.ts';
import { meteredCompletion } from '../chat/metered.ts';
import { relayChunks } from '../chat/relay.ts';
import { type ChatChunk, type ChatRequest, ChatRequestSchema } from '../chat/wire.ts';
import type { AiDeps } from '../deps.ts';
import { generate } from '../generate.ts';
import { tokensAtMost } from '../generation-ask.ts';
import { inputTokensAtLeast } from '../usage/metering.ts';

/** POST /v1/ai/chat/completions in OpenAI's wire format, streaming included. */
export function chatCompletionsAction(deps: AiDeps) {
  return defineAction({
    service: 'ai',
    action: 'chat/completions',
    method: 'POST',
    summary: 'OpenAI-compatible chat completions',
    produces: ['application/json', 'text/event-stream'],
    // Long conversations travel whole in every request: far more than the default 1 MiB.
    bodyLimitBytes: 32 * 1024 * 1024,
    input: ChatRequestSchema,
    handler: async (input, ctx) => {
      const { studio_id: _studio, ...body } = input;
      const asked = input.max_completion_tokens ?? input.max_tokens ?? undefined;
      const read = [body.messages, body.tools ?? null];
      const ask = {
        // Everything the model reads travels in these fields; their JSON has at least as many bytes.
        inputTokensAtMost: tokensAtMost(JSON.stringify(read)),
        inputTokensAtLeast: inputTokensAtLeast(read),
        ...(asked === undefined ? {} : { maxOutputTokens: asked }),
      };
      const answered = await generate(
        deps,
        ctx,
        { model: input.model, modality: 'chat', ask, cacheable: chatCacheRequest(input.model, body) },
        async ({ target: { provider, model }, generation, cache, call, firstChunk }) => {
          const request: ChatRequest = {
            ...body,
            model: model.upstreamModel,
            ...capOf(body, generation.outputCap),
          };
          if (input.stream !== true) {
            const completion = await cache.completion(() => provider.chat!(model, request, call));
            return { streamed: false, completion } as const;
          }
          // The upstream is always asked for usage: what it reports is what the stream is charged.
          const metered = { ...request, stream_options: { ...request.stream_options, include_usage: true } };
          const chunks = await firstChunk(
            await cache.chunks(() => provider.chatStream!(model, metered, call)),
          );
          return { streamed: true, chunks } as const;
        },
      );
      const { generation, cache, result } = answered;
      const { model } = answered.target;

      if (!result.streamed) {
        const { completion } = result;
        await generation.completed(meteredCompletion(completion));
        await cache.store(generation, completion.choices[0]?.finish_reason ?? null);
        return { ...completion, model: model.id, usage: cache.mark(completion.usage) };
      }

      const usageAsked = input.stream_options?.include_usage === true;
      return relayChunks(ctx, generation, result.chunks, {
        frames: (chunk) => {
          const shown = usageAsked ? chunk : withoutUsage(chunk);
          return shown ? [sseFrame({ data: JSON.stringify({ ...shown, model: model.id }) })] : [];
        },
        finish: async ({ metered, finishReason }) => {
          await generation.completed(metered);
          await cache.store(generation, finishReason);
          await writeWithBackpressure(ctx.res, sseFrame({ data: '[DONE]' }));
        },
        errorFrame: (body) => sseFrame({ data: JSON.stringify(body) }),
      });
    },
  });
}

/** The cap field to send: a lowered cap replaces whichever of the two fields the client used. */
function capOf(body: Omit<ChatRequest, 'model'>, cap: number | undefined): Partial<ChatRequest> {
  if (cap === undefined) return {};
  return body.max_completion_tokens == null ? { max_tokens: cap } : { max_completion_tokens: cap };
}

/** A chunk as a client that did not ask for usage gets it: no usage field, no usage-only chunk. */
function withoutUsage(chunk: ChatChunk): ChatChunk | undefined {
  if (!('usage' in chunk)) return chunk;
  const { usage: _usage, ...rest } = chunk;
  return rest.choices.length === 0 ? undefined : rest;
}
