import { describe, expect, it } from 'vitest';
import { MemoryEventStore } from '../../shared/event-store/memory.ts';
import { PAGE_BYTES, readAuditPage } from './page.ts';

const metadata = { actor: 'system' };

async function logOf(sizes: number[]): Promise<MemoryEventStore> {
  const store = new MemoryEventStore();
  for (const [i, size] of sizes.entries())
    await store.append(`s-${i}`, [{ type: 'Noted', data: { text: 'x'.repeat(size) } }], { metadata });
  return store;
}

describe('an audit page', () => {
  it('holds `limit` events, then says where the next starts; null once the log is read to its end', async () => {
    const store = await logOf(Array.from({ length: 120 }, () => 10));
    const first = await readAuditPage(store, { after: 0, limit: 100 });
    expect(first.items.map((item) => item.position)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    expect(first.next_after).toBe(100);
    const last = await readAuditPage(store, { after: 100, limit: 100 });
    expect(last.items).toHaveLength(20);
    expect(last.next_after).toBeNull();
  });

  it(`stops once its events come to ${PAGE_BYTES / (1024 * 1024)} MiB, whatever the limit`, async () => {
    const big = PAGE_BYTES / 3;
    const store = await logOf([big, big, big, big, 10]);
    const first = await readAuditPage(store, { after: 0, limit: 1_000 });
    expect(first.items.map((item) => item.position)).toEqual([1, 2, 3]);
    expect(first.next_after).toBe(3);
    const rest = await readAuditPage(store, { after: 3, limit: 1_000 });
    expect(rest.items.map((item) => item.position)).toEqual([4, 5]);
    expect(rest.next_after).toBeNull();
  });

  it('holds one event larger than a page by itself', async () => {
    const store = await logOf([PAGE_BYTES + 1, 10]);
    const first = await readAuditPage(store, { after: 0, limit: 10 });
    expect(first.items.map((item) => item.position)).toEqual([1]);
    expect(first.next_after).toBe(1);
  });
});
