import { redisCacheStore } from './redis-store.ts';
import { type CacheStore, memoryCacheStore } from './store.ts';

export interface CacheStoreOptions {
  /** Bytes of answers kept in memory (`STUDIO_CACHE_MAX_BYTES`); the least recently used go first. */
  maxBytes?: number;
  /** Bytes of answers one studio may hold, in memory or in Redis (`STUDIO_CACHE_MAX_BYTES_PER_STUDIO`). */
  studioMaxBytes?: number;
  /** Answers in Redis instead, shared by every gateway (`REDIS_CACHE_URL`). */
  redisUrl?: string | undefined;
  /** The clock entries age by (tests). */
  now?: () => number;
}

export const DEFAULT_CACHE_MAX_BYTES = 64 * 1024 * 1024;
export const DEFAULT_CACHE_STUDIO_MAX_BYTES = 16 * 1024 * 1024;

/** Redis when `REDIS_CACHE_URL` is set (shared by every gateway naming it), else this process's memory. */
export function openCacheStore(options: CacheStoreOptions = {}): CacheStore {
  return options.redisUrl
    ? redisCacheStore(options.redisUrl)
    : memoryCacheStore({
        maxBytes: options.maxBytes ?? DEFAULT_CACHE_MAX_BYTES,
        ...(options.now ? { now: options.now } : {}),
      });
}
