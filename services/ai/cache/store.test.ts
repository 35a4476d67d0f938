import { describe, expect, it } from 'vitest';
import { MAX_ENTRY_BYTES, memoryCacheStore } from './store.ts';

const key = (n: number) => n.toString(16).padStart(64, '0'); // as long as a SHA-256 key
const HOUR = 3_600_000;
const ANYONE = { id: 's', maxBytes: Number.POSITIVE_INFINITY };

describe('the memory store: an LRU bounded by bytes', () => {
  it('evicts the least recently used entries once keys and values pass maxBytes', async () => {
    // Each entry weighs 64 (key) + 300 (value) bytes: two fit in 800, three do not.
    const store = memoryCacheStore({ maxBytes: 800 });
    await store.set(key(1), 'a'.repeat(300), HOUR, ANYONE);
    await store.set(key(2), 'b'.repeat(300), HOUR, ANYONE);
    expect(await store.get(key(1))).toBe('a'.repeat(300)); // 1 is now the most recently used
    await store.set(key(3), 'c'.repeat(300), HOUR, ANYONE);
    expect(await store.get(key(2))).toBeUndefined();
    expect(await store.get(key(1))).toBe('a'.repeat(300));
    expect(await store.get(key(3))).toBe('c'.repeat(300));
  });

  it('weighs values in UTF-8 bytes, not characters', async () => {
    const store = memoryCacheStore({ maxBytes: 800 });
    // 150 characters of two bytes each: 364 bytes an entry, as above.
    await store.set(key(1), 'é'.repeat(150), HOUR, ANYONE);
    await store.set(key(2), 'é'.repeat(150), HOUR, ANYONE);
    await store.set(key(3), 'é'.repeat(150), HOUR, ANYONE);
    expect(await store.get(key(1))).toBeUndefined();
    expect(await store.get(key(3))).toBe('é'.repeat(150));
  });

  it('does not keep an entry larger than the whole store, nor one over the largest entry', async () => {
    const small = memoryCacheStore({ maxBytes: 800 });
    await small.set(key(1), 'a'.repeat(300), HOUR, ANYONE);
    await small.set(key(2), 'x'.repeat(1_000), HOUR, ANYONE);
    expect(await small.get(key(2))).toBeUndefined();
    expect(await small.get(key(1))).toBe('a'.repeat(300)); // nothing was evicted for it

    const large = memoryCacheStore({ maxBytes: 4 * MAX_ENTRY_BYTES });
    await large.set(key(1), 'x'.repeat(MAX_ENTRY_BYTES), HOUR, ANYONE);
    expect(await large.get(key(1))).toBeUndefined();
  });

  it('an entry expires with its own TTL, by the clock it is given', async () => {
    let now = 1_000_000;
    const store = memoryCacheStore({ maxBytes: 10_000, now: () => now });
    await store.set(key(1), 'short', 1_000, ANYONE);
    await store.set(key(2), 'long', 60_000, ANYONE);
    now += 1_000;
    expect(await store.get(key(1))).toBe('short');
    now += 1;
    expect(await store.get(key(1))).toBeUndefined();
    expect(await store.get(key(2))).toBe('long');
  });
});

describe('the memory store: a quota per owner', () => {
  it("refuses an owner's entry once its entries hold its quota, leaving the others' alone", async () => {
    const store = memoryCacheStore({ maxBytes: 10_000 });
    const greedy = { id: 'greedy', maxBytes: 800 };
    // 364 bytes an entry: two fit the quota, the third is refused, nothing evicted for it.
    expect(await store.set(key(1), 'a'.repeat(300), HOUR, greedy)).toBe(true);
    expect(await store.set(key(2), 'b'.repeat(300), HOUR, greedy)).toBe(true);
    expect(await store.set(key(3), 'c'.repeat(300), HOUR, greedy)).toBe(false);
    expect(await store.get(key(3))).toBeUndefined();
    expect(await store.set(key(4), 'd'.repeat(300), HOUR, { id: 'other', maxBytes: 800 })).toBe(true);
    // Replacing one's own entry counts it once.
    expect(await store.set(key(1), 'e'.repeat(300), HOUR, greedy)).toBe(true);
    expect(await store.get(key(1))).toBe('e'.repeat(300));
  });

  it('an expired entry stops counting against its owner', async () => {
    let now = 1_000_000;
    const store = memoryCacheStore({ maxBytes: 10_000, now: () => now });
    const owner = { id: 'o', maxBytes: 400 };
    expect(await store.set(key(1), 'a'.repeat(300), 1_000, owner)).toBe(true);
    expect(await store.set(key(2), 'b'.repeat(300), 1_000, owner)).toBe(false);
    now += 1_001;
    expect(await store.get(key(1))).toBeUndefined();
    expect(await store.set(key(2), 'b'.repeat(300), 1_000, owner)).toBe(true);
  });
});
