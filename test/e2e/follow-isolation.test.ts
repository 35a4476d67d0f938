/**
 * A user's log follow reads its studio's usage stream only, from the store: however much other
 * tenants wrote, it catches up at once, resumes at a log position, and a token holds a bounded
 * number of follows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_FOLLOWS_PER_TOKEN } from '../../services/audit/follow.ts';
import { studioWithToken } from '../support/admin.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway({ store: 'sqlite', logLevel: 'silent' });
});
afterAll(() => gw?.close());

const usage = (studioId: string, requestId: string) => ({
  type: 'GenerationCompleted',
  data: {
    studioId,
    tokenId: null,
    requestId,
    model: 'dev/echo',
    modality: 'chat',
    inputTokens: 1,
    outputTokens: 1,
    latencyMs: 1,
    costMicroUsd: 0,
    status: 200,
  },
});

/** Reads a follow until `caught_up`; answers its events (type and request id) and how long it took. */
async function followUntilCaughtUp(token: string, query: string) {
  const controller = new AbortController();
  const started = performance.now();
  const res = await fetch(`${gw.url}/v1/audit/events/follow${query}`, {
    headers: { authorization: `Bearer ${token}` },
    signal: controller.signal,
  });
  let text = '';
  const decoder = new TextDecoder();
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    text += decoder.decode(chunk);
    if (text.includes('event: caught_up')) break;
  }
  const ms = performance.now() - started;
  controller.abort();
  const frames = text.split('\n\n').filter((f) => f.startsWith('id: '));
  const events = frames.map(
    (f) => JSON.parse(f.split('data: ')[1]!) as { position: number; data: { requestId: string } },
  );
  const caughtUp = JSON.parse(/event: caught_up\ndata: (.*)/.exec(text)![1]!) as { position: number };
  return { events, caughtUp, ms };
}

describe("a user's follow", () => {
  it("reads its studio's usage only, caught up at once however much other tenants wrote; resumes at a log position", async () => {
    const { token } = await studioWithToken(gw, 'mine');
    const store = gw.running.ctx.events;
    const mine: number[] = [];
    for (let batch = 0; batch < 20; batch++) {
      // 500 events of other studios for each of one's own.
      await store.append(
        `usage-other${batch}`,
        Array.from({ length: 500 }, (_, i) => usage(`other${batch}`, `o${batch}-${i}`)),
        { expected: 'any', metadata: { actor: 'test' } },
      );
      const own = await store.append('usage-mine', [usage('mine', `m${batch}`)], {
        expected: 'any',
        metadata: { actor: 'test' },
      });
      mine.push(own.position!);
    }
    const all = await followUntilCaughtUp(token, '?after=0');
    expect(all.events.map((e) => e.data.requestId)).toEqual(mine.map((_, i) => `m${i}`));
    expect(all.events.map((e) => e.position)).toEqual(mine);
    expect(all.caughtUp.position).toBe(mine.at(-1));
    expect(all.ms).toBeLessThan(2_000);

    const resumed = await followUntilCaughtUp(token, `?after=${mine[14]}`);
    expect(resumed.events.map((e) => e.data.requestId)).toEqual(['m15', 'm16', 'm17', 'm18', 'm19']);
    const between = await followUntilCaughtUp(token, `?after=${mine[14]! + 3}`);
    expect(between.events.map((e) => e.data.requestId)).toEqual(['m15', 'm16', 'm17', 'm18', 'm19']);
  });

  it(`a token holds at most ${MAX_FOLLOWS_PER_TOKEN} follows; the next is a 429 until one closes`, async () => {
    const { token } = await studioWithToken(gw, 'many');
    const open = await Promise.all(
      Array.from({ length: MAX_FOLLOWS_PER_TOKEN }, async () => {
        const controller = new AbortController();
        const res = await fetch(`${gw.url}/v1/audit/events/follow`, {
          headers: { authorization: `Bearer ${token}` },
          signal: controller.signal,
        });
        expect(res.status).toBe(200);
        return controller;
      }),
    );
    const refused = await gw.api('GET', '/v1/audit/events/follow', { token });
    expect(refused.status).toBe(429);
    expect(refused.json.error.message).toContain(
      `this token already holds ${MAX_FOLLOWS_PER_TOKEN} open streams`,
    );
    open[0]!.abort();
    await new Promise((resolve) => setTimeout(resolve, 200));
    const again = new AbortController();
    const res = await fetch(`${gw.url}/v1/audit/events/follow`, {
      headers: { authorization: `Bearer ${token}` },
      signal: again.signal,
    });
    expect(res.status).toBe(200);
    again.abort();
    for (const c of open) c.abort();
  });
});
