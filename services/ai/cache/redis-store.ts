import type { Redis } from 'ioredis';
import type { CacheStore } from './store.ts';

const KEY_PREFIX = 'studio:cache:';
const OWNER_PREFIX = 'studio:cache-bytes:';
/** A Redis that does not answer within this is a miss, not a request held up. */
const COMMAND_TIMEOUT_MS = 1_000;

/**
 * Stores an entry unless its owner's bytes would pass its quota, in one step: the owner's count
 * grows by the entry's size and lives as long as its longest-lived entry, so it only ever
 * overstates what the owner holds (entries that expired early still count until then).
 * KEYS: entry, owner's count. ARGV: value, size, quota, ttl ms. Answers 1 when stored.
 */
const SET_WITHIN_QUOTA = `
local used = tonumber(redis.call('GET', KEYS[2]) or '0')
if used + tonumber(ARGV[2]) > tonumber(ARGV[3]) then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[4])
redis.call('INCRBY', KEYS[2], ARGV[2])
if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[4]) then redis.call('PEXPIRE', KEYS[2], ARGV[4]) end
return 1
`;

/**
 * Answers in Redis (`REDIS_CACHE_URL`), shared by every gateway naming it; each expires with its
 * TTL, each studio's together hold at most its quota, and Redis's own `maxmemory` policy bounds the
 * rest. Never the Redis of the rate-limit and login counters: an eviction policy that makes room
 * for answers would evict counters too (docs/deploy.md). ioredis is loaded only when it is set.
 */
export function redisCacheStore(url: string): CacheStore {
  const connecting: Promise<Redis> = import('ioredis').then(({ Redis }) => {
    const client = new Redis(url, {
      maxRetriesPerRequest: 1,
      connectTimeout: 5_000,
      commandTimeout: COMMAND_TIMEOUT_MS,
    });
    // Failures surface on the commands that meet them; the client reconnects by itself.
    client.on('error', () => undefined);
    return client;
  });
  return {
    kind: 'redis',
    async get(key) {
      return (await (await connecting).get(KEY_PREFIX + key)) ?? undefined;
    },
    async set(key, value, ttlMs, owner) {
      const size = Buffer.byteLength(value) + Buffer.byteLength(key);
      const stored = await (await connecting).eval(
        SET_WITHIN_QUOTA,
        2,
        KEY_PREFIX + key,
        OWNER_PREFIX + owner.id,
        value,
        size,
        owner.maxBytes,
        ttlMs,
      );
      return stored === 1;
    },
    async close() {
      const client = await connecting;
      await client.quit().catch(() => client.disconnect());
    },
  };
}
