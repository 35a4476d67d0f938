/**
 * JSON values to and from PostgreSQL `jsonb` columns, identical both ways. `jsonb` refuses two things
 * JSON allows: the escape `\u0000` and escapes of unpaired surrogates (`\ud800`), which is exactly how
 * JSON.stringify writes a NUL character or a lone surrogate. A value whose JSON text holds either is
 * stored wrapped, its JSON text kept as a string (`{"$studio_json": "<json text>"}`): inside a string
 * the backslash is itself escaped, so `jsonb` takes it. Reads unwrap it.
 *
 * Unambiguous: a value that is itself an object with the key `$studio_json` first is wrapped too, so
 * every stored object with that one key and a string value is a wrapper.
 */

const WRAPPER_KEY = '$studio_json';
/** A NUL or surrogate escape; a literal `\\u0000` in a string matches too, which only costs a wrapper. */
const UNSTORABLE_ESCAPE = /\\u(?:0000|d[89a-f])/i;
const WRAPPER_PREFIX = `{${JSON.stringify(WRAPPER_KEY)}:`;
const STORED_WRAPPER_PREFIX = `{${JSON.stringify(WRAPPER_KEY)}: `;

/** The JSON text to bind as a `jsonb` parameter (`$n::jsonb`). */
export function toJsonbText(value: unknown): string {
  const text = JSON.stringify(value ?? null);
  if (!UNSTORABLE_ESCAPE.test(text) && !text.startsWith(WRAPPER_PREFIX)) return text;
  return JSON.stringify({ [WRAPPER_KEY]: text });
}

/** The value `toJsonbText` was given, from the `jsonb` value parsed. */
function fromJsonb(stored: unknown): unknown {
  if (!isWrapper(stored)) return stored;
  return JSON.parse(stored[WRAPPER_KEY]);
}

/**
 * The value `toJsonbText` was given, from a `jsonb` column read as text (`data::text`): one
 * JSON.parse, and only text that starts like a wrapper is looked at again. PostgreSQL writes `jsonb`
 * with `": "` between a key and its value, so a wrapper's text starts with `{"$studio_json": `.
 */
export function fromJsonbText(text: string): unknown {
  const value: unknown = JSON.parse(text);
  return text.startsWith(STORED_WRAPPER_PREFIX) ? fromJsonb(value) : value;
}

function isWrapper(value: unknown): value is { [WRAPPER_KEY]: string } {
  if (typeof value !== 'object' || value === null || !(WRAPPER_KEY in value)) return false;
  return (
    typeof (value as Record<string, unknown>)[WRAPPER_KEY] === 'string' && Object.keys(value).length === 1
  );
}
