import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from './canonical-json.ts';

/** What canonicalJson means, written the slow way: through JSON and back, then sorted at every depth. */
function throughJsonThenSorted(value: unknown): string {
  const sorted = (v: unknown): string => {
    if (Array.isArray(v)) return `[${v.map(sorted).join(',')}]`;
    if (v !== null && typeof v === 'object') {
      const record = v as Record<string, unknown>;
      return `{${Object.keys(record)
        .sort()
        .map((key) => `${JSON.stringify(key)}:${sorted(record[key])}`)
        .join(',')}}`;
    }
    return JSON.stringify(v);
  };
  return sorted(JSON.parse(JSON.stringify(value) ?? 'null'));
}

describe('canonicalJson', () => {
  it('sorts object keys at every depth and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}',
    );
  });

  it('gives one text for objects that differ only in key order', () => {
    const written = { name: 'acme', id: 7, nested: { long_key: true, k: 'v' } };
    const reordered = { id: 7, nested: { k: 'v', long_key: true }, name: 'acme' };
    expect(canonicalJson(reordered)).toBe(canonicalJson(written));
  });

  it('keeps what JSON keeps: undefined members dropped, toJSON applied, text escaped as JSON does', () => {
    expect(canonicalJson({ a: undefined, b: [undefined], when: new Date(0), s: '\u0000\ud800"' })).toBe(
      '{"b":[null],"s":"\\u0000\\ud800\\"","when":"1970-01-01T00:00:00.000Z"}',
    );
    expect(canonicalJson(undefined)).toBe('null');
  });

  it('treats names such as __proto__ and constructor as keys like any other', () => {
    const value = JSON.parse('{"__proto__":{"x":1},"constructor":2}');
    expect(canonicalJson(value)).toBe('{"__proto__":{"x":1},"constructor":2}');
  });

  it('sorts integer-like keys as text, not in the order JavaScript lists them', () => {
    expect(canonicalJson({ 9: 'a', 10: 'b', x: 'c' })).toBe('{"10":"b","9":"a","x":"c"}');
  });

  it('writes what a JSON round trip then sorting writes, for any value JSON can hold and more', () => {
    const leaf = fc.oneof(
      fc.string(),
      fc.double(),
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.constant(undefined),
      fc.date({ noInvalidDate: true }),
      fc.constant(Number.NaN),
      fc.constant(() => 1),
    );
    const value = fc.letrec((tie) => ({
      node: fc.oneof({ depthSize: 'small' }, leaf, tie('array'), tie('object')),
      array: fc.array(tie('node'), { maxLength: 5 }),
      object: fc.dictionary(
        fc.oneof(fc.string(), fc.constantFrom('10', '9', '__proto__', 'toJSON')),
        tie('node'),
        {
          maxKeys: 6,
        },
      ),
    })).node;
    fc.assert(
      fc.property(value, (v) => {
        expect(canonicalJson(v)).toBe(throughJsonThenSorted(v));
      }),
      { numRuns: 2_000 },
    );
  });
});
