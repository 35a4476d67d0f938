import { describe, expect, it } from 'vitest';
import { allowsModel, MAX_MODEL_PATTERNS, matchesPattern, modelPatterns } from './model-patterns.ts';

describe('matchesPattern', () => {
  it.each([
    ['dev/echo', 'dev/echo', true],
    ['dev/echo', 'dev/echo2', false],
    ['dev/echo', 'Dev/echo', false],
    ['dev/*', 'dev/echo', true],
    ['dev/*', 'dev/', true],
    ['dev/*', 'dev', false],
    ['dev/*', 'devil/echo', false],
    ['dev/*', 'openai/dev/echo', false],
    ['*', 'anything/at-all', true],
    ['*/gpt-4o', 'openai/gpt-4o', true],
    ['*/gpt-4o', 'openai/gpt-4o-mini', false],
    ['openai/gpt-4*', 'openai/gpt-4.1-mini', true],
    ['openai/gpt-4*', 'openai/gpt-5', false],
    ['openai/*-mini', 'openai/gpt-4.1-mini', true],
    ['openai/*-mini', 'openai/gpt-4.1', false],
    ['*a*b*', 'xaxbx', true],
    ['*a*b*', 'xbxax', false],
    ['a*a', 'a', false],
    ['a*a', 'aa', true],
    ['**', '', true],
    ['compat/llama3.1:8b', 'compat/llama3.1:8b', true],
    ['compat/llama3.1:8b', 'compat/llama3x1:8b', false],
  ])('%s against %s: %s', (pattern, model, expected) => {
    expect(matchesPattern(pattern, model)).toBe(expected);
  });

  it('many stars against a long id: parts are found in turn, never by backtracking', () => {
    expect(matchesPattern(`${'*a'.repeat(100)}b`, 'a'.repeat(10_000))).toBe(false);
  });
});

describe('allowsModel', () => {
  it('null allows every model', () => {
    expect(allowsModel(null, 'openai/gpt-5')).toBe(true);
  });

  it('a list allows the models one of its patterns matches, and no other', () => {
    const patterns = ['dev/*', 'openai/gpt-4o-mini'];
    expect(allowsModel(patterns, 'dev/image')).toBe(true);
    expect(allowsModel(patterns, 'openai/gpt-4o-mini')).toBe(true);
    expect(allowsModel(patterns, 'openai/gpt-4o')).toBe(false);
  });
});

describe('modelPatterns', () => {
  it('takes exact ids and * patterns, each kept once', () => {
    expect(modelPatterns.parse(['dev/*', 'openai/gpt-4o', 'dev/*', '*'])).toEqual([
      'dev/*',
      'openai/gpt-4o',
      '*',
    ]);
  });

  it.each([
    ['an empty list', []],
    ['an empty pattern', ['']],
    ['white space', ['dev/ echo']],
    ['a control character', ['dev/\u0000']],
    ['? as a wildcard', ['openai/gpt-4?']],
    ['a character class', ['openai/gpt-[45]']],
    ['braces', ['{dev,openai}/*']],
    ['negation', ['!dev/*']],
    ['a backslash', ['dev\\/*']],
    ['a pattern over 200 characters', [`dev/${'x'.repeat(197)}`]],
    ['more patterns than allowed', Array.from({ length: MAX_MODEL_PATTERNS + 1 }, (_, i) => `m/${i}`)],
  ])('refuses %s', (_label, patterns) => {
    expect(modelPatterns.safeParse(patterns).success).toBe(false);
  });

  it('takes as many patterns as allowed, each as long as allowed', () => {
    const patterns = Array.from({ length: MAX_MODEL_PATTERNS }, (_, i) => `m/${i}`.padEnd(200, 'x'));
    expect(modelPatterns.parse(patterns)).toHaveLength(MAX_MODEL_PATTERNS);
  });
});
