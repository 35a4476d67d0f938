import { ApiError } from '../../../shared/errors.ts';
import { takeTurn } from '../../../shared/turns.ts';
import type { EmbeddingRequest, EmbeddingResult } from '../providers/types.ts';
import { hashedVector } from './vectors.ts';

export const DEV_EMBED_DIMENSIONS = 256;
/** As many as the largest model OpenAI offers. */
const DEV_EMBED_MAX_DIMENSIONS = 3072;

/** Inputs embedded between two turns of the event loop: a large request never holds it long. */
const INPUTS_PER_TURN = 8;

/**
 * `dev/embed`: a hashed unit vector per input, its tokens counted as words (token ids one each),
 * made a few inputs a turn of the event loop.
 */
export async function devEmbeddings(request: EmbeddingRequest): Promise<EmbeddingResult> {
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
  const vectors: Float32Array[] = [];
  for (const [i, input] of inputs.entries()) {
    if (i > 0 && i % INPUTS_PER_TURN === 0) await takeTurn();
    vectors.push(hashedVector(input, dimensions));
  }
  return { vectors, inputTokens: tokens };
}
