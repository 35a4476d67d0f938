import { parse } from 'dotenv';
import { ENV_KEY_PATTERN } from './env.ts';

export interface ParsedDotenv {
  entries: { key: string; value: string }[];
  errors: { line: number; message: string }[];
}

const ASSIGNMENT = /^\s*(?:export\s+)?([^\s=:#]+)\s*[=:]/;

/**
 * Parses a .env file with dotenv, and reports by line what it could not take: lines that are not
 * assignments (dotenv ignores them silently) and keys that are not valid variable names.
 */
export function parseDotenv(content: string): ParsedDotenv {
  const values = parse(content);
  const errors: ParsedDotenv['errors'] = [];
  const keyLines = new Map<string, number>();
  const lines = content.split(/\r?\n/);
  let openQuote: string | undefined;

  lines.forEach((text, index) => {
    const line = index + 1;
    if (openQuote) {
      // Inside a multi-line quoted value: wait for its closing quote.
      if (text.includes(openQuote)) openQuote = undefined;
      return;
    }
    const trimmed = text.trim();
    if (trimmed === '' || trimmed.startsWith('#')) return;
    const match = ASSIGNMENT.exec(text);
    if (!match) {
      errors.push({ line, message: 'not a KEY=value line' });
      return;
    }
    const key = match[1]!;
    keyLines.set(key, line);
    const rest = text.slice(match[0].length).trimStart();
    const quote = rest[0];
    if ((quote === '"' || quote === "'" || quote === '`') && !rest.slice(1).includes(quote))
      openQuote = quote;
  });

  const invalid = (key: string) => ({
    line: keyLines.get(key) ?? 0,
    message: `"${key}" is not a valid key (A-Z, 0-9 and _, not starting with a digit)`,
  });
  const entries: ParsedDotenv['entries'] = [];
  for (const [key, value] of Object.entries(values)) {
    if (ENV_KEY_PATTERN.test(key)) entries.push({ key, value });
    else errors.push(invalid(key));
  }
  // dotenv assigns into a plain object, where a `__proto__=` line leaves no key: it is reported too.
  for (const key of keyLines.keys()) {
    if (!Object.hasOwn(values, key) && !ENV_KEY_PATTERN.test(key)) errors.push(invalid(key));
  }
  errors.sort((a, b) => a.line - b.line);
  return { entries, errors };
}
