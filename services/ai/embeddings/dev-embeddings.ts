import { ApiError } from '../../../shared/errors.ts';
import type { EmbeddingRequest, EmbeddingResult } from '../providers/types.ts';
import { hashedVector } from './vectors.ts';

export const DEV_EMBED_DIMENSIONS = 256;
/** As many as the largest model OpenAI offers. */
const DEV_EMBED_MAX_DIMENSIONS = 3072;

/** `dev/embed`: a hashed unit vector per input, its tokens counted as words (token ids one each). */
export function devEmbeddings(request: EmbeddingRequest): EmbeddingResult {
  const dimensions = request.dimensions ?? DEV_EMBED_DIMENSIONS;
  if (dimensions > DEV_EMBED_MAX_DIMENSIONS) {
    throw new ApiError(
      'validation_failed',
      `dev/embed makes vectors of at most ${DEV_EMBED_MAX_DIMENSIONS} dimensions`,
      { param: 'dimensions' },
    );
  }
  const inputs: (string | number[])[] = request.input;
  const tokens = inputs.reduce(
    (sum, input) => sum + (typeof input === 'string' ? (input.match(/\S+/g) ?? []).length : input.length),
    0,
  );
  return { vectors: inputs.map((input) => hashedVector(input, dimensions)), inputTokens: tokens };
}
