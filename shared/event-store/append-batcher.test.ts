import { describe, expect, it } from 'vitest';
import { AppendBatcher } from './append-batcher.ts';

const tick = () => new Promise((resolve) => setImmediate(resolve));

function gatedBatcher(options: { maxInFlight: number; maxItems?: number; maxWeight?: number }) {
  const batches: number[][] = [];
  const gates: (() => void)[] = [];
  const batcher = new AppendBatcher<number, number>(
    async (items) => {
      batches.push(items);
      await new Promise<void>((resolve) => gates.push(resolve));
      return items.map((n) => n * 10);
    },
    { maxItems: 100, maxWeight: 1_000, weight: (n) => n, ...options },
  );
  const openAll = () => {
    for (const open of gates.splice(0)) open();
  };
  return { batcher, batches, openAll };
}

describe('AppendBatcher', () => {
  it('commits what is submitted in one turn as one batch, each item getting its own result', async () => {
    const { batcher, batches, openAll } = gatedBatcher({ maxInFlight: 2 });
    const results = Promise.all([1, 2, 3].map((n) => batcher.submit(n)));
    await tick();
    expect(batches).toEqual([[1, 2, 3]]);
    openAll();
    expect(await results).toEqual([10, 20, 30]);
  });

  it('runs up to maxInFlight batches at once; the rest wait and go together in the next free one', async () => {
    const { batcher, batches, openAll } = gatedBatcher({ maxInFlight: 2 });
    const a = batcher.submit(1);
    await tick();
    const b = batcher.submit(2);
    await tick();
    const rest = [3, 4, 5].map((n) => batcher.submit(n));
    await tick();
    expect(batches).toEqual([[1], [2]]);
    expect(batcher.inFlight).toBe(2);
    openAll();
    await Promise.all([a, b]);
    await tick();
    expect(batches).toEqual([[1], [2], [3, 4, 5]]);
    openAll();
    expect(await Promise.all(rest)).toEqual([30, 40, 50]);
    expect(batcher.inFlight).toBe(0);
  });

  it('cuts batches at maxWeight and maxItems; an item heavier than maxWeight goes alone', async () => {
    const { batcher, batches, openAll } = gatedBatcher({ maxInFlight: 10, maxItems: 3, maxWeight: 10 });
    const all = Promise.all([4, 4, 4, 20, 1, 1, 1, 1].map((n) => batcher.submit(n)));
    await tick();
    expect(batches).toEqual([[4, 4], [4], [20], [1, 1, 1], [1]]);
    openAll();
    await all;
  });

  it('a failed batch fails its own items only', async () => {
    let calls = 0;
    const batcher = new AppendBatcher<string, string>(
      async (items) => {
        calls++;
        if (items.includes('bad')) throw new Error('boom');
        return items;
      },
      { maxInFlight: 1, maxItems: 2, maxWeight: 10, weight: () => 1 },
    );
    const outcomes = await Promise.allSettled(['bad', 'x', 'y'].map((item) => batcher.submit(item)));
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected', 'fulfilled']);
    expect(calls).toBe(2);
  });
});
