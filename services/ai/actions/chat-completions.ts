import { defineAction } from '../../../shared/http/action.ts';
import { callContext } from '../call-context.ts';
import { relayChunks } from '../chat/relay.ts';
import { writeWithBackpressure } from '../chat/stream-out.ts';
import { type ChatRequest, ChatRequestSchema, textOf } from '../chat/wire.ts';
import type { AiDeps } from '../deps.ts';
import { GenerationMeter } from '../generation.ts';

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
      return relayChunks(ctx, meter, chunks, {
        promptText: () => request.messages.map((m) => textOf(m.content)).join(' '),
        frames: (chunk) => [`data: ${JSON.stringify({ ...chunk, model: model.id })}\n\n`],
        finish: async ({ usage: tokens }) => {
          await writeWithBackpressure(ctx.res, 'data: [DONE]\n\n');
          meter.completed(tokens.input_tokens, tokens.output_tokens);
        },
        errorFrame: (body) => `data: ${JSON.stringify(body)}\n\n`,
      });
    },
  });
}
