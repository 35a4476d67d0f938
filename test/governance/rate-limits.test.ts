import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../../shared/testing/wait.ts';
import { adminOk } from '../support/admin.ts';
import { expectApiError, type TestGateway } from '../support/gateway.ts';
import {
  type CountingUpstream,
  countingUpstream,
  generate,
  newStudio,
  newToken,
  rateHeaders,
  startLimitedGateway,
} from './limited-gateway.ts';

// Rate limits on one gateway: requests and tokens per minute and generations at once, per studio
// and per token, refused with a 429 before any upstream call, and OpenAI's x-ratelimit-* headers on
// every answer where a limit is set.

let upstream: CountingUpstream;
let gw: TestGateway;

beforeAll(async () => {
  upstream = await countingUpstream();
  gw = await startLimitedGateway(upstream);
});
afterAll(async () => {
  upstream?.release();
  await gw?.close();
  await upstream?.close();
});
afterEach(() => upstream.reset());

const limit = (body: Record<string, unknown>) => adminOk(gw, 'POST', '/v1/studios/limits/set', body);

describe('requests per minute', () => {
  it('serves rpm generations in the minute; the next is a 429 with Retry-After, and never reaches the upstream', async () => {
    const { studioId, token } = await newStudio(gw);
    await limit({ studio_id: studioId, rpm: 3 });
    for (let i = 0; i < 3; i++) {
      const res = await generate(gw, token);
      expect(res.status).toBe(200);
      expect(res.headers.get('x-ratelimit-remaining-requests')).toBe(String(2 - i));
    }
    const refused = await generate(gw, token);
    const error = expectApiError(refused, 429, 'rate_limited');
    expect(error.type).toBe('rate_limit_error');
    expect(error.message).toContain(`studio ${studioId} allows 3 requests a minute`);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(rateHeaders(refused)).toMatchObject({
      'x-ratelimit-limit-requests': '3',
      'x-ratelimit-remaining-requests': '0',
    });
    expect(upstream.calls).toBe(3);
  });

  it('a refused generation does not count: raising the limit lets exactly the difference through', async () => {
    const { studioId, token } = await newStudio(gw);
    await limit({ studio_id: studioId, rpm: 1 });
    expect((await generate(gw, token)).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await generate(gw, token)).status).toBe(429);
    await limit({ studio_id: studioId, rpm: 3 });
    const next = await generate(gw, token);
    expect(next.status).toBe(200);
    expect(next.headers.get('x-ratelimit-remaining-requests')).toBe('1');
    expect((await generate(gw, token)).status).toBe(200);
    expect((await generate(gw, token)).status).toBe(429);
  });

  it("the studio's limit covers its tokens together; a token's own applies to it alone; headers describe the tighter", async () => {
    const { studioId, token, tokenId } = await newStudio(gw);
    const second = await newToken(gw, studioId);
    await limit({ studio_id: studioId, rpm: 5 });
    await limit({ studio_id: studioId, token_id: tokenId, rpm: 2 });

    const first = await generate(gw, token);
    expect(rateHeaders(first)).toMatchObject({
      'x-ratelimit-limit-requests': '2',
      'x-ratelimit-remaining-requests': '1',
    });
    expect((await generate(gw, token)).status).toBe(200);
    const own = expectApiError(await generate(gw, token), 429, 'rate_limited');
    expect(own.message).toContain(`token ${tokenId} allows 2 requests a minute`);

    // The other token has only the studio's limit: 3 of its 5 are left.
    const other = await generate(gw, second.token);
    expect(rateHeaders(other)).toMatchObject({
      'x-ratelimit-limit-requests': '5',
      'x-ratelimit-remaining-requests': '2',
    });
    expect((await generate(gw, second.token)).status).toBe(200);
    expect((await generate(gw, second.token)).status).toBe(200);
    const studio = expectApiError(await generate(gw, second.token), 429, 'rate_limited');
    expect(studio.message).toContain(`studio ${studioId} allows 5 requests a minute`);
    expect(upstream.calls).toBe(5);
  });

  it('removed limits no longer apply, and their headers go', async () => {
    const { studioId, token } = await newStudio(gw);
    await limit({ studio_id: studioId, rpm: 1 });
    expect((await generate(gw, token)).status).toBe(200);
    expect((await generate(gw, token)).status).toBe(429);
    await adminOk(gw, 'POST', '/v1/studios/limits/remove', { studio_id: studioId });
    const res = await generate(gw, token);
    expect(res.status).toBe(200);
    expect(rateHeaders(res)).toEqual({});
  });
});

describe('headers on every generation route', () => {
  it.each(['text', 'stream', 'chat', 'chat-stream'] as const)(
    '%s carries x-ratelimit-* for requests and tokens',
    async (route) => {
      const { studioId, token } = await newStudio(gw);
      await limit({ studio_id: studioId, rpm: 10, tpm: 1000 });
      const res = await generate(gw, token, route);
      expect(res.status).toBe(200);
      expect(rateHeaders(res)).toEqual({
        'x-ratelimit-limit-requests': '10',
        'x-ratelimit-remaining-requests': '9',
        'x-ratelimit-reset-requests': expect.stringMatching(/^(\d+(\.\d+)?s|1m0s|\d+ms)$/),
        'x-ratelimit-limit-tokens': '1000',
        'x-ratelimit-remaining-tokens': '1000',
        'x-ratelimit-reset-tokens': '0s',
      });
    },
  );

  it('an answer of a studio without limits carries none', async () => {
    const { token } = await newStudio(gw);
    expect(rateHeaders(await generate(gw, token))).toEqual({});
  });
});

describe('tokens per minute', () => {
  it('charges the tokens a generation used when it ends, and refuses once the minute has used them all', async () => {
    const { studioId, token } = await newStudio(gw);
    await limit({ studio_id: studioId, tpm: 40 });
    upstream.usage = { prompt_tokens: 15, completion_tokens: 10 };
    expect(rateHeaders(await generate(gw, token, 'chat'))).toMatchObject({
      'x-ratelimit-remaining-tokens': '40',
    });
    // A streamed answer is charged with the usage it reported too.
    const streamed = await generate(gw, token, 'chat-stream');
    expect(streamed.status).toBe(200);
    expect(streamed.headers.get('x-ratelimit-remaining-tokens')).toBe('15');
    const refused = await generate(gw, token, 'text');
    const error = expectApiError(refused, 429, 'rate_limited');
    expect(error.message).toContain(`studio ${studioId} allows 40 tokens a minute`);
    expect(rateHeaders(refused)).toMatchObject({
      'x-ratelimit-limit-tokens': '40',
      'x-ratelimit-remaining-tokens': '0',
    });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(upstream.calls).toBe(2);
  });
});

describe('generations at once', () => {
  it('max_concurrent=3: never 4 at the upstream; the others are refused at once with a 429', async () => {
    const { studioId, token } = await newStudio(gw);
    await limit({ studio_id: studioId, max_concurrent: 3 });
    upstream.hold();
    const answers = Array.from({ length: 12 }, (_, i) =>
      generate(gw, token, i % 2 === 0 ? 'chat-stream' : 'text'),
    );
    await waitUntil(() => upstream.inFlight === 3, 'three calls are held upstream');
    // The refused ones answer while the three are still held: refused at once, not queued.
    const refused: number[] = [];
    const settled = answers.map((a) => a.then((res) => (res.status === 429 ? refused.push(1) : 0)));
    await waitUntil(() => refused.length === 9, 'nine were refused');
    expect(upstream.inFlight).toBe(3);
    upstream.release();
    await Promise.all(settled);
    const statuses = (await Promise.all(answers)).map((r) => r.status).sort();
    expect(statuses).toEqual([...Array(3).fill(200), ...Array(9).fill(429)]);
    expect(upstream.maxInFlight).toBe(3);
    expect(upstream.calls).toBe(3);
    for (const res of await Promise.all(answers))
      if (res.status === 429) expect(res.headers.get('retry-after')).toBe('1');

    // The slots came back with the answers.
    const again = await Promise.all([generate(gw, token), generate(gw, token), generate(gw, token)]);
    expect(again.map((r) => r.status)).toEqual([200, 200, 200]);
  });

  it("a token's max_concurrent leaves the studio's other tokens free", async () => {
    const { studioId, token, tokenId } = await newStudio(gw);
    const other = await newToken(gw, studioId);
    await limit({ studio_id: studioId, token_id: tokenId, max_concurrent: 1 });
    upstream.hold();
    const first = generate(gw, token, 'chat-stream');
    await waitUntil(() => upstream.inFlight === 1, 'one call is held');
    expectApiError(await generate(gw, token), 429, 'rate_limited');
    const freed = generate(gw, other.token);
    await waitUntil(() => upstream.inFlight === 2, 'the other token reached the upstream');
    upstream.release();
    expect((await first).status).toBe(200);
    expect((await freed).status).toBe(200);
  });
});
