import { parse } from 'dotenv';
import { ENV_KEY_PATTERN } from './env.ts';

export interface ParsedDotenv {
  /** In file order; a key repeated keeps every occurrence (the last one wins when applied). */
  entries: { key: string; value: string }[];
  errors: { line: number; message: string }[];
}

/** `KEY=`, `KEY = `, `export KEY=` or `KEY: ` (dotenv's separators). */
const ASSIGNMENT = /^\s*(?:export\s+)?([^\s=:#]+)(?:\s*=|:\s)/;
const QUOTES = ['"', "'", '`'] as const;
type Quote = (typeof QUOTES)[number];

/**
 * Parses a .env file line by line, in time linear in its length: dotenv's own parser runs one
 * regular expression over the whole file, which takes quadratic time on runs of blank lines (100 KB
 * of newlines: 19 s). Here the file is cut into entries first (a line, or the lines of a quoted
 * multi-line value) and dotenv parses each entry alone, so its values mean what they mean to dotenv.
 * Lines that are not assignments, and keys that are not valid variable names, are reported by line.
 */
export function parseDotenv(content: string): ParsedDotenv {
  const lines = content.split(/\r\n?|\n/);
  const nextLineWith = nextLineHolding(lines);
  const entries: ParsedDotenv['entries'] = [];
  const errors: ParsedDotenv['errors'] = [];

  for (let index = 0; index < lines.length; index++) {
    const text = lines[index]!;
    const line = index + 1;
    const trimmed = text.trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    const match = ASSIGNMENT.exec(text);
    if (!match) {
      errors.push({ line, message: 'not a KEY=value line' });
      continue;
    }
    const key = match[1]!;
    const last = lastLineOfValue(lines, index, text.slice(match[0].length).trimStart(), nextLineWith);
    if (!ENV_KEY_PATTERN.test(key)) {
      errors.push({
        line,
        message: `"${key}" is not a valid key (A-Z, 0-9 and _, not starting with a digit)`,
      });
      index = last;
      continue;
    }
    const value = ownValue(
      parse(
        lines
          .slice(index, last + 1)
          .join('\n')
          .trimStart(),
      ),
      key,
    );
    index = last;
    if (value === undefined) errors.push({ line, message: 'not a KEY=value line' });
    else entries.push({ key, value });
  }
  return { entries, errors };
}

/**
 * The line a value starting on `index` ends on: a quote opened and not closed on its own line closes
 * on the next line holding that quote, when nothing but a comment follows it there (as dotenv reads
 * it); otherwise the value is its one line.
 */
function lastLineOfValue(
  lines: readonly string[],
  index: number,
  value: string,
  nextLineWith: Record<Quote, readonly number[]>,
): number {
  const quote = QUOTES.find((q) => value.startsWith(q));
  if (!quote || value.slice(1).includes(quote)) return index;
  const closing = nextLineWith[quote][index]!;
  if (closing < 0) return index;
  const after = lines[closing]!.slice(lines[closing]!.indexOf(quote) + 1).trim();
  return after === '' || after.startsWith('#') ? closing : index;
}

/** For each quote, for each line, the index of the next line holding that quote (-1: none). */
function nextLineHolding(lines: readonly string[]): Record<Quote, readonly number[]> {
  const table = (quote: Quote) => {
    const next = new Array<number>(lines.length);
    let found = -1;
    for (let i = lines.length - 1; i >= 0; i--) {
      next[i] = found;
      if (lines[i]!.includes(quote)) found = i;
    }
    return next;
  };
  return { '"': table('"'), "'": table("'"), '`': table('`') };
}

function ownValue(parsed: Record<string, string>, key: string): string | undefined {
  return Object.hasOwn(parsed, key) ? parsed[key] : undefined;
}
