import type { Redis } from 'ioredis';
import type { CacheStore } from './store.ts';

const KEY_PREFIX = 'studio:cache:';
/** A Redis that does not answer within this is a miss, not a request held up. */
const COMMAND_TIMEOUT_MS = 1_000;

/**
 * Answers in Redis (`REDIS_URL`), shared by every gateway naming it; each expires with its TTL
 * (Redis's own `maxmemory` policy bounds the rest). ioredis is loaded only when REDIS_URL is set.
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
    async set(key, value, ttlMs) {
      await (await connecting).set(KEY_PREFIX + key, value, 'PX', ttlMs);
    },
    async close() {
      const client = await connecting;
      await client.quit().catch(() => client.disconnect());
    },
  };
}
