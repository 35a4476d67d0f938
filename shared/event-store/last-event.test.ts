import { describe, expect, it } from 'vitest';
import { lastEventOf } from './last-event.ts';
import { MemoryEventStore } from './memory.ts';
import type { ReadStreamOptions } from './types.ts';

const metadata = { actor: 'system' };

describe('lastEventOf', () => {
  it('finds the last event of streams of every length, reading a few events only', async () => {
    const store = new MemoryEventStore();
    for (const length of [1, 2, 3, 7, 64, 100]) {
      const stream = `s-${length}`;
      for (let i = 0; i < length; i++) await store.append(stream, [{ type: 'T', data: { i } }], { metadata });
      const reads: ReadStreamOptions[] = [];
      const readStream = store.readStream.bind(store);
      const counting = Object.assign(Object.create(store), {
        readStream: (id: string, options?: ReadStreamOptions) => {
          reads.push(options ?? {});
          return readStream(id, options);
        },
      });
      const last = await lastEventOf(counting, stream);
      expect(last?.revision).toBe(length - 1);
      expect(last?.data).toEqual({ i: length - 1 });
      expect(reads.every((r) => r.limit === 1)).toBe(true);
      expect(reads.length).toBeLessThanOrEqual(2 * Math.ceil(Math.log2(length + 1)) + 2);
    }
  });

  it('is undefined for a stream without events', async () => {
    expect(await lastEventOf(new MemoryEventStore(), 'nothing-here')).toBeUndefined();
  });
});
