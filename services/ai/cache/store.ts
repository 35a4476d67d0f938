import { LRUCache } from 'lru-cache';

/** Whose an entry is, and how many bytes of entries it may hold. */
export interface CacheOwner {
  id: string;
  maxBytes: number;
}

/** Where cached answers live: this process's memory, or a Redis every gateway naming it shares. */
export interface CacheStore {
  readonly kind: 'memory' | 'redis';
  /** The value stored under `key`, unless it expired or was evicted. */
  get(key: string): Promise<string | undefined>;
  /**
   * Keeps `value` under `key` for `ttlMs` at most, counted against its owner's bytes: answers
   * false, storing nothing, when the owner's entries already hold `owner.maxBytes`.
   */
  set(key: string, value: string, ttlMs: number, owner: CacheOwner): Promise<boolean>;
  close(): Promise<void>;
}

/** The largest answer kept: a larger one is served, not stored (it would push out many others). */
export const MAX_ENTRY_BYTES = 4 * 1024 * 1024;

interface Entry {
  value: string;
  owner: string;
  size: number;
}

/**
 * An LRU bounded by the bytes of its keys and values, whose entries also expire with their TTL;
 * each owner's entries together hold at most its `maxBytes`, so one studio cannot push out the rest.
 */
export function memoryCacheStore(options: { maxBytes: number; now?: () => number }): CacheStore {
  const held = new Map<string, number>();
  const entries = new LRUCache<string, Entry>({
    maxSize: options.maxBytes,
    maxEntrySize: Math.min(options.maxBytes, MAX_ENTRY_BYTES),
    sizeCalculation: (entry) => entry.size,
    perf: { now: options.now ?? Date.now },
    // Read the clock at every lookup (the default reuses one reading for a while).
    ttlResolution: 0,
    // Expired entries leave at once, so that they stop counting against their owner.
    ttlAutopurge: true,
    dispose: (entry) => {
      const left = (held.get(entry.owner) ?? 0) - entry.size;
      if (left > 0) held.set(entry.owner, left);
      else held.delete(entry.owner);
    },
  });
  return {
    kind: 'memory',
    get: async (key) => entries.get(key)?.value,
    set: async (key, value, ttlMs, owner) => {
      const size = Buffer.byteLength(value) + Buffer.byteLength(key);
      const replaced = entries.peek(key);
      const before = (held.get(owner.id) ?? 0) - (replaced?.owner === owner.id ? replaced.size : 0);
      if (before + size > owner.maxBytes) return false;
      entries.set(key, { value, owner: owner.id, size }, { ttl: ttlMs });
      if (!entries.has(key)) return false; // larger than an entry may be
      held.set(owner.id, (held.get(owner.id) ?? 0) + size);
      return true;
    },
    close: async () => entries.clear(),
  };
}
