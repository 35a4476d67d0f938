import { z } from 'zod';
import { defineAction } from '../../../shared/http/action.ts';
import { callContext } from '../call-context.ts';
import type { AiDeps } from '../deps.ts';
import { encodeVector } from '../embeddings/vectors.ts';
import { Generation } from '../generation.ts';
import { tokensAtMost } from '../generation-ask.ts';
import type { EmbeddingInput } from '../providers/types.ts';
import { tokensAtLeast } from '../usage/metering.ts';

/** OpenAI's limits: 2,048 inputs a request; a request reads at most 300,000 tokens. */
const MAX_INPUTS = 2048;
const MAX_TOKENS = 300_000;
/** 300,000 token ids as JSON digits and commas take about 2 MB; 4 MiB leaves room. */
const EMBEDDINGS_BODY_LIMIT = 4 * 1024 * 1024;

const text = z.string().min(1, 'an input must not be empty');
const tokenIds = z
  .array(
    z
      .number()
      .int()
      .min(0)
      .max(2 ** 31 - 1),
  )
  .min(1, 'an input must not be empty');

/** POST /v1/ai/embeddings in OpenAI's wire format. */
export function embeddingsAction(deps: AiDeps) {
  const { catalog, env } = deps;
  return defineAction({
    service: 'ai',
    action: 'embeddings',
    method: 'POST',
    summary: 'OpenAI-compatible embeddings',
    bodyLimitBytes: EMBEDDINGS_BODY_LIMIT,
    input: z.strictObject({
      model: z.string().min(1),
      /** A text, texts, a text as token ids, or texts as token ids. */
      input: z.union([
        text,
        z.array(text).min(1).max(MAX_INPUTS),
        tokenIds.max(MAX_TOKENS),
        z.array(tokenIds).min(1).max(MAX_INPUTS),
      ]),
      encoding_format: z.enum(['float', 'base64']).default('float'),
      dimensions: z.number().int().min(1).max(16_384).optional(),
      user: z.string().max(256).optional(),
      studio_id: z.string().optional(),
    }),
    handler: async (input, ctx) => {
      const { provider, model } = catalog.resolve(input.model, 'embed');
      const inputs = listOf(input.input);
      const generation = await Generation.start(deps, ctx, model, 'embed', {
        inputTokensAtMost: tokensIn(inputs, tokensAtMost),
        inputTokensAtLeast: tokensIn(inputs, tokensAtLeast),
      });
      const result = await generation.guard(() =>
        provider.embed!(
          model,
          {
            input: inputs,
            encoding: input.encoding_format,
            ...(input.dimensions === undefined ? {} : { dimensions: input.dimensions }),
            ...(input.user === undefined ? {} : { user: input.user }),
          },
          callContext(env, ctx),
        ),
      );
      const { inputTokens } = await generation.completed({
        reported: { inputTokens: result.inputTokens },
        deliveredOutputTokens: 0,
      });
      return {
        object: 'list',
        data: result.vectors.map((vector, index) => ({
          object: 'embedding',
          index,
          embedding: encodeVector(vector, input.encoding_format),
        })),
        model: model.id,
        usage: { prompt_tokens: inputTokens, total_tokens: inputTokens },
      };
    },
  });
}

/** Every form of `input` as a list of inputs: one text or one list of token ids is a list of one. */
function listOf(input: string | string[] | number[] | number[][]): EmbeddingInput {
  if (typeof input === 'string') return [input];
  if (input.every((item) => typeof item === 'number')) return [input as number[]];
  return input as string[] | number[][];
}

/** Tokens of the inputs: texts as `count` says, token ids one each. */
function tokensIn(inputs: EmbeddingInput, count: (text: string) => number): number {
  let tokens = 0;
  for (const input of inputs) tokens += typeof input === 'string' ? count(input) : input.length;
  return tokens;
}
