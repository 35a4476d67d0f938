import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { defineAction } from '../../../shared/http/action.ts';
import { sseFrame, writeSse } from '../../../shared/http/sse.ts';
import { textCacheRequest } from '../cache/normalize.ts';
import { meteredCompletion } from '../chat/metered.ts';
import { relayChunks } from '../chat/relay.ts';
import type { ChatRequest } from '../chat/wire.ts';
import type { AiDeps } from '../deps.ts';
import { generate } from '../generate.ts';
import { type GenerationAsk, tokensAtMost } from '../generation-ask.ts';
import { inputTokensAtLeast } from '../usage/metering.ts';

const TextInput = z.strictObject({
  model: z.string().min(1),
  prompt: z.string().min(1, 'prompt must not be empty'),
  studio_id: z.string().optional(),
  system: z.string().optional(),
  max_tokens: z.number().int().positive().optional(),
  temperature: z.number().min(0).max(2).optional(),
});
type TextInput = z.infer<typeof TextInput>;

const askOf = (input: TextInput): GenerationAsk => ({
  inputTokensAtMost: tokensAtMost(input.system ?? '', input.prompt),
  inputTokensAtLeast: inputTokensAtLeast([input.system ?? '', input.prompt]),
  ...(input.max_tokens === undefined ? {} : { maxOutputTokens: input.max_tokens }),
});

/** The chat request `input` becomes; `maxTokens` is the output cap after the budget had its say. */
function toChat(input: TextInput, upstreamModel: string, maxTokens: number | undefined): ChatRequest {
  return {
    model: upstreamModel,
    messages: [
      ...(input.system ? [{ role: 'system' as const, content: input.system }] : []),
      { role: 'user' as const, content: input.prompt },
    ],
    ...(maxTokens === undefined ? {} : { max_tokens: maxTokens }),
    ...(input.temperature === undefined ? {} : { temperature: input.temperature }),
  };
}

/** What a text request asks of `generate`: its model (or route), budgets' weights, its cache key. */
const askedOf = (input: TextInput, modality: 'text' | 'stream') => ({
  model: input.model,
  modality,
  ask: askOf(input),
  cacheable: textCacheRequest(modality, input.model, input),
});

/** The message `text` answers with, in the parts of a session message: `{id, role: 'assistant', parts: [{type: 'text', text}]}`. */
const message = (text: string) => ({
  id: `msg_${randomUUID()}`,
  role: 'assistant' as const,
  parts: [{ type: 'text' as const, text }],
});

export function textAction(deps: AiDeps) {
  return defineAction({
    service: 'ai',
    action: 'text',
    method: 'POST',
    summary: 'Generate text',
    input: TextInput,
    handler: async (input, ctx) => {
      const answered = await generate(
        deps,
        ctx,
        askedOf(input, 'text'),
        ({ target, generation, cache, call }) => {
          const { provider, model } = target;
          const request = toChat(input, model.upstreamModel, generation.outputCap ?? input.max_tokens);
          return cache.completion(() => provider.chat!(model, request, call));
        },
      );
      const { generation, cache, result: completion } = answered;
      const { model } = answered.target;
      const choice = completion.choices[0];
      const charged = await generation.completed(meteredCompletion(completion));
      const usageOut = { input_tokens: charged.inputTokens, output_tokens: charged.outputTokens };
      await cache.store(generation, choice?.finish_reason ?? null);
      return {
        ...message(choice?.message.content ?? ''),
        model: model.id,
        usage: cache.mark(usageOut),
        finish_reason: choice?.finish_reason ?? null,
      };
    },
  });
}

/** POST /v1/ai/stream: SSE events `delta {text}`, then `done {message, …}` or `error {error}`. */
export function streamAction(deps: AiDeps) {
  return defineAction({
    service: 'ai',
    action: 'stream',
    method: 'POST',
    summary: 'Generate text as server-sent events',
    produces: ['text/event-stream'],
    input: TextInput,
    handler: async (input, ctx) => {
      const answered = await generate(deps, ctx, askedOf(input, 'stream'), async (attempt) => {
        const { provider, model } = attempt.target;
        const request = {
          ...toChat(input, model.upstreamModel, attempt.generation.outputCap ?? input.max_tokens),
          stream_options: { include_usage: true },
        };
        return attempt.firstChunk(
          await attempt.cache.chunks(() => provider.chatStream!(model, request, attempt.call)),
        );
      });
      const { generation, cache, result: chunks } = answered;
      const { model } = answered.target;
      return relayChunks(ctx, generation, chunks, {
        frames: (chunk) =>
          chunk.choices.flatMap(({ delta }) =>
            delta.content
              ? [sseFrame({ event: 'delta', data: JSON.stringify({ text: delta.content }) })]
              : [],
          ),
        finish: async ({ metered, text, finishReason }) => {
          const charged = await generation.completed(metered);
          const usageOut = { input_tokens: charged.inputTokens, output_tokens: charged.outputTokens };
          await cache.store(generation, finishReason);
          writeSse(
            ctx.res,
            JSON.stringify({
              message: message(text),
              model: model.id,
              usage: cache.mark(usageOut),
              finish_reason: finishReason,
            }),
            'done',
          );
        },
        errorFrame: (body) => sseFrame({ event: 'error', data: JSON.stringify(body) }),
      });
    },
  });
}
