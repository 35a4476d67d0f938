import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { ApiError } from '../../../shared/errors.ts';
import { defineAction } from '../../../shared/http/action.ts';
import { writeWithBackpressure } from '../../../shared/http/backpressure.ts';
import { sseFrame } from '../../../shared/http/sse.ts';
import { nowSeconds } from '../chat/ids.ts';
import { meteredCompletion } from '../chat/metered.ts';
import { relayChunks } from '../chat/relay.ts';
import type { ChatChunk, ChatRequest } from '../chat/wire.ts';
import type { AiDeps } from '../deps.ts';
import { generate } from '../generate.ts';
import { tokensAtMost } from '../generation-ask.ts';
import { tokensAtLeast } from '../usage/metering.ts';

/**
 * OpenAI's legacy completions, as its clients send them: one prompt (a text, or a list of one),
 * answered through chat as the one user message. What chat cannot say is refused: several prompts,
 * `n` above 1, `echo`, `logprobs`, `suffix`, `best_of`.
 */
const CompletionRequest = z.object({
  model: z.string().min(1),
  prompt: z.union([
    z.string(),
    z.array(z.string()).length(1, 'one prompt: send several as several requests'),
  ]),
  max_tokens: z.number().int().positive().nullable().optional(),
  temperature: z.number().min(0).max(2).nullable().optional(),
  top_p: z.number().min(0).max(1).nullable().optional(),
  stop: z
    .union([z.string(), z.array(z.string()).max(4)])
    .nullable()
    .optional(),
  presence_penalty: z.number().min(-2).max(2).nullable().optional(),
  frequency_penalty: z.number().min(-2).max(2).nullable().optional(),
  seed: z.number().int().nullable().optional(),
  user: z.string().max(256).optional(),
  stream: z.boolean().nullable().optional(),
  stream_options: z.object({ include_usage: z.boolean().optional() }).nullable().optional(),
  n: z.literal(1, { message: 'n: one completion a request' }).nullable().optional(),
  echo: z.literal(false, { message: 'echo is not supported: a completion answers its text only' }).optional(),
  logprobs: z.null({ message: 'logprobs are not supported' }).optional(),
  suffix: z.null({ message: 'suffix is not supported' }).optional(),
  best_of: z.literal(1, { message: 'best_of is not supported' }).nullable().optional(),
  studio_id: z.string().optional(),
});
type CompletionRequest = z.infer<typeof CompletionRequest>;

const completionId = () => `cmpl-${randomBytes(12).toString('base64url')}`;
const promptOf = (request: CompletionRequest) =>
  typeof request.prompt === 'string' ? request.prompt : request.prompt[0]!;

function chatRequestOf(
  request: CompletionRequest,
  upstreamModel: string,
  cap: number | undefined,
): ChatRequest {
  const maxTokens = cap ?? request.max_tokens ?? undefined;
  return {
    model: upstreamModel,
    messages: [{ role: 'user', content: promptOf(request) }],
    ...(maxTokens === undefined ? {} : { max_tokens: maxTokens }),
    ...(request.temperature == null ? {} : { temperature: request.temperature }),
    ...(request.top_p == null ? {} : { top_p: request.top_p }),
    ...(request.stop == null ? {} : { stop: request.stop }),
    ...(request.presence_penalty == null ? {} : { presence_penalty: request.presence_penalty }),
    ...(request.frequency_penalty == null ? {} : { frequency_penalty: request.frequency_penalty }),
    ...(request.seed == null ? {} : { seed: request.seed }),
  };
}

/** POST /v1/ai/completions: OpenAI's legacy completions, streaming included, for every chat model. */
export function completionsAction(deps: AiDeps) {
  return defineAction({
    service: 'ai',
    action: 'completions',
    method: 'POST',
    summary: "OpenAI's legacy completions, answered through chat",
    produces: ['application/json', 'text/event-stream'],
    bodyLimitBytes: 32 * 1024 * 1024,
    input: CompletionRequest,
    handler: async (input, ctx) => {
      const prompt = promptOf(input);
      const asked = input.max_tokens ?? undefined;
      const ask = {
        inputTokensAtMost: tokensAtMost(prompt),
        inputTokensAtLeast: tokensAtLeast(prompt),
        ...(asked === undefined ? {} : { maxOutputTokens: asked }),
      };
      const streamed = input.stream === true;
      const answered = await generate(
        deps,
        ctx,
        { model: input.model, modality: 'chat', ask },
        async ({ target: { provider, model }, generation, call, firstChunk }) => {
          const request = chatRequestOf(input, model.upstreamModel, generation.outputCap);
          if (!streamed)
            return { streamed: false, completion: await provider.chat!(model, request, call) } as const;
          const metered = { ...request, stream: true, stream_options: { include_usage: true } };
          return {
            streamed: true,
            chunks: await firstChunk(await provider.chatStream!(model, metered, call)),
          } as const;
        },
      );
      const { generation, result } = answered;
      const model = answered.target.model.id;
      const id = completionId();
      const created = nowSeconds();

      if (!result.streamed) {
        const { completion } = result;
        const choice = completion.choices[0];
        if (choice?.message.content == null && choice?.message.tool_calls?.length)
          throw new ApiError(
            'upstream_error',
            'the model answered with a tool call, which completions cannot carry',
          );
        const charged = await generation.completed(meteredCompletion(completion));
        return {
          id,
          object: 'text_completion',
          created,
          model,
          choices: [
            {
              text: choice?.message.content ?? '',
              index: 0,
              logprobs: null,
              finish_reason: choice?.finish_reason ?? null,
            },
          ],
          usage: {
            prompt_tokens: charged.inputTokens,
            completion_tokens: charged.outputTokens,
            total_tokens: charged.inputTokens + charged.outputTokens,
          },
        };
      }

      const usageAsked = input.stream_options?.include_usage === true;
      const frame = (body: unknown) => sseFrame({ data: JSON.stringify(body) });
      const chunkOf = (choice: ChatChunk['choices'][number]) => ({
        id,
        object: 'text_completion',
        created,
        model,
        choices: [
          {
            text: choice.delta.content ?? '',
            index: 0,
            logprobs: null,
            finish_reason: choice.finish_reason ?? null,
          },
        ],
      });
      return relayChunks(ctx, generation, result.chunks, {
        frames: (chunk) => chunk.choices.map((choice) => frame(chunkOf(choice))),
        finish: async ({ metered }) => {
          if (usageAsked) {
            const charged = generation.charged(metered);
            const usage = {
              prompt_tokens: charged.inputTokens,
              completion_tokens: charged.outputTokens,
              total_tokens: charged.inputTokens + charged.outputTokens,
            };
            await writeWithBackpressure(
              ctx.res,
              frame({ id, object: 'text_completion', created, model, choices: [], usage }),
            );
          }
          await generation.completed(metered);
          await writeWithBackpressure(ctx.res, sseFrame({ data: '[DONE]' }));
        },
        errorFrame: (body) => frame(body),
      });
    },
  });
}
