import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { defineAction } from '../../../shared/http/action.ts';
import { writeSse } from '../../../shared/http/sse.ts';
import { callContext } from '../call-context.ts';
import { relayChunks } from '../chat/relay.ts';
import type { ChatRequest } from '../chat/wire.ts';
import type { AiDeps } from '../deps.ts';
import { estimateTokens, GenerationMeter } from '../generation.ts';

const TextInput = z.strictObject({
  model: z.string().min(1),
  prompt: z.string().min(1, 'prompt must not be empty'),
  studio_id: z.string().optional(),
  system: z.string().optional(),
  max_tokens: z.number().int().positive().optional(),
  temperature: z.number().min(0).max(2).optional(),
});
type TextInput = z.infer<typeof TextInput>;

function toChat(input: TextInput, upstreamModel: string): ChatRequest {
  return {
    model: upstreamModel,
    messages: [
      ...(input.system ? [{ role: 'system' as const, content: input.system }] : []),
      { role: 'user' as const, content: input.prompt },
    ],
    ...(input.max_tokens === undefined ? {} : { max_tokens: input.max_tokens }),
    ...(input.temperature === undefined ? {} : { temperature: input.temperature }),
  };
}

/** The message `text` answers with, in the parts of a session message: `{id, role: 'assistant', parts: [{type: 'text', text}]}`. */
const message = (text: string) => ({
  id: `msg_${randomUUID()}`,
  role: 'assistant' as const,
  parts: [{ type: 'text' as const, text }],
});

export function textAction({ catalog, env, usage }: AiDeps) {
  return defineAction({
    service: 'ai',
    action: 'text',
    method: 'POST',
    summary: 'Generate text',
    input: TextInput,
    handler: async (input, ctx) => {
      const { provider, model } = catalog.resolve(input.model, 'text');
      const meter = new GenerationMeter(usage, ctx, model.id, 'text');
      const completion = await meter.guard(() =>
        provider.chat!(model, toChat(input, model.upstreamModel), callContext(env, ctx)),
      );
      const choice = completion.choices[0];
      const usageOut = {
        input_tokens: completion.usage?.prompt_tokens ?? estimateTokens(input.prompt),
        output_tokens: completion.usage?.completion_tokens ?? estimateTokens(choice?.message.content ?? ''),
      };
      meter.completed(usageOut.input_tokens, usageOut.output_tokens);
      return {
        ...message(choice?.message.content ?? ''),
        model: model.id,
        usage: usageOut,
        finish_reason: choice?.finish_reason ?? null,
      };
    },
  });
}

/** POST /v1/ai/stream: SSE events `delta {text}`, then `done {message, …}` or `error {error}`. */
export function streamAction({ catalog, env, usage }: AiDeps) {
  return defineAction({
    service: 'ai',
    action: 'stream',
    method: 'POST',
    summary: 'Generate text as server-sent events',
    input: TextInput,
    handler: async (input, ctx) => {
      const { provider, model } = catalog.resolve(input.model, 'stream');
      const meter = new GenerationMeter(usage, ctx, model.id, 'stream');
      const request = { ...toChat(input, model.upstreamModel), stream_options: { include_usage: true } };
      const chunks = await meter.guard(() => provider.chatStream!(model, request, callContext(env, ctx)));
      return relayChunks(ctx, meter, chunks, {
        promptText: () => input.prompt,
        frames: (chunk) =>
          chunk.choices.flatMap(({ delta }) =>
            delta.content ? [`event: delta\ndata: ${JSON.stringify({ text: delta.content })}\n\n`] : [],
          ),
        finish: ({ usage: usageOut, text, finishReason }) => {
          meter.completed(usageOut.input_tokens, usageOut.output_tokens);
          writeSse(
            ctx.res,
            JSON.stringify({
              message: message(text),
              model: model.id,
              usage: usageOut,
              finish_reason: finishReason,
            }),
            'done',
          );
        },
        errorFrame: (body) => `event: error\ndata: ${JSON.stringify(body)}\n\n`,
      });
    },
  });
}
