import { describe, expect, it } from 'vitest';
import { parseDotenv } from './dotenv-file.ts';

describe('parseDotenv', () => {
  it('reads plain, quoted, exported and commented lines', () => {
    const { entries, errors } = parseDotenv(
      ['# comment', 'A=1', 'export B="two words"', "C='single'", '', 'D=x # trailing comment'].join('\n'),
    );
    expect(errors).toEqual([]);
    expect(entries).toEqual([
      { key: 'A', value: '1' },
      { key: 'B', value: 'two words' },
      { key: 'C', value: 'single' },
      { key: 'D', value: 'x' },
    ]);
  });

  it('keeps multi-line quoted values and does not flag their inner lines', () => {
    const { entries, errors } = parseDotenv('KEY="line one\nline two"\nNEXT=1');
    expect(errors).toEqual([]);
    expect(entries).toEqual([
      { key: 'KEY', value: 'line one\nline two' },
      { key: 'NEXT', value: '1' },
    ]);
  });

  it('reports lines that are not assignments and keys that are not valid names, by line', () => {
    const { entries, errors } = parseDotenv('GOOD=1\nthis is not an assignment\nlower.case=2\nALSO_GOOD=3');
    expect(entries).toEqual([
      { key: 'GOOD', value: '1' },
      { key: 'ALSO_GOOD', value: '3' },
    ]);
    expect(errors).toEqual([
      { line: 2, message: 'not a KEY=value line' },
      { line: 3, message: expect.stringContaining('"lower.case" is not a valid key') },
    ]);
  });

  it('reports keys named like Object.prototype members as invalid, `__proto__` included', () => {
    const { entries, errors } = parseDotenv('__proto__=1\nconstructor=2\nGOOD=3');
    expect(entries).toEqual([{ key: 'GOOD', value: '3' }]);
    expect(errors).toEqual([
      { line: 1, message: expect.stringContaining('"__proto__" is not a valid key') },
      { line: 2, message: expect.stringContaining('"constructor" is not a valid key') },
    ]);
    expect(Object.getOwnPropertyNames(Object.prototype)).not.toContain('GOOD');
  });

  it('a quote never closed is a one-line value, and the lines after it are read as lines', () => {
    const { entries, errors } = parseDotenv('A="open\nB=2\nC=3');
    expect(errors).toEqual([]);
    expect(entries.map((e) => `${e.key}=${e.value}`)).toEqual(['A="open', 'B=2', 'C=3']);
  });

  it('reports a `KEY:value` line dotenv would drop silently (it wants a space after the colon)', () => {
    const { entries, errors } = parseDotenv('A:1\nB: 2');
    expect(entries).toEqual([{ key: 'B', value: '2' }]);
    expect(errors).toEqual([{ line: 1, message: 'not a KEY=value line' }]);
  });

  it('reads 100,000 blank lines and the assignment after them in one pass', { timeout: 5_000 }, () => {
    const { entries, errors } = parseDotenv(`${' \t\n'.repeat(100_000)}LAST=1`);
    expect(errors).toEqual([]);
    expect(entries).toEqual([{ key: 'LAST', value: '1' }]);
  });
});
