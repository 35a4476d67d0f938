import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeAgents, fromAddress } from '../accounts/support/from-address.ts';
import { adminOk, createStudio } from '../support/admin.ts';
import { expectApiError, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { reachableRedis, redisUnavailableReason } from '../support/redis.ts';

// The attack: one studio fills the response cache with large answers kept 30 days, so that a Redis
// under `maxmemory` with `allkeys-lru` evicts another studio's login counters and locked-out
// guessing starts again. Each Redis here is that carelessly configured, and small; the counters
// (REDIS_URL) and the cache (REDIS_CACHE_URL) are two servers, as docs/deploy.md says to run them.

// A Redis answering on 6379 says this machine has redis-server (CI requires it).
const skip = (await reachableRedis()) ? undefined : redisUnavailableReason;

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  return port;
}

/** A redis-server of its own: 2 MB at most, evicting any key to make room. */
async function smallRedis(): Promise<{ url: string; client: Redis; process: ChildProcess }> {
  const port = await freePort();
  const process = spawn(
    'redis-server',
    [
      ...['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      ...['--maxmemory', '2mb', '--maxmemory-policy', 'allkeys-lru'],
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let said = '';
  for await (const chunk of process.stdout!) {
    said += String(chunk);
    if (said.includes('Ready to accept connections')) break;
  }
  process.stdout!.resume();
  const client = new Redis({ port, host: '127.0.0.1' });
  return { url: `redis://127.0.0.1:${port}/0`, client, process };
}

describe.skipIf(skip !== undefined)(
  `the response cache cannot evict login counters ${skip ? `(not run: ${skip})` : ''}`,
  { timeout: 60_000 },
  () => {
    let counters: Awaited<ReturnType<typeof smallRedis>>;
    let cache: Awaited<ReturnType<typeof smallRedis>>;
    let gw: TestGateway;

    beforeAll(async () => {
      [counters, cache] = await Promise.all([smallRedis(), smallRedis()]);
      gw = await startTestGateway({
        store: 'memory',
        logLevel: 'silent',
        redisUrl: counters.url,
        redisCacheUrl: cache.url,
      });
      await createStudio(gw, 'victim');
      await adminOk(gw, 'POST', '/v1/accounts/create', {
        studio_id: 'victim',
        email: 'ada@example.com',
        password: 'correct horse battery staple',
      });
    });
    afterAll(async () => {
      await closeAgents();
      await gw?.close();
      for (const redis of [counters, cache]) {
        redis?.client.disconnect();
        redis?.process.kill();
      }
    });

    it("40 large cached answers of one studio leave another's lockout in place", async () => {
      const from = '127.0.2.7';
      const login = (password: string) =>
        fromAddress(from, `${gw.url}/v1/accounts/login`, {
          studio_id: 'victim',
          email: 'ada@example.com',
          password,
        });
      for (let i = 0; i < 5; i++) expect((await login(`guess-${i}`)).status).toBe(401);
      expectApiError(await login('correct horse battery staple'), 429, 'rate_limited');
      const countersBefore = await counters.client.dbsize();
      expect(countersBefore).toBeGreaterThan(0);

      await createStudio(gw, 'attacker');
      const attacker = (await adminOk(gw, 'POST', '/v1/studios/tokens/apply', { studio_id: 'attacker' })).json
        .user_token as string;
      await adminOk(gw, 'POST', '/v1/studios/settings', { studio_id: 'attacker', cache_ttl_s: 30 * 86_400 });
      for (let i = 0; i < 40; i++) {
        const res = await gw.api('POST', '/v1/ai/chat/completions', {
          token: attacker,
          body: { model: 'dev/echo', messages: [{ role: 'user', content: `${i} ${'x'.repeat(200_000)}` }] },
        });
        expect(res.status, res.text).toBe(200);
        expect(res.headers.get('x-studio-cache')).toBe('miss');
      }

      // The answers went to the cache's Redis, which made room among its own keys ...
      const memory = await cache.client.info('memory');
      expect(Number(/used_memory:(\d+)/.exec(memory)?.[1])).toBeLessThan(2 * 1024 * 1024);
      expect(Number(/evicted_keys:(\d+)/.exec(await cache.client.info('stats'))?.[1])).toBeGreaterThan(0);
      // ... and none to the counters': not one of them was evicted, and the guessing stays refused.
      expect(Number(/evicted_keys:(\d+)/.exec(await counters.client.info('stats'))?.[1])).toBe(0);
      expect(await counters.client.dbsize()).toBeGreaterThanOrEqual(countersBefore);
      expectApiError(await login('correct horse battery staple'), 429, 'rate_limited');
    });
  },
);
