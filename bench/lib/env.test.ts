import { afterEach, describe, expect, it } from 'vitest';
import { listFromEnv, positiveFromEnv, switchFromEnv } from './env.ts';

const NAME = 'BENCH_ENV_TEST_VARIABLE';

afterEach(() => {
  delete process.env[NAME];
});

describe('switchFromEnv', () => {
  it('is off when unset or blank, on at 1, off at 0', () => {
    expect(switchFromEnv(NAME)).toBe(false);
    process.env[NAME] = '  ';
    expect(switchFromEnv(NAME)).toBe(false);
    process.env[NAME] = '1';
    expect(switchFromEnv(NAME)).toBe(true);
    process.env[NAME] = '0';
    expect(switchFromEnv(NAME)).toBe(false);
  });

  it.each(['true', 'yes', 'on', '2', ' 1'])('stops at %j, naming the variable', (value) => {
    process.env[NAME] = value;
    expect(() => switchFromEnv(NAME)).toThrow(`${NAME} must be 1 or 0 (or unset), not "${value}"`);
  });
});

describe('positiveFromEnv', () => {
  it('reads a positive number, and nothing when unset', () => {
    expect(positiveFromEnv(NAME)).toBeUndefined();
    process.env[NAME] = '2.5';
    expect(positiveFromEnv(NAME)).toBe(2.5);
  });

  it('stops at a number that is not what was asked', () => {
    process.env[NAME] = '2.5';
    expect(() => positiveFromEnv(NAME, { integer: true })).toThrow(`${NAME} must be a positive whole number`);
    process.env[NAME] = '-1';
    expect(() => positiveFromEnv(NAME)).toThrow(`${NAME} must be a positive number, not "-1"`);
  });
});

describe('listFromEnv', () => {
  const KINDS = ['memory', 'sqlite', 'postgres'] as const;

  it('gives the choices named, or the fallback when unset', () => {
    expect(listFromEnv(NAME, KINDS, ['memory'])).toEqual(['memory']);
    process.env[NAME] = 'sqlite, postgres';
    expect(listFromEnv(NAME, KINDS, ['memory'])).toEqual(['sqlite', 'postgres']);
  });

  it('stops at a choice it does not know, naming it', () => {
    process.env[NAME] = 'sqlite,sqlit';
    expect(() => listFromEnv(NAME, KINDS, [])).toThrow(
      `${NAME}: unknown "sqlit"; one or more of memory,sqlite,postgres`,
    );
  });
});
