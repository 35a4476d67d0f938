import { describe, expect, it } from 'vitest';
import { orderTargets } from './pick.ts';

/** A seeded pseudo-random source (mulberry32): the same picks at every run. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const targets = [
  { model: 'a', weight: 1 },
  { model: 'b', weight: 3 },
  { model: 'c', weight: 6 },
];
const idle = { random: () => 0.5, inFlight: () => 0 };
const models = (order: { model: string }[]) => order.map((t) => t.model);

describe('orderTargets', () => {
  it('fallback: the targets as declared', () => {
    expect(models(orderTargets('fallback', targets, idle))).toEqual(['a', 'b', 'c']);
  });

  it('weighted: picks each target within 5 % of its weight over 10,000 picks', () => {
    const random = seeded(42);
    const picks = new Map<string, number>();
    const n = 10_000;
    for (let i = 0; i < n; i++) {
      const [first] = orderTargets('weighted', targets, { random, inFlight: () => 0 });
      picks.set(first!.model, (picks.get(first!.model) ?? 0) + 1);
    }
    for (const { model, weight } of targets) {
      const expected = (n * weight) / 10;
      expect(Math.abs((picks.get(model) ?? 0) - expected)).toBeLessThanOrEqual(expected * 0.05);
    }
  });

  it('weighted: every target once, the rest drawn by weight among those left', () => {
    // 0.05 of 10 falls on a; of the 9 left (b 3, c 6), 0.5 falls on c.
    const draws = [0.05, 0.5, 0.99];
    const order = orderTargets('weighted', targets, { random: () => draws.shift()!, inFlight: () => 0 });
    expect(models(order)).toEqual(['a', 'c', 'b']);
  });

  it('least_busy: fewest generations in flight first, ties as declared', () => {
    const busy = new Map([
      ['a', 2],
      ['b', 0],
      ['c', 1],
    ]);
    const order = orderTargets('least_busy', targets, { random: () => 0, inFlight: (m) => busy.get(m)! });
    expect(models(order)).toEqual(['b', 'c', 'a']);
    expect(models(orderTargets('least_busy', targets, idle))).toEqual(['a', 'b', 'c']);
  });
});
