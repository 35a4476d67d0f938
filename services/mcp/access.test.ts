import { describe, expect, it } from 'vitest';
import { allowsTool, mayReach } from './access.ts';

describe('allowsTool', () => {
  it('matches namespaced names exactly or by * patterns; no list, or an empty one, allows nothing', () => {
    expect(allowsTool(['files__read_text_file'], 'files__read_text_file')).toBe(true);
    expect(allowsTool(['files__read_text_file'], 'files__write_file')).toBe(false);
    expect(allowsTool(['files__*'], 'files__write_file')).toBe(true);
    expect(allowsTool(['files__*'], 'filesystem__read')).toBe(false);
    expect(allowsTool(['*'], 'web__memo://note')).toBe(true);
    expect(allowsTool(['*__echo'], 'web__echo')).toBe(true);
    expect(allowsTool([], 'web__echo')).toBe(false);
    expect(allowsTool(undefined, 'web__echo')).toBe(false);
  });

  it('tells which servers a token could reach at all', () => {
    expect(mayReach(['files__read_text_file'], 'files')).toBe(true);
    expect(mayReach(['files__read_text_file'], 'web')).toBe(false);
    expect(mayReach(['*'], 'web')).toBe(true);
    expect(mayReach(['w*'], 'web')).toBe(true);
    expect(mayReach(['web__*'], 'web')).toBe(true);
    expect(mayReach(['web__*'], 'webs')).toBe(false);
    expect(mayReach(['*__echo'], 'files')).toBe(true);
    expect(mayReach([], 'web')).toBe(false);
    expect(mayReach(undefined, 'web')).toBe(false);
  });
});
