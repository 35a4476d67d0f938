import { createHash } from 'node:crypto';
import { ApiError } from '../../../shared/errors.ts';

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** An embedding as a provider hands it over: JSON numbers as they came, or float32 values. */
export type Vector = readonly number[] | Float32Array;

/**
 * A vector as OpenAI's wire carries it: a JSON array of numbers, or `base64`, the little-endian
 * float32 bytes of the values in base64 (what OpenAI's own clients ask for, a quarter of the size).
 */
export function encodeVector(vector: Vector, encoding: 'float' | 'base64'): number[] | string {
  if (encoding === 'float') return Array.from(vector);
  const floats = vector instanceof Float32Array ? vector : Float32Array.from(vector);
  const bytes = Buffer.alloc(floats.length * 4);
  for (const [i, value] of floats.entries()) bytes.writeFloatLE(value, i * 4);
  return bytes.toString('base64');
}

/** An upstream's `embedding`, in either encoding; anything else is the upstream's fault (502). */
export function decodeVector(value: unknown): Vector {
  if (Array.isArray(value)) {
    if (value.every((v) => typeof v === 'number' && Number.isFinite(v))) return value as number[];
  } else if (typeof value === 'string' && value.length % 4 === 0 && BASE64.test(value)) {
    const bytes = Buffer.from(value, 'base64');
    if (bytes.length % 4 === 0) {
      const floats = new Float32Array(bytes.length / 4);
      for (let i = 0; i < floats.length; i++) floats[i] = bytes.readFloatLE(i * 4);
      if (floats.every(Number.isFinite)) return floats;
    }
  }
  throw new ApiError(
    'upstream_error',
    'the upstream answered an embedding that is neither numbers nor base64 float32',
  );
}

/**
 * A deterministic unit vector for a text (or a list of token ids): SHA-256 of the input, expanded
 * in counter mode to as many values as asked, each in [-1, 1), then normalized to length 1. The
 * same input always gives the same vector, different inputs unrelated ones; fewer dimensions give
 * the first values of the longer vector, normalized again (as text-embedding-3 shortens its own).
 */
export function hashedVector(input: string | readonly number[], dimensions: number): Float32Array {
  // Texts and token lists are hashed under different prefixes, so neither can pass for the other.
  const seed = createHash('sha256')
    .update(typeof input === 'string' ? `text\0${input}` : `tokens\0${input.join(',')}`)
    .digest();
  const values = new Float32Array(dimensions);
  const counter = Buffer.alloc(4);
  for (let block = 0; block * 16 < dimensions; block++) {
    counter.writeUInt32BE(block);
    const bytes = createHash('sha256').update(seed).update(counter).digest();
    for (let i = 0; i < 16 && block * 16 + i < dimensions; i++) {
      values[block * 16 + i] = bytes.readInt16BE(i * 2) / 32_768;
    }
  }
  let norm = 0;
  for (const value of values) norm += value * value;
  norm = Math.sqrt(norm) || 1;
  for (const [i, value] of values.entries()) values[i] = value / norm;
  return values;
}
