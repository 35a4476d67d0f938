import { describe, expect, it } from 'vitest';
import { BoundedLabel, LabelChildren, OTHER } from './bounded-label.ts';

describe('BoundedLabel', () => {
  it('keeps the first values up to its limit; any later one is `other`, a kept one stays kept', () => {
    const label = new BoundedLabel(2);
    expect(['a', 'b', 'c', 'a', 'd', 'b'].map((v) => label.of(v))).toEqual([
      'a',
      'b',
      OTHER,
      'a',
      OTHER,
      'b',
    ]);
  });
});

describe('LabelChildren', () => {
  it('resolves each distinct set of values once', () => {
    const resolved: string[] = [];
    const children = new LabelChildren((...values: string[]) => {
      resolved.push(values.join(','));
      return { values };
    });
    expect(children.get('a', 'b')).toBe(children.get('a', 'b'));
    expect(children.get('a', 'c')).not.toBe(children.get('a', 'b'));
    // Joined with a separator no label holds: ('a', 'bc') is not ('ab', 'c').
    expect(children.get('ab', 'c')).not.toBe(children.get('a', 'bc'));
    expect(resolved).toEqual(['a,b', 'a,c', 'ab,c', 'a,bc']);
  });
});
