import type { Redis } from 'ioredis';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import { redactUrl } from '../event-store/open.ts';
import type { CounterStore } from './counters.ts';
import type { LeaseStore } from './leases.ts';

// One sorted set per key: member = lease id, score = when it runs out. Atomic in Redis, so no lock.
const ACQUIRE = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[4], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1`;

const RENEW = `
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1`;

function redisLeases(client: Redis): LeaseStore {
  const scripts = client as Redis & {
    studioLeaseAcquire(...args: (string | number)[]): Promise<number>;
    studioLeaseRenew(...args: (string | number)[]): Promise<number>;
  };
  client.defineCommand('studioLeaseAcquire', { numberOfKeys: 1, lua: ACQUIRE });
  client.defineCommand('studioLeaseRenew', { numberOfKeys: 1, lua: RENEW });
  return {
    async acquire(key, id, max, ttlMs) {
      const now = Date.now();
      return (await scripts.studioLeaseAcquire(key, now, id, max, now + ttlMs, ttlMs)) === 1;
    },
    async renew(key, id, ttlMs) {
      await scripts.studioLeaseRenew(key, id, Date.now() + ttlMs, ttlMs);
    },
    async release(key, id) {
      await client.zrem(key, id);
    },
  };
}

/**
 * Counters and leases in Redis (`REDIS_URL`), shared by every gateway that names the same
 * database. ioredis is loaded only here, when the configuration asks for Redis.
 */
export async function redisCounters(url: string): Promise<CounterStore> {
  const { Redis } = await import('ioredis');
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 2, connectTimeout: 5_000 });
  // Failures surface on the commands that meet them; the client reconnects by itself.
  let lastError: { code?: string; message: string } | undefined;
  client.on('error', (error: Error) => {
    lastError = error;
  });
  try {
    await client.connect();
  } catch (error) {
    client.disconnect();
    const cause: { code?: string; message: string } = lastError ?? (error as Error);
    throw new Error(`Redis at ${redactUrl(url)} cannot be reached (${cause.code ?? cause.message})`);
  }
  return {
    kind: 'redis',
    limiter: ({ name, points, durationS }) =>
      new RateLimiterRedis({ storeClient: client, keyPrefix: name, points, duration: durationS }),
    leases: redisLeases(client),
    async close() {
      await client.quit().catch(() => client.disconnect());
    },
  };
}
