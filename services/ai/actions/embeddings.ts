import { z } from 'zod';
import { ApiError } from '../../../shared/errors.ts';
import { defineAction } from '../../../shared/http/action.ts';
import { writeWithBackpressure } from '../../../shared/http/backpressure.ts';
import { takeTurn } from '../../../shared/turns.ts';
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
/**
 * The most numbers one answer carries (inputs × dimensions): about 20 MB as JSON numbers, 4 MB as
 * base64. A small request may ask for a large answer; past this it is refused before any upstream call.
 */
export const MAX_EMBEDDING_NUMBERS = 1_048_576;
/** Vectors encoded between two turns of the event loop. */
const VECTORS_PER_TURN = 8;

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
      const known = model.meta.dimensions;
      const dimensions = input.dimensions ?? (typeof known === 'number' ? known : undefined);
      if (dimensions !== undefined) assertBounded(inputs.length * dimensions, inputs.length, dimensions);
      const generation = await Generation.start(deps, ctx, model, 'embed', {
        inputTokensAtMost: tokensIn(inputs, tokensAtMost),
        inputTokensAtLeast: tokensIn(inputs, tokensAtLeast),
      });
      const result = await generation.guard(async () => {
        const answer = await provider.embed!(
          model,
          {
            input: inputs,
            encoding: input.encoding_format,
            ...(input.dimensions === undefined ? {} : { dimensions: input.dimensions }),
            ...(input.user === undefined ? {} : { user: input.user }),
          },
          callContext(env, ctx),
        );
        // A model whose dimensions were not known before its answer is bounded by the answer.
        const numbers = answer.vectors.reduce((sum, v) => sum + v.length, 0);
        assertBounded(numbers, inputs.length, Math.round(numbers / Math.max(1, inputs.length)));
        return answer;
      });
      const { inputTokens } = await generation.completed({
        reported: { inputTokens: result.inputTokens },
        deliveredOutputTokens: 0,
      });
      // Written a vector at a time: the answer is never one string of its whole size.
      ctx.res.setHeader('content-type', 'application/json; charset=utf-8');
      await writeWithBackpressure(ctx.res, '{"object":"list","data":[');
      for (const [index, vector] of result.vectors.entries()) {
        // A few vectors a turn of the event loop: a large answer never holds it long.
        if (index > 0 && index % VECTORS_PER_TURN === 0) await takeTurn();
        const item = { object: 'embedding', index, embedding: encodeVector(vector, input.encoding_format) };
        await writeWithBackpressure(ctx.res, `${index === 0 ? '' : ','}${JSON.stringify(item)}`);
      }
      const usage = { prompt_tokens: inputTokens, total_tokens: inputTokens };
      ctx.res.end(`],"model":${JSON.stringify(model.id)},"usage":${JSON.stringify(usage)}}`);
      return undefined;
    },
  });
}

/** 400 when an answer of `numbers` numbers (`inputs` × `dimensions`) is more than one answer carries. */
function assertBounded(numbers: number, inputs: number, dimensions: number): void {
  if (numbers <= MAX_EMBEDDING_NUMBERS) return;
  throw new ApiError(
    'validation_failed',
    `${inputs} inputs × ${dimensions} dimensions is ${numbers} numbers; one answer carries at most ${MAX_EMBEDDING_NUMBERS}: send fewer inputs or ask for fewer dimensions`,
    { param: 'input' },
  );
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
