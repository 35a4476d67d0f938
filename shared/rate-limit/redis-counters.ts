import type { Redis } from 'ioredis';
import { redactUrl } from '../event-store/redact.ts';
import type { AdmissionStore } from './admissions.ts';
import type { CounterStore } from './counters.ts';

// Counts as an integer that expires with its window; slots as
// one sorted set per key (member: lease id; score: when it runs out). Each script runs atomically.
// KEYS: the request keys, the token keys, the slot keys. ARGV: how many of each, now, the window,
// the lease id, the lease's length, then the request limits, token limits and slot maxima.
const ADMIT = `
local nr, nt, ns = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local now, window, lease, leaseMs = tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6], tonumber(ARGV[7])
local function count(key)
  local used = tonumber(redis.call('GET', key) or '0')
  local ttl = redis.call('PTTL', key)
  if ttl < 0 then ttl = 0 end
  return used, ttl
end
local answer, refused = {0}, false
for i = 1, nr + nt do
  local used, ttl = count(KEYS[i])
  local limit = tonumber(ARGV[7 + i])
  if i <= nr then refused = refused or used + 1 > limit else refused = refused or used >= limit end
  answer[#answer + 1] = used
  answer[#answer + 1] = ttl
end
for i = nr + nt + 1, nr + nt + ns do
  local full = 0
  if not refused then
    redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now)
    if redis.call('ZCARD', KEYS[i]) >= tonumber(ARGV[7 + i]) then full = 1 end
  end
  if full == 1 then refused = true end
  answer[#answer + 1] = full
end
if refused then return answer end
answer[1] = 1
for i = 1, nr do
  local used = redis.call('INCR', KEYS[i])
  if redis.call('PTTL', KEYS[i]) < 0 then redis.call('PEXPIRE', KEYS[i], window) end
  answer[2 * i] = used
  answer[2 * i + 1] = redis.call('PTTL', KEYS[i])
end
for i = nr + nt + 1, nr + nt + ns do
  redis.call('ZADD', KEYS[i], now + leaseMs, lease)
  redis.call('PEXPIRE', KEYS[i], leaseMs)
end
return answer`;

// KEYS: the slot keys, then the token keys. ARGV: how many slot keys, the lease id, the window,
// then each token key's charge (a count never goes below 0).
const SETTLE = `
local ns, lease, window = tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3])
for i = 1, ns do redis.call('ZREM', KEYS[i], lease) end
for i = ns + 1, #KEYS do
  if redis.call('INCRBY', KEYS[i], ARGV[3 + i - ns]) < 0 then redis.call('SET', KEYS[i], 0, 'KEEPTTL') end
  if redis.call('PTTL', KEYS[i]) < 0 then redis.call('PEXPIRE', KEYS[i], window) end
end
return 0`;

const RENEW = `
for i = 1, #KEYS do
  if redis.call('ZSCORE', KEYS[i], ARGV[1]) then
    redis.call('ZADD', KEYS[i], ARGV[2], ARGV[1])
    redis.call('PEXPIRE', KEYS[i], ARGV[3])
  end
end
return 0`;

type Script = (...args: (string | number)[]) => Promise<unknown>;

function redisAdmissions(client: Redis): AdmissionStore {
  client.defineCommand('studioRateAdmit', { lua: ADMIT });
  client.defineCommand('studioRateSettle', { lua: SETTLE });
  client.defineCommand('studioRateRenew', { lua: RENEW });
  const scripts = client as Redis & {
    studioRateAdmit: Script;
    studioRateSettle: Script;
    studioRateRenew: Script;
  };
  return {
    async admit(ask) {
      const now = Date.now();
      const keys = [...ask.requests, ...ask.tokens, ...ask.slots].map((k) => k.key);
      const args = [
        ask.requests.length,
        ask.tokens.length,
        ask.slots.length,
        now,
        ask.windowMs,
        ask.leaseId,
        ask.leaseMs,
        ...ask.requests.map((r) => r.limit),
        ...ask.tokens.map((t) => t.limit),
        ...ask.slots.map((s) => s.max),
      ];
      const answer = (await scripts.studioRateAdmit(keys.length, ...keys, ...args)) as number[];
      const countAt = (i: number) => ({ used: answer[1 + 2 * i]!, resetMs: answer[2 + 2 * i]! });
      const counted = ask.requests.length + ask.tokens.length;
      return {
        admitted: answer[0] === 1,
        requests: ask.requests.map((_, i) => countAt(i)),
        tokens: ask.tokens.map((_, i) => countAt(ask.requests.length + i)),
        full: ask.slots.map((_, i) => answer[1 + 2 * counted + i] === 1),
      };
    },
    async settle(done) {
      const keys = [...done.slots, ...done.tokens.map((t) => t.key)];
      const charges = done.tokens.map((t) => t.charge);
      await scripts.studioRateSettle(
        keys.length,
        ...keys,
        done.slots.length,
        done.leaseId,
        done.windowMs,
        ...charges,
      );
    },
    async renew(slots, leaseId, leaseMs) {
      if (slots.length === 0) return;
      await scripts.studioRateRenew(slots.length, ...slots, leaseId, Date.now() + leaseMs, leaseMs);
    },
  };
}

/**
 * Counters and slots in Redis (`REDIS_URL`), shared by every gateway that names the same
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
    admissions: redisAdmissions(client),
    async close() {
      await client.quit().catch(() => client.disconnect());
    },
  };
}
