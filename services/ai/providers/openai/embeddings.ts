import { ApiError } from '../../../../shared/errors.ts';
import { decodeVector, type Vector } from '../../embeddings/vectors.ts';
import { readJson } from '../body.ts';
import type { CallContext, EmbeddingRequest, EmbeddingResult, ModelDefinition } from '../types.ts';
import type { OpenAiApi } from './wire.ts';

interface UpstreamEmbeddings {
  data?: { index?: unknown; embedding?: unknown }[];
  usage?: { prompt_tokens?: unknown };
}

/**
 * Embeddings over OpenAI's wire, shared by `openai` and `openai-compatible`. `upstreamEncoding`
 * says which encoding to ask for given the client's: either answer is decoded, so the client gets
 * the encoding it asked for whatever the upstream sent.
 */
export function openAiEmbeddings(
  api: OpenAiApi,
  upstreamEncoding: (asked: EmbeddingRequest['encoding']) => EmbeddingRequest['encoding'],
) {
  return {
    async embed(
      model: ModelDefinition,
      request: EmbeddingRequest,
      ctx: CallContext,
    ): Promise<EmbeddingResult> {
      const response = await api.send(ctx, '/embeddings', {
        json: {
          model: model.upstreamModel,
          input: request.input,
          encoding_format: upstreamEncoding(request.encoding),
          ...(request.dimensions === undefined ? {} : { dimensions: request.dimensions }),
          ...(request.user === undefined ? {} : { user: request.user }),
        },
      });
      const answer = await readJson<UpstreamEmbeddings>(response, ctx.signal);
      const prompt = answer?.usage?.prompt_tokens;
      return {
        vectors: inOrder(answer?.data, request.input.length),
        inputTokens:
          typeof prompt === 'number' && Number.isInteger(prompt) && prompt >= 0 ? prompt : undefined,
      };
    },
  };
}

/** One vector per input, placed by its `index`: a missing, repeated or extra one is a 502. */
function inOrder(data: UpstreamEmbeddings['data'], count: number): Vector[] {
  if (!Array.isArray(data) || data.length !== count) {
    throw new ApiError(
      'upstream_error',
      `the upstream answered ${Array.isArray(data) ? data.length : 'no'} embeddings for ${count} inputs`,
    );
  }
  const vectors: (Vector | undefined)[] = new Array(count).fill(undefined);
  for (const [position, item] of data.entries()) {
    const index = item?.index ?? position;
    if (
      typeof index !== 'number' ||
      !Number.isInteger(index) ||
      index < 0 ||
      index >= count ||
      vectors[index]
    ) {
      throw new ApiError(
        'upstream_error',
        'the upstream answered embeddings whose indexes do not match the inputs',
      );
    }
    vectors[index] = decodeVector(item.embedding);
  }
  return vectors as Vector[];
}
