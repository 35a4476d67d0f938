import { describe, expect, it } from 'vitest';
import { MemoryEventStore } from './memory.ts';

const metadata = { actor: 'system' };

describe('MemoryEventStore reads', () => {
  it('gives every readAll the same frozen event, so a follower that mutates one throws', async () => {
    const store = new MemoryEventStore();
    await store.append('thing-1', [{ type: 'Thing', data: { nested: { list: [1] } } }], { metadata });
    const [first] = await store.readAll();
    const [second] = await store.readAll();
    expect(second).toBe(first);
    const data = first!.data as { nested: { list: number[] } };
    expect(() => data.nested.list.push(2)).toThrow(TypeError);
    expect(() => {
      (first!.metadata as { actor: string }).actor = 'mutated';
    }).toThrow(TypeError);
    expect((await store.readAll())[0]!.data).toEqual({ nested: { list: [1] } });
  });

  it('gives readStream copies of its own, which it may change', async () => {
    const store = new MemoryEventStore();
    await store.append('thing-1', [{ type: 'Thing', data: { list: [1] } }], { metadata });
    const [read] = await store.readStream('thing-1');
    (read!.data as { list: number[] }).list.push(2);
    expect(read!.data).toEqual({ list: [1, 2] });
    expect((await store.readAll())[0]!.data).toEqual({ list: [1] });
  });
});
