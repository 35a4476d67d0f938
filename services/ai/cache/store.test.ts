import { describe, expect, it } from 'vitest';
import { MAX_ENTRY_BYTES, memoryCacheStore } from './store.ts';

const key = (n: number) => n.toString(16).padStart(64, '0'); // as long as a SHA-256 key
const HOUR = 3_600_000;

describe('the memory store: an LRU bounded by bytes', () => {
  it('evicts the least recently used entries once keys and values pass maxBytes', async () => {
    // Each entry weighs 64 (key) + 300 (value) bytes: two fit in 800, three do not.
    const store = memoryCacheStore({ maxBytes: 800 });
    await store.set(key(1), 'a'.repeat(300), HOUR);
    await store.set(key(2), 'b'.repeat(300), HOUR);
    expect(await store.get(key(1))).toBe('a'.repeat(300)); // 1 is now the most recently used
    await store.set(key(3), 'c'.repeat(300), HOUR);
    expect(await store.get(key(2))).toBeUndefined();
    expect(await store.get(key(1))).toBe('a'.repeat(300));
    expect(await store.get(key(3))).toBe('c'.repeat(300));
  });

  it('weighs values in UTF-8 bytes, not characters', async () => {
    const store = memoryCacheStore({ maxBytes: 800 });
    // 150 characters of two bytes each: 364 bytes an entry, as above.
    await store.set(key(1), 'é'.repeat(150), HOUR);
    await store.set(key(2), 'é'.repeat(150), HOUR);
    await store.set(key(3), 'é'.repeat(150), HOUR);
    expect(await store.get(key(1))).toBeUndefined();
    expect(await store.get(key(3))).toBe('é'.repeat(150));
  });

  it('does not keep an entry larger than the whole store, nor one over the largest entry', async () => {
    const small = memoryCacheStore({ maxBytes: 800 });
    await small.set(key(1), 'a'.repeat(300), HOUR);
    await small.set(key(2), 'x'.repeat(1_000), HOUR);
    expect(await small.get(key(2))).toBeUndefined();
    expect(await small.get(key(1))).toBe('a'.repeat(300)); // nothing was evicted for it

    const large = memoryCacheStore({ maxBytes: 4 * MAX_ENTRY_BYTES });
    await large.set(key(1), 'x'.repeat(MAX_ENTRY_BYTES), HOUR);
    expect(await large.get(key(1))).toBeUndefined();
  });

  it('an entry expires with its own TTL, by the clock it is given', async () => {
    let now = 1_000_000;
    const store = memoryCacheStore({ maxBytes: 10_000, now: () => now });
    await store.set(key(1), 'short', 1_000);
    await store.set(key(2), 'long', 60_000);
    now += 1_000;
    expect(await store.get(key(1))).toBe('short');
    now += 1;
    expect(await store.get(key(1))).toBeUndefined();
    expect(await store.get(key(2))).toBe('long');
  });
});
