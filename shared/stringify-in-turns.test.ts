import { describe, expect, it } from 'vitest';
import { stringifyInTurns } from './stringify-in-turns.ts';
import { loopCounter } from './testing/loop-counter.ts';

const rows = Array.from({ length: 1_234 }, (_, i) => ({
  id: `r${i}`,
  seq: i,
  note: i % 7 === 0 ? 'a "quoted" \u0000 \ud800 é' : null,
  attempts: i % 3 === 0 ? [{ model: 'm', status: 200 }] : [],
  gone: undefined,
}));

describe('stringifyInTurns', () => {
  it('writes, in parts, the text JSON.stringify writes', async () => {
    const values: unknown[] = [
      { rows, counted: [['s', 3]], seq: 1_234, skip: undefined, at: new Date(0) },
      rows,
      [],
      {},
      'text',
      12.5,
      null,
      [undefined, () => 1, 1],
      Object.assign(Object.create(null), { a: [1, 2, 3] }),
      { nested: { deeper: rows.slice(0, 600) } },
    ];
    for (const value of values)
      expect((await stringifyInTurns(value, 100)).join('')).toBe(JSON.stringify(value));
  });

  it('lets other work run between two slices of a long array', async () => {
    const loop = loopCounter();
    const slices = 12;
    const parts = await stringifyInTurns(
      Array.from({ length: slices * 100 }, (_, i) => i),
      100,
    );
    loop.stop();
    expect(JSON.parse(parts.join(''))).toHaveLength(slices * 100);
    expect(loop.now()).toBeGreaterThanOrEqual(slices - 1);
  });
});
