import { describe, expect, it } from 'vitest';
import { GroupCommit } from './group-commit.ts';

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('GroupCommit', () => {
  it('commits the first item at once and batches what arrives meanwhile', async () => {
    const batches: string[][] = [];
    const gate: { open?: () => void } = {};
    const group = new GroupCommit<string, string>(async (_key, items) => {
      batches.push(items);
      if (batches.length === 1) await new Promise<void>((resolve) => (gate.open = resolve));
      return items.map((item) => `${item}!`);
    });
    const first = group.submit('k', 'a');
    await tick();
    const rest = ['b', 'c', 'd'].map((item) => group.submit('k', item));
    await tick();
    expect(batches).toEqual([['a']]);
    gate.open?.();
    expect(await Promise.all([first, ...rest])).toEqual(['a!', 'b!', 'c!', 'd!']);
    expect(batches).toEqual([['a'], ['b', 'c', 'd']]);
    expect(group.busyKeys).toBe(0);
  });

  it('commits other keys alongside', async () => {
    let inFlight = 0;
    let most = 0;
    const group = new GroupCommit<number, number>(async (_key, items) => {
      inFlight++;
      most = Math.max(most, inFlight);
      await tick();
      inFlight--;
      return items;
    });
    await Promise.all(['x', 'y', 'z'].map((key) => group.submit(key, 1)));
    expect(most).toBe(3);
  });

  it('fails every item of a failed batch, and goes on with the next', async () => {
    let calls = 0;
    const group = new GroupCommit<string, string>(async (_key, items) => {
      calls++;
      await tick();
      if (calls === 1) throw new Error('store down');
      return items;
    });
    const failed = group.submit('k', 'a');
    await tick();
    const later = group.submit('k', 'b');
    await expect(failed).rejects.toThrow('store down');
    await expect(later).resolves.toBe('b');
  });

  it('caps a batch at maxBatch items', async () => {
    const sizes: number[] = [];
    const group = new GroupCommit<number, number>(async (_key, items) => {
      sizes.push(items.length);
      await tick();
      return items;
    }, 2);
    await Promise.all([1, 2, 3, 4, 5, 6].map((n) => group.submit('k', n)));
    expect(sizes).toEqual([2, 2, 2]);
  });

  it('commits what is submitted in one turn of the event loop together, the first item included', async () => {
    // A commit that blocks the thread (an embedded store) lets nothing else be submitted while it
    // runs: callers that arrive in one turn must find each other before the first commit starts.
    const batches: string[][] = [];
    const group = new GroupCommit<string, string>(async (_key, items) => {
      batches.push(items);
      return items;
    });
    const first = group.submit('k', 'a');
    const others = ['b', 'c'].map((item) => group.submit('k', item));
    expect(batches).toEqual([]);
    await Promise.all([first, ...others]);
    expect(batches).toEqual([['a', 'b', 'c']]);
  });
});
