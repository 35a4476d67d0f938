import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../shared/errors.ts';
import { decodeVector, encodeVector, hashedVector } from './vectors.ts';

describe('vectors on the wire', () => {
  it('base64 is the little-endian float32 bytes; decoding gives the values back', () => {
    const encoded = encodeVector([0.5, -2, 1e-3], 'base64') as string;
    const bytes = Buffer.from(encoded, 'base64');
    expect(bytes.length).toBe(12);
    expect(bytes.readFloatLE(4)).toBe(-2);
    expect(Array.from(decodeVector(encoded))).toEqual([0.5, -2, Math.fround(1e-3)]);
  });

  it('floats are JSON numbers, kept as the upstream wrote them', () => {
    expect(encodeVector([0.1, 0.2], 'float')).toEqual([0.1, 0.2]);
    expect(decodeVector([0.1, 0.2])).toEqual([0.1, 0.2]);
  });

  it('anything else from an upstream is its fault', () => {
    for (const bad of [
      'not base64!',
      'AAA=',
      [1, 'x'],
      [Number.NaN],
      null,
      { 0: 1 },
      encodeVector([Number.NaN], 'base64'),
    ]) {
      expect(() => decodeVector(bad)).toThrow(ApiError);
    }
  });
});

describe('hashedVector', () => {
  it('is a unit vector, the same for the same input, unrelated for another', () => {
    const a = hashedVector('hello', 256);
    expect(a).toHaveLength(256);
    expect(Math.hypot(...a)).toBeCloseTo(1, 6);
    expect(hashedVector('hello', 256)).toEqual(a);
    const b = hashedVector('hello.', 256);
    expect(Math.abs(a.reduce((sum, x, i) => sum + x * b[i]!, 0))).toBeLessThan(0.3);
  });

  it('a text and token ids never share a vector; fewer dimensions are the head, normalized', () => {
    expect(hashedVector('1,2', 16)).not.toEqual(hashedVector([1, 2], 16));
    const long = hashedVector('x', 40);
    const short = hashedVector('x', 17);
    const head = long.slice(0, 17);
    const norm = Math.hypot(...head);
    for (const [i, value] of short.entries()) expect(value).toBeCloseTo(head[i]! / norm, 6);
  });
});
