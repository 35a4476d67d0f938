import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { studiosProjection } from '../../projections/studios.ts';
import { redisCacheStore } from '../../services/ai/cache/redis-store.ts';
import { waitUntil } from '../../shared/testing/wait.ts';
import { MODEL, newStudio, startGatewayPair } from '../governance/limited-gateway.ts';
import { adminOk } from '../support/admin.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { openAiMock, type WireMock } from '../support/mock-ai-upstreams.ts';
import { freshPostgresDatabase, postgresUnavailableReason } from '../support/postgres.ts';
import { reachableRedis, redisUnavailableReason } from '../support/redis.ts';

// Two gateways of one deployment (one PostgreSQL log; counters in one Redis database, the response
// cache in another): an answer one of them generated is a hit on the other, and never reaches the
// upstream again; a studio's answers are held to its quota.

const database = await freshPostgresDatabase();
const redisUrl = await reachableRedis();
/** The cache's own database: never the counters' (their eviction domains must not meet). */
const cacheUrl = redisUrl && Object.assign(new URL(redisUrl), { pathname: '/3' }).toString();
const skip = database ? (redisUrl ? undefined : redisUnavailableReason) : postgresUnavailableReason;

describe.skipIf(skip !== undefined)(
  `two gateways sharing a Redis ${skip ? `(not run: ${skip})` : ''}`,
  () => {
    let mock: WireMock;
    let a: TestGateway;
    let b: TestGateway;

    beforeAll(async () => {
      mock = await openAiMock();
      [a, b] = await startGatewayPair(
        { mock },
        { databaseUrl: database!.url, redisUrl, redisCacheUrl: cacheUrl },
      );
    });
    afterAll(async () => {
      await a?.close();
      await b?.close();
      await mock?.close();
      await database?.drop();
    });

    it('an answer generated through one is a hit on the other, streams included', async () => {
      const { studioId, token } = await newStudio(a);
      await adminOk(a, 'POST', '/v1/studios/settings', { studio_id: studioId, cache_ttl_s: 300 });
      // B learns of the setting from the log.
      await waitUntil(
        () => Boolean(b.running.ctx.projections.state(studiosProjection).get(studioId)?.cache_ttl_s),
        'B holds the setting',
      );
      const messages = [{ role: 'user', content: 'shared between gateways' }];
      const chat = (gw: TestGateway, stream = false) =>
        gw.api('POST', '/v1/ai/chat/completions', {
          token,
          body: {
            model: MODEL,
            messages,
            ...(stream ? { stream, stream_options: { include_usage: true } } : {}),
          },
        });

      const onA = await chat(a);
      const onB = await chat(b);
      expect([onA.status, onB.status]).toEqual([200, 200]);
      expect([onA.headers.get('x-studio-cache'), onB.headers.get('x-studio-cache')]).toEqual(['miss', 'hit']);
      expect(onB.json).toEqual({ ...onA.json, usage: { ...onA.json.usage, cached: true } });

      const streamedOnB = await chat(b, true);
      const streamedOnA = await chat(a, true);
      expect(streamedOnB.headers.get('x-studio-cache')).toBe('miss');
      expect(streamedOnA.headers.get('x-studio-cache')).toBe('hit');
      const withoutUsage = (text: string) => text.split('\n\n').filter((frame) => !frame.includes('"usage"'));
      expect(withoutUsage(streamedOnA.text)).toEqual(withoutUsage(streamedOnB.text));
      expect(streamedOnA.text).toContain('"cached":true');
      expect(streamedOnA.text.endsWith('data: [DONE]\n\n')).toBe(true);

      expect(mock.requests).toHaveLength(2);
      for (const gw of [a, b]) expect(gw.running.ctx.counters.kind).toBe('redis');
      const events = await a.running.ctx.events.readStream(`usage-${studioId}`);
      expect(events.map((e) => (e.data as { cached?: boolean }).cached ?? false)).toEqual([
        false,
        true,
        false,
        true,
      ]);
    });

    it("holds a studio's answers in Redis to its quota, in one step, whichever gateway stores them", async () => {
      const store = redisCacheStore(cacheUrl!);
      try {
        const owner = { id: `quota-${Date.now()}`, maxBytes: 800 };
        const key = (n: number) => `quota-test-${owner.id}-${n}`.padEnd(64, '0');
        expect(await store.set(key(1), 'a'.repeat(300), 60_000, owner)).toBe(true);
        expect(await store.set(key(2), 'b'.repeat(300), 60_000, owner)).toBe(true);
        expect(await store.set(key(3), 'c'.repeat(300), 60_000, owner)).toBe(false);
        expect(await store.get(key(3))).toBeUndefined();
        expect(await store.set(key(3), 'c'.repeat(300), 60_000, { ...owner, id: `${owner.id}-other` })).toBe(
          true,
        );
      } finally {
        await store.close();
      }
    });

    it('a gateway with counters in Redis but no REDIS_CACHE_URL says where its cache is, at start', async () => {
      const gw = await startTestGateway({ store: 'memory', logLevel: 'info', redisUrl });
      try {
        expect(gw.logs.some((line) => line.includes('set REDIS_CACHE_URL'))).toBe(true);
      } finally {
        await gw.close();
      }
    });
  },
);
