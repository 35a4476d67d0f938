import { LRUCache } from 'lru-cache';

/** Where cached answers live: this process's memory, or a Redis every gateway naming it shares. */
export interface CacheStore {
  readonly kind: 'memory' | 'redis';
  /** The value stored under `key`, unless it expired or was evicted. */
  get(key: string): Promise<string | undefined>;
  /** Keeps `value` under `key` for `ttlMs` at most. */
  set(key: string, value: string, ttlMs: number): Promise<void>;
  close(): Promise<void>;
}

/** The largest answer kept: a larger one is served, not stored (it would push out many others). */
export const MAX_ENTRY_BYTES = 4 * 1024 * 1024;

/** An LRU bounded by the bytes of its keys and values, whose entries also expire with their TTL. */
export function memoryCacheStore(options: { maxBytes: number; now?: () => number }): CacheStore {
  const entries = new LRUCache<string, string>({
    maxSize: options.maxBytes,
    maxEntrySize: Math.min(options.maxBytes, MAX_ENTRY_BYTES),
    sizeCalculation: (value, key) => Buffer.byteLength(value) + Buffer.byteLength(key),
    perf: { now: options.now ?? Date.now },
    // Read the clock at every lookup (the default reuses one reading for a while).
    ttlResolution: 0,
  });
  return {
    kind: 'memory',
    get: async (key) => entries.get(key),
    set: async (key, value, ttlMs) => {
      entries.set(key, value, { ttl: ttlMs });
    },
    close: async () => entries.clear(),
  };
}
