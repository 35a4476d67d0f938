import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { limitsProjection } from '../../services/ai/rate-limits/read-model.ts';
import { waitUntil } from '../../shared/testing/wait.ts';
import { adminOk } from '../support/admin.ts';
import { expectApiError, type TestGateway } from '../support/gateway.ts';
import { freshPostgresDatabase, postgresUnavailableReason } from '../support/postgres.ts';
import { reachableRedis, redisUnavailableReason } from '../support/redis.ts';
import {
  type CountingUpstream,
  countingUpstream,
  generate,
  newStudio,
  startGatewayPair,
} from './limited-gateway.ts';

// Two gateways on one PostgreSQL database count against the same limits: a deployment of N
// gateways does not allow N times as much. Counters in PostgreSQL, or in Redis with REDIS_URL.

const database = await freshPostgresDatabase();
const redisUrl = await reachableRedis();

const SETUPS = [
  { counters: 'PostgreSQL', redisUrl: undefined, skip: database ? undefined : postgresUnavailableReason },
  {
    counters: 'Redis',
    redisUrl,
    skip: database ? (redisUrl ? undefined : redisUnavailableReason) : postgresUnavailableReason,
  },
];

afterAll(async () => {
  await database?.drop();
});

describe.each(SETUPS)('two gateways, counters in $counters', ({ counters, redisUrl, skip }) => {
  const run = skip ? it.skip : it;
  let upstream: CountingUpstream;
  let a: TestGateway;
  let b: TestGateway;

  beforeAll(async () => {
    if (skip) return console.warn(`[test] not run (${counters}): ${skip}`);
    upstream = await countingUpstream();
    // One deployment: one database, one master key; each gateway its own process state.
    [a, b] = await startGatewayPair(upstream, { databaseUrl: database!.url, redisUrl });
  });
  afterAll(async () => {
    upstream?.release();
    await a?.close();
    await b?.close();
    await upstream?.close();
  });
  afterEach(() => upstream?.reset());

  run(
    'rpm=10 through both: 10 served in the minute, the 11th is a 429 with Retry-After, no upstream call for it',
    async () => {
      for (const gw of [a, b]) expect(gw.running.ctx.counters.kind).toBe(redisUrl ? 'redis' : 'postgres');
      const { studioId, token } = await newStudio(a);
      await adminOk(a, 'POST', '/v1/studios/limits/set', { studio_id: studioId, rpm: 10 });
      // B learns of the limit from the log.
      await waitUntil(
        () => b.running.ctx.projections.state(limitsProjection).has(studioId),
        'B holds the limit',
      );

      const served = [];
      for (let i = 0; i < 10; i++) served.push((await generate(i % 2 === 0 ? a : b, token)).status);
      expect(served).toEqual(Array(10).fill(200));
      for (const gw of [a, b]) {
        const refused = await generate(gw, token);
        expectApiError(refused, 429, 'rate_limited');
        expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
        expect(refused.headers.get('x-ratelimit-remaining-requests')).toBe('0');
      }
      expect(upstream.calls).toBe(10);
    },
  );

  run('rpm=10 with 30 racing through both at once: exactly 10 served', async () => {
    const { studioId, token } = await newStudio(a);
    await adminOk(a, 'POST', '/v1/studios/limits/set', { studio_id: studioId, rpm: 10 });
    await waitUntil(
      () => b.running.ctx.projections.state(limitsProjection).has(studioId),
      'B holds the limit',
    );
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => generate(i % 2 === 0 ? a : b, token)),
    );
    expect(answers.filter((r) => r.status === 200)).toHaveLength(10);
    expect(answers.filter((r) => r.status === 429)).toHaveLength(20);
    expect(upstream.calls).toBe(10);
  });

  run('max_concurrent=3 through both: never 4 at the upstream', async () => {
    const { studioId, token } = await newStudio(a);
    await adminOk(a, 'POST', '/v1/studios/limits/set', { studio_id: studioId, max_concurrent: 3 });
    await waitUntil(
      () => b.running.ctx.projections.state(limitsProjection).has(studioId),
      'B holds the limit',
    );
    upstream.hold();
    const answers = Array.from({ length: 12 }, (_, i) => generate(i % 2 === 0 ? a : b, token, 'chat-stream'));
    await waitUntil(() => upstream.inFlight === 3, 'three calls are held upstream');
    let refused = 0;
    const settled = answers.map((p) => p.then((res) => (res.status === 429 ? refused++ : 0)));
    await waitUntil(() => refused === 9, 'nine were refused');
    upstream.release();
    await Promise.all(settled);
    const statuses = (await Promise.all(answers)).map((r) => r.status).sort();
    expect(statuses).toEqual([...Array(3).fill(200), ...Array(9).fill(429)]);
    expect(upstream.maxInFlight).toBe(3);
    // The slots came back, whichever gateway held them.
    const again = await Promise.all([generate(b, token), generate(a, token), generate(b, token)]);
    expect(again.map((r) => r.status)).toEqual([200, 200, 200]);
  });
});
