import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { GenerationData } from '../../services/ai/usage/events.ts';
import { MAX_CACHE_TTL_S } from '../../services/studios/settings.ts';
import { MODEL, newStudio, startLimitedGateway } from '../governance/limited-gateway.ts';
import { usageLog } from '../governance/support.ts';
import { adminOk } from '../support/admin.ts';
import { type ApiResponse, expectApiError, type TestGateway } from '../support/gateway.ts';
import { openAiMock, type WireMock } from '../support/mock-ai-upstreams.ts';

// The response cache over real HTTP: hits answer without going upstream (the mock counts every
// request), cost nothing, and replay streams frame for frame; a studio's answers are its own.

let mock: WireMock;
let gw: TestGateway;
/** The clock the cache ages its entries by: tests move it instead of waiting. */
let now = Date.UTC(2026, 0, 1);

beforeAll(async () => {
  mock = await openAiMock();
  gw = await startLimitedGateway({ mock }, { ai: { cache: { now: () => now } } });
});
afterAll(async () => {
  await gw?.close();
  await mock?.close();
});
afterEach(() => mock.reset());

type Route = 'text' | 'stream' | 'chat' | 'chat-stream';

function ask(
  token: string,
  route: Route,
  options: { prompt?: string; header?: string; extra?: Record<string, unknown> } = {},
): Promise<ApiResponse> {
  const { prompt = 'hello there', header, extra = {} } = options;
  const headers: Record<string, string> = header === undefined ? {} : { 'x-studio-cache': header };
  const messages = [{ role: 'user', content: prompt }];
  const request = (path: string, body: unknown) => gw.api('POST', path, { token, body, headers });
  switch (route) {
    case 'text':
      return request('/v1/ai/text', { model: MODEL, prompt, ...extra });
    case 'stream':
      return request('/v1/ai/stream', { model: MODEL, prompt, ...extra });
    case 'chat':
      return request('/v1/ai/chat/completions', { model: MODEL, messages, ...extra });
    case 'chat-stream':
      return request('/v1/ai/chat/completions', {
        model: MODEL,
        messages,
        stream: true,
        stream_options: { include_usage: true },
        ...extra,
      });
  }
}

const cacheHeader = (res: ApiResponse) => res.headers.get('x-studio-cache');

/** A studio whose answers are cached for `ttl` seconds (created so), and a token of it. */
async function cachedStudio(ttl = 300) {
  const studio = await newStudio(gw);
  await adminOk(gw, 'POST', '/v1/studios/settings', { studio_id: studio.studioId, cache_ttl_s: ttl });
  return studio;
}

async function generations(studioId: string): Promise<{ type: string; data: GenerationData }[]> {
  const events = await gw.running.ctx.events.readStream(`usage-${studioId}`);
  return events.map((e) => ({ type: e.type, data: e.data as GenerationData }));
}

/** The frames of an SSE body, in order. */
const framesOf = (res: ApiResponse) => res.text.split('\n\n').filter((frame) => frame !== '');

describe('studio settings', () => {
  it('cache_ttl_s is set at creation or by studios/settings, shown on the studio, and checked', async () => {
    const created = await adminOk(gw, 'POST', '/v1/studios/create', { name: 'cached', cache_ttl_s: 120 });
    expect(created.json.cache_ttl_s).toBe(120);
    const id = created.json.id;
    const changed = await adminOk(gw, 'POST', '/v1/studios/settings', { studio_id: id, cache_ttl_s: 0 });
    expect(changed.json).toMatchObject({ id, cache_ttl_s: 0, version: 1 });
    const same = await adminOk(gw, 'POST', '/v1/studios/settings', { studio_id: id, cache_ttl_s: 0 });
    expect(same.json.version).toBe(1);
    const plain = await adminOk(gw, 'POST', '/v1/studios/create', { name: 'plain' });
    expect(plain.json.cache_ttl_s).toBe(0);

    const settings = (body: unknown) => gw.api('POST', '/v1/studios/settings', { token: gw.adminKey, body });
    for (const cache_ttl_s of [-1, 1.5, MAX_CACHE_TTL_S + 1, '60']) {
      expectApiError(await settings({ studio_id: id, cache_ttl_s }), 400, 'validation_failed');
    }
    expectApiError(await settings({ studio_id: 'nope', cache_ttl_s: 60 }), 404, 'not_found');
    await adminOk(gw, 'POST', '/v1/studios/remove', { studio_id: id });
    expectApiError(await settings({ studio_id: id, cache_ttl_s: 60 }), 409, 'conflict');
  });
});

describe('hits and misses', () => {
  it.each(['text', 'chat'] as const)(
    '%s: a miss goes upstream, the same request again is a hit that does not',
    async (route) => {
      const { studioId, token } = await cachedStudio();
      const first = await ask(token, route);
      expect(first.status).toBe(200);
      expect(cacheHeader(first)).toBe('miss');
      const second = await ask(token, route);
      expect(second.status).toBe(200);
      expect(cacheHeader(second)).toBe('hit');
      expect(mock.requests).toHaveLength(1);

      // The same answer, its usage marked as cached.
      if (route === 'chat') {
        expect(second.json).toEqual({ ...first.json, usage: { ...first.json.usage, cached: true } });
      } else {
        const { id: _a, usage: usage1, ...rest1 } = first.json;
        const { id: _b, usage: usage2, ...rest2 } = second.json;
        expect(rest2).toEqual(rest1);
        expect(usage2).toEqual({ ...usage1, cached: true });
      }

      // Both are generations; the hit cost nothing and says it was cached.
      const recorded = await generations(studioId);
      expect(recorded.map((e) => e.type)).toEqual(['GenerationCompleted', 'GenerationCompleted']);
      const [miss, hit] = recorded.map((e) => e.data);
      expect(miss!.costMicroUsd).toBeGreaterThan(0);
      expect(miss!.cached).toBeUndefined();
      expect(hit).toMatchObject({ costMicroUsd: 0, cached: true, inputTokens: miss!.inputTokens });
    },
  );

  it('a studio without cache_ttl_s bypasses the cache, unless a request asks with ttl=N', async () => {
    const { token } = await newStudio(gw);
    expect(cacheHeader(await ask(token, 'chat'))).toBe('bypass');
    expect(cacheHeader(await ask(token, 'chat'))).toBe('bypass');
    expect(mock.requests).toHaveLength(2);

    expect(cacheHeader(await ask(token, 'chat', { header: 'ttl=60' }))).toBe('miss');
    expect(cacheHeader(await ask(token, 'chat', { header: 'ttl=60' }))).toBe('hit');
    // Without the header the studio's setting (off) applies: nothing is read.
    expect(cacheHeader(await ask(token, 'chat'))).toBe('bypass');
    expect(mock.requests).toHaveLength(4);
  });

  it('no-store neither reads nor stores', async () => {
    const { token } = await cachedStudio();
    expect(cacheHeader(await ask(token, 'chat', { header: 'no-store' }))).toBe('bypass');
    // no-store kept nothing: this is a miss.
    expect(cacheHeader(await ask(token, 'chat'))).toBe('miss');
    // The answer is there now, and no-store does not take it.
    expect(cacheHeader(await ask(token, 'chat', { header: 'NO-STORE' }))).toBe('bypass');
    expect(cacheHeader(await ask(token, 'chat'))).toBe('hit');
    expect(mock.requests).toHaveLength(3);
  });

  it('every field that changes the answer is part of the key; who asks is not', async () => {
    const { token } = await cachedStudio();
    expect(cacheHeader(await ask(token, 'chat', { extra: { temperature: 0.7 } }))).toBe('miss');
    expect(cacheHeader(await ask(token, 'chat', { extra: { temperature: 0.7 } }))).toBe('hit');
    expect(cacheHeader(await ask(token, 'chat', { extra: { temperature: 0.2 } }))).toBe('miss');
    expect(cacheHeader(await ask(token, 'chat', { extra: { temperature: 0.2, seed: 1 } }))).toBe('miss');
    expect(cacheHeader(await ask(token, 'chat', { prompt: 'hello, there' }))).toBe('miss');
    // A null field is one left out; the end user's id changes nothing of the answer.
    expect(cacheHeader(await ask(token, 'chat', { extra: { max_tokens: null, user: 'u-1' } }))).toBe('miss');
    expect(cacheHeader(await ask(token, 'chat', { extra: { user: 'u-2' } }))).toBe('hit');
    // text and chat are different answers (shapes), even for the same prompt.
    expect(cacheHeader(await ask(token, 'text'))).toBe('miss');
    expect(mock.requests).toHaveLength(6);
  });

  it("another studio never gets a studio's answers", async () => {
    const a = await cachedStudio();
    const b = await cachedStudio();
    expect(cacheHeader(await ask(a.token, 'chat'))).toBe('miss');
    expect(cacheHeader(await ask(b.token, 'chat'))).toBe('miss');
    expect(cacheHeader(await ask(b.token, 'chat', { header: 'ttl=60' }))).toBe('hit');
    expect(cacheHeader(await ask(a.token, 'chat'))).toBe('hit');
    expect(mock.requests).toHaveLength(2);
  });

  it('an answer expires with its TTL; ttl=N takes only an answer at most N seconds old', async () => {
    const { token } = await cachedStudio(60);
    expect(cacheHeader(await ask(token, 'chat'))).toBe('miss');
    now += 30_000;
    expect(cacheHeader(await ask(token, 'chat'))).toBe('hit');
    // 30 s is too old for ttl=10; the answer it gets is kept for its 10 s.
    expect(cacheHeader(await ask(token, 'chat', { header: 'ttl=10' }))).toBe('miss');
    now += 5_000;
    expect(cacheHeader(await ask(token, 'chat'))).toBe('hit');
    now += 6_000;
    expect(cacheHeader(await ask(token, 'chat'))).toBe('miss');
    now += 59_999;
    expect(cacheHeader(await ask(token, 'chat'))).toBe('hit');
    now += 1;
    expect(cacheHeader(await ask(token, 'chat'))).toBe('miss');
    expect(mock.requests).toHaveLength(4);
  });

  it('a bad x-studio-cache header is a 400 before anything happens', async () => {
    const { studioId, token } = await cachedStudio();
    for (const header of ['ttl=0', 'ttl=abc', 'max-age=5', `ttl=${MAX_CACHE_TTL_S + 1}`, '']) {
      const res = await ask(token, 'chat', { header });
      expect(expectApiError(res, 400, 'validation_failed').param).toBe('x-studio-cache');
    }
    expect(mock.requests).toHaveLength(0);
    expect(await generations(studioId)).toEqual([]);
  });
});

describe('streams replay as streams', () => {
  it('chat/completions: the same frames, the usage chunk marked cached, then [DONE]', async () => {
    const { token } = await cachedStudio();
    const first = await ask(token, 'chat-stream', { prompt: 'one two three four' });
    const second = await ask(token, 'chat-stream', { prompt: 'one two three four' });
    expect([cacheHeader(first), cacheHeader(second)]).toEqual(['miss', 'hit']);
    expect(mock.requests).toHaveLength(1);

    const [original, replayed] = [framesOf(first), framesOf(second)];
    expect(original.length).toBeGreaterThan(5); // a role chunk, a chunk a word, the finish, usage, [DONE]
    expect(replayed.at(-1)).toBe('data: [DONE]');
    expect(replayed).toHaveLength(original.length);
    for (const [i, frame] of original.entries()) {
      if (!frame.includes('"usage"')) {
        expect(replayed[i]).toBe(frame);
        continue;
      }
      const chunk = JSON.parse(frame.slice('data: '.length));
      const again = JSON.parse(replayed[i]!.slice('data: '.length));
      expect(again).toEqual({ ...chunk, usage: { ...chunk.usage, cached: true } });
    }
    // A stream and a JSON answer are different entries.
    expect(cacheHeader(await ask(token, 'chat', { prompt: 'one two three four' }))).toBe('miss');
  });

  it('ai/stream: the same deltas, the same finish, then done with cached usage', async () => {
    const { studioId, token } = await cachedStudio();
    const first = await ask(token, 'stream', { prompt: 'one two three four' });
    const second = await ask(token, 'stream', { prompt: 'one two three four' });
    expect([cacheHeader(first), cacheHeader(second)]).toEqual(['miss', 'hit']);
    expect(mock.requests).toHaveLength(1);

    const [original, replayed] = [framesOf(first), framesOf(second)];
    const deltas = (frames: string[]) => frames.filter((f) => f.startsWith('event: delta\n'));
    expect(deltas(original).length).toBeGreaterThan(3);
    expect(deltas(replayed)).toEqual(deltas(original));
    const done = (frames: string[]) => {
      expect(frames.at(-1)).toMatch(/^event: done\n/);
      return JSON.parse(frames.at(-1)!.split('\ndata: ')[1]!);
    };
    const [end1, end2] = [done(original), done(replayed)];
    expect(end2.message.parts).toEqual(end1.message.parts);
    expect(end2.finish_reason).toBe(end1.finish_reason);
    expect(end2.usage).toEqual({ ...end1.usage, cached: true });
    expect((await generations(studioId)).map((e) => e.data.cached)).toEqual([undefined, true]);
  });
});

describe('what still applies to a hit', () => {
  it('rate limits: a hit counts as a request, charges no tokens', async () => {
    const { studioId, token } = await cachedStudio();
    await adminOk(gw, 'POST', '/v1/studios/limits/set', { studio_id: studioId, rpm: 3, tpm: 10_000 });
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await ask(token, 'chat'));
    expect(answers.map(cacheHeader)).toEqual(['miss', 'hit', 'hit']);
    const remainingTokens = answers.map((r) => r.headers.get('x-ratelimit-remaining-tokens'));
    // The miss was charged its tokens; the hit between the 2nd and 3rd request was charged none.
    expect(Number(remainingTokens[1])).toBeLessThan(10_000);
    expect(remainingTokens[2]).toBe(remainingTokens[1]);
    expectApiError(await ask(token, 'chat'), 429, 'rate_limited');
    expect(mock.requests).toHaveLength(1);
  });

  it('budgets: a hit reserves nothing and spends nothing', async () => {
    const { studioId, token } = await cachedStudio();
    await adminOk(gw, 'POST', '/v1/studios/budgets/set', {
      studio_id: studioId,
      amount_usd: 1,
      window: 'month',
      mode: 'hard',
    });
    expect(cacheHeader(await ask(token, 'chat'))).toBe('miss');
    const spent = async () =>
      (await adminOk(gw, 'GET', `/v1/studios/budgets/list?studio_id=${studioId}`)).json.items[0].spent_usd;
    const afterMiss = await spent();
    expect(afterMiss).toBeGreaterThan(0);
    expect(cacheHeader(await ask(token, 'chat'))).toBe('hit');
    expect(await spent()).toBe(afterMiss);
    // The miss reserved (its event records the reservation); the hit did not.
    expect(await usageLog(gw, studioId)).toEqual(['GenerationCompleted (reserved)', 'GenerationCompleted']);
  });

  it('model access: a token that may not call the model is refused, and told nothing of the cache', async () => {
    const { studioId, token } = await cachedStudio();
    expect(cacheHeader(await ask(token, 'chat'))).toBe('miss');
    const limited = await adminOk(gw, 'POST', '/v1/studios/tokens/apply', {
      studio_id: studioId,
      models: ['dev/*'],
    });
    const refused = await ask(limited.json.user_token, 'chat');
    expectApiError(refused, 403, 'model_not_allowed');
    expect(cacheHeader(refused)).toBeNull();
  });
});
