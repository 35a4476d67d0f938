import fc from 'fast-check';

/** Names an id may take that are also members of every plain object. */
export const PROTOTYPE_NAMES = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'valueOf',
];

/** Text JSON allows that databases, paths and parsers trip over. */
const hostileText = fc.constantFrom(
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udc00y',
  '\\u0000',
  '../../etc/passwd',
  '%00',
  '%2e%2e%2f',
  ' ',
  '',
  '\r\nSet-Cookie: a=b',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a log-injection payload, sent as it is.
  '${jndi:x}',
  "'; DROP TABLE events; --",
  '😀',
  '\u202e',
  ...PROTOTYPE_NAMES,
);

/** Any string, biased toward the hostile ones, now and then very long. */
export const text = fc.oneof(
  { weight: 3, arbitrary: hostileText },
  { weight: 3, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 2, arbitrary: fc.stringMatching(/^[a-z][a-z0-9_-]{0,20}$/) },
  { weight: 1, arbitrary: fc.integer({ min: 1_000, max: 300_000 }).map((n) => 'x'.repeat(n)) },
);

/** An id in a path, a query or a body. */
export const id = (known: readonly string[]) =>
  fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...PROTOTYPE_NAMES) },
    { weight: 2, arbitrary: text },
    { weight: 1, arbitrary: known.length > 0 ? fc.constantFrom(...known) : text },
  );

/**
 * A JSON value nested `depth` deep: `[[[…]]]` or `{"a":{"a":…}}`, built when it is serialized, so
 * that fast-check can print a failing case without walking thousands of levels.
 */
class Deep {
  constructor(
    readonly depth: number,
    readonly arrays: boolean,
  ) {}
  toJSON(): unknown {
    const open = this.arrays ? '['.repeat(this.depth) : '{"a":'.repeat(this.depth);
    const close = this.arrays ? ']'.repeat(this.depth) : '}'.repeat(this.depth);
    return JSON.parse(`${open}${this.arrays ? '' : '1'}${close}`);
  }
  [fc.toStringMethod](): string {
    return `<${this.depth} levels of ${this.arrays ? 'arrays' : 'objects'}>`;
  }
}
const deep = fc
  .tuple(fc.integer({ min: 50, max: 2_000 }), fc.boolean())
  .map(([depth, arrays]) => new Deep(depth, arrays));

/** Any JSON value, with hostile strings in keys and values. */
export const jsonValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 2, arbitrary: text },
  { weight: 1, arbitrary: deep },
  {
    weight: 1,
    arbitrary: fc.dictionary(
      fc.oneof(text, fc.constantFrom(...PROTOTYPE_NAMES)),
      fc.jsonValue({ maxDepth: 2 }),
      { maxKeys: 4 },
    ),
  },
  { weight: 1, arbitrary: fc.constantFrom(null, true, 0, -1, 1e308, Number.MAX_SAFE_INTEGER + 2, [], {}) },
);

/** A Content-Type a client may send, the right one most often. */
export const contentType = fc.oneof(
  { weight: 8, arbitrary: fc.constant('application/json') },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/json; charset=latin1',
      'application/json; charset=utf-16',
      'application/merge-patch+json',
      '',
      'application/json; charset="utf-8"',
    ),
  },
);

export const contentEncoding = fc.oneof(
  { weight: 10, arbitrary: fc.constant(undefined) },
  {
    weight: 1,
    arbitrary: fc.constantFrom('gzip', 'deflate', 'br', 'zstd', 'identity', 'gzip, gzip', 'bogus'),
  },
);
