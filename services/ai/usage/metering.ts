/**
 * What a generation is charged for, whatever its upstream reports. An upstream may leave usage
 * out, under-report it, or count only part of what it sent (text but not tool calls or
 * reasoning); the gateway counts what it delivered and what the model read, and charges the larger
 * of that estimate and the upstream's count. The rule and its estimate are described in
 * docs/decisions.md ("What a generation is charged").
 */

/** The estimate's rate: four non-blank characters a token. */
const CHARACTERS_PER_TOKEN = 4;

/**
 * The tokens a text comes to, estimated low: four non-blank characters a token. Tokenizers give
 * nearly all text more tokens than that (English prose about one per 3.5 to 4.5 non-blank
 * characters, code and JSON more, most other scripts far more), so an honest count stands above
 * the estimate, and a missing or short count is raised to it.
 */
export const tokensAtLeast = (text: string): number => tokensOfCharacters(nonBlankLength(text));

/**
 * The tokens `nonBlank` non-blank characters come to, estimated low (see `tokensAtLeast`): rounded
 * down, as a short common word is one token whatever its length, but never none for some text.
 */
export const tokensOfCharacters = (nonBlank: number): number =>
  nonBlank === 0 ? 0 : Math.max(1, Math.floor(nonBlank / CHARACTERS_PER_TOKEN));

/** Characters that are not white space. */
export function nonBlankLength(text: string): number {
  let blanks = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 32 || (c >= 9 && c <= 13)) blanks++;
  }
  return text.length - blanks;
}

/** The tokens charged: the upstream's count where it gave one, never below the gateway's estimate. */
export const chargedTokens = (reported: number | null | undefined, estimate: number): number =>
  Math.max(typeof reported === 'number' && Number.isFinite(reported) ? reported : 0, estimate);

/** Keys whose values are binary payloads (base64 audio, files, images), not text a model reads as tokens. */
const PAYLOAD_KEY = /(?:^|_)(?:data|b64_json)$/;
/** Keys whose values are the format's framing (kinds, roles, ids), not text the model reads. */
const FRAMING_KEYS: ReadonlySet<string> = new Set([
  'type',
  'role',
  'id',
  'call_id',
  'tool_call_id',
  'status',
]);

/**
 * The estimate of what a request's model reads: every string in it (messages, system text, tool
 * definitions, tool calls and results) but the format's framing (`type`, `role`, ids) and binary
 * payloads (data URLs and base64 `data` fields, which models bill by image or second, not by their
 * characters).
 */
export const inputTokensAtLeast = (request: unknown): number => tokensOfCharacters(readCharacters(request));

/** The non-blank characters of what a model reads in `value` (see `inputTokensAtLeast`). */
export function readCharacters(value: unknown): number {
  let characters = 0;
  const walk = (value: unknown, key: string): void => {
    if (typeof value === 'string') {
      if (!FRAMING_KEYS.has(key) && !PAYLOAD_KEY.test(key) && !value.startsWith('data:'))
        characters += nonBlankLength(value);
    } else if (Array.isArray(value)) {
      for (const item of value) walk(item, key);
    } else if (typeof value === 'object' && value !== null) {
      for (const [k, v] of Object.entries(value)) walk(v, k);
    }
  };
  walk(value, '');
  return characters;
}
