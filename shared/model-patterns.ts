import { z } from 'zod';

/** The most patterns one token may carry: a list that long is already a catalog of its own. */
export const MAX_MODEL_PATTERNS = 100;
const MAX_PATTERN_LENGTH = 200;

/**
 * One model a token may call: an exact id (`openai/gpt-4.1-mini`) or a pattern where `*` stands for
 * any run of characters (`openai/*`, `*`). `*` is the only wildcard: characters other globs give a
 * meaning to are refused, so nobody writes `openai/gpt-4?` believing it matches something.
 */
export const modelPattern = z
  .string()
  .min(1, 'a model pattern must not be empty')
  .max(MAX_PATTERN_LENGTH)
  .regex(/^[^\s\p{Cc}?[\]{}!\\]+$/u, 'a model id, or a pattern with * as its only wildcard (e.g. openai/*)');

/** The models a token may call; repeated entries are kept once. */
export const modelPatterns = z
  .array(modelPattern)
  .min(1, 'list at least one model, or leave models out to allow every model')
  .max(MAX_MODEL_PATTERNS)
  .transform((patterns) => [...new Set(patterns)]);

/** Whether `model` matches `pattern`, where `*` matches any run of characters (none included). */
export function matchesPattern(pattern: string, model: string): boolean {
  const parts = pattern.split('*');
  if (parts.length === 1) return pattern === model;
  const first = parts[0]!;
  const last = parts.at(-1)!;
  if (model.length < first.length + last.length) return false;
  if (!model.startsWith(first) || !model.endsWith(last)) return false;
  // The parts between stars, each found leftmost after the previous: enough when `*` is the only wildcard.
  let at = first.length;
  const end = model.length - last.length;
  for (const part of parts.slice(1, -1)) {
    const found = model.indexOf(part, at);
    if (found === -1 || found + part.length > end) return false;
    at = found + part.length;
  }
  return true;
}

/** Whether a token limited to `patterns` may call `model`; `null` allows every model. */
export const allowsModel = (patterns: readonly string[] | null, model: string): boolean =>
  patterns === null || patterns.some((pattern) => matchesPattern(pattern, model));
