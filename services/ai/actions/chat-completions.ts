import { ApiError } from '../../../shared/errors.ts';
import { defineAction } from '../../../shared/http/action.ts';
import { openSse } from '../../../shared/http/sse.ts';
import { callContext } from '../call-context.ts';
import { writeWithBackpressure } from '../chat/stream-out.ts';
import { type ChatChunk, type ChatRequest, ChatRequestSchema, textOf } from '../chat/wire.ts';
import type { AiDeps } from '../deps.ts';
import { estimateTokens, GenerationMeter } from '../generation.ts';

/** POST /v1/ai/chat/completions in OpenAI's wire format, streaming included. */
export function chatCompletionsAction({ catalog, env, usage }: AiDeps) {
  return defineAction({
    service: 'ai',
    action: 'chat/completions',
    method: 'POST',
    summary: 'OpenAI-compatible chat completions',
    // Long conversations travel whole in every request: far more than the default 1 MiB.
    bodyLimitBytes: 32 * 1024 * 1024,
    input: ChatRequestSchema,
    handler: async (input, ctx) => {
      const entry = catalog.resolve(input.model, 'chat');
      const { provider, model } = entry;
      const { studio_id: _studio, ...body } = input;
      const request: ChatRequest = { ...body, model: model.upstreamModel };
      const meter = new GenerationMeter(usage, ctx, model.id, 'chat');
      const call = callContext(env, ctx);

      if (input.stream !== true) {
        const completion = await meter.guard(() => provider.chat!(model, request, call));
        meter.completed(completion.usage?.prompt_tokens ?? 0, completion.usage?.completion_tokens ?? 0);
        return { ...completion, model: model.id };
      }

      const chunks = await meter.guard(() => provider.chatStream!(model, request, call));
      openSse(ctx.res);
      let reported: ChatChunk['usage'];
      let streamedText = '';
      try {
        for await (const chunk of chunks) {
          if (chunk.usage) reported = chunk.usage;
          for (const choice of chunk.choices) streamedText += choice.delta.content ?? '';
          await writeWithBackpressure(ctx.res, `data: ${JSON.stringify({ ...chunk, model: model.id })}\n\n`);
        }
        await writeWithBackpressure(ctx.res, 'data: [DONE]\n\n');
        const input =
          reported?.prompt_tokens ?? estimateTokens(request.messages.map((m) => textOf(m.content)).join(' '));
        meter.completed(input, reported?.completion_tokens ?? estimateTokens(streamedText));
      } catch (error) {
        meter.failed(error);
        if (!ctx.res.destroyed) {
          const api =
            error instanceof ApiError
              ? error
              : new ApiError('upstream_error', 'the upstream stream broke off');
          ctx.res.write(`data: ${JSON.stringify(api.toBody(ctx.requestId))}\n\n`);
        }
      }
      ctx.res.end();
      return undefined;
    },
  });
}
