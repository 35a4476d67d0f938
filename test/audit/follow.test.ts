import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminOk } from '../support/admin.ts';
import { expectApiError, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { type Follow, follow } from './support/follow-client.ts';

// GET /v1/audit/events/follow: the log live over SSE, resumable by position, filtered, bounded.

let gw: TestGateway;
let userToken: string;
let otherToken: string;
const opened: Follow[] = [];

const admin = () => ({ authorization: `Bearer ${gw.adminKey}` });
const asUser = (token = userToken) => ({ authorization: `Bearer ${token}` });
async function open(query: string, headers: Record<string, string>): Promise<Follow> {
  const stream = await follow(`${gw.url}/v1/audit/events/follow${query}`, headers);
  opened.push(stream);
  return stream;
}
const generate = async (token: string, prompt: string) => {
  const res = await gw.api('POST', '/v1/ai/text', { token, body: { model: 'dev/echo', prompt } });
  expect(res.status, res.text).toBe(200);
};

beforeAll(async () => {
  gw = await startTestGateway({
    store: 'memory',
    logLevel: 'silent',
    settings: { STUDIO_MAX_STREAMS_PER_CLIENT: '3', STUDIO_SSE_HEARTBEAT_MS: '50' },
  });
  await adminOk(gw, 'POST', '/v1/studios/create', { name: 'Follow A', studio_id: 'follow-a' });
  await adminOk(gw, 'POST', '/v1/studios/create', { name: 'Follow B', studio_id: 'follow-b' });
  userToken = (await adminOk(gw, 'POST', '/v1/studios/tokens/apply', { studio_id: 'follow-a' })).json
    .user_token;
  otherToken = (await adminOk(gw, 'POST', '/v1/studios/tokens/apply', { studio_id: 'follow-b' })).json
    .user_token;
});

afterAll(async () => {
  for (const stream of opened) stream.close();
  await gw?.close();
});

const closeAll = () => {
  for (const stream of opened.splice(0)) stream.close();
};

describe('the admin', () => {
  it('gets the stored events after `after` (ids are positions), then caught_up, then each new one', async () => {
    const stored = (await adminOk(gw, 'GET', '/v1/audit/events?type=StudioCreated')).json.items;
    const first = stored[0].position as number;
    const stream = await open(`?after=${first}&type=StudioCreated`, admin());
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const second = await stream.next((e) => e.event === 'StudioCreated');
    expect(JSON.parse(second.data)).toMatchObject({ stream: 'studio-follow-b', type: 'StudioCreated' });
    expect(second.id).toBe(String(stored[1].position));
    await stream.next((e) => e.event === 'caught_up');

    await adminOk(gw, 'POST', '/v1/studios/create', { name: 'Live', studio_id: 'follow-live' });
    const live = await stream.next((e) => e.data.includes('studio-follow-live'));
    expect(Number(live.id)).toBeGreaterThan(Number(second.id));
    // the type filter held: nothing but StudioCreated
    expect(new Set(stream.events.map((e) => e.event))).toEqual(new Set(['StudioCreated', 'caught_up']));
    closeAll();
  });

  it('resumes after Last-Event-ID, which wins over ?after=', async () => {
    const stored = (await adminOk(gw, 'GET', '/v1/audit/events?type=StudioCreated')).json.items;
    const stream = await open('?after=0&type=StudioCreated', {
      ...admin(),
      'last-event-id': String(stored[1].position),
    });
    await stream.next((e) => e.event === 'caught_up');
    const ids = stream.events.filter((e) => e.event === 'StudioCreated').map((e) => e.data);
    expect(ids.map((data) => JSON.parse(data).position)).toEqual(
      stored.slice(2).map((e: { position: number }) => e.position),
    );
    closeAll();
  });

  it('without a resume point follows what is appended from now on, of one stream when asked', async () => {
    const stream = await open('?stream=studio-follow-a', admin());
    const caughtUp = await stream.next((e) => e.event === 'caught_up');
    expect(JSON.parse(caughtUp.data).position).toBeGreaterThan(0);
    expect(stream.events).toHaveLength(1);
    await adminOk(gw, 'POST', '/v1/studios/pause', { studio_id: 'follow-b', reason: 'not followed' });
    await adminOk(gw, 'POST', '/v1/studios/pause', { studio_id: 'follow-a', reason: 'followed' });
    const paused = await stream.next((e) => e.event === 'StudioPaused');
    expect(JSON.parse(paused.data)).toMatchObject({ stream: 'studio-follow-a', actor: 'admin' });
    await adminOk(gw, 'POST', '/v1/studios/activate', { studio_id: 'follow-a' });
    await adminOk(gw, 'POST', '/v1/studios/activate', { studio_id: 'follow-b' });
    await stream.next((e) => e.event === 'StudioActivated');
    expect(stream.events.every((e) => e.event === 'caught_up' || e.data.includes('studio-follow-a'))).toBe(
      true,
    );
    // a quiet stream still speaks: heartbeat comments
    await expect.poll(() => stream.comments.length).toBeGreaterThan(0);
    closeAll();
  });

  it('refuses a bad resume point or filter in the envelope', async () => {
    const header = await gw.api('GET', '/v1/audit/events/follow', {
      token: gw.adminKey,
      headers: { 'last-event-id': 'yesterday' },
    });
    expectApiError(header, 400, 'validation_failed');
    expect(header.json.error.message).toMatch(/Last-Event-ID/);
    for (const query of ['type=Not-A-Type', 'after=-1', 'stream=']) {
      const refused = await gw.api('GET', `/v1/audit/events/follow?${query}`, { token: gw.adminKey });
      expectApiError(refused, 400, 'validation_failed');
    }
  });
});

describe('a user token', () => {
  it("follows its studio's usage: a generation appears as it is recorded", async () => {
    const stream = await open('', asUser());
    expect(stream.status).toBe(200);
    await stream.next((e) => e.event === 'caught_up');
    await generate(otherToken, 'not yours');
    await generate(userToken, 'hello');
    const generation = await stream.next((e) => e.event !== 'caught_up');
    expect(JSON.parse(generation.data)).toMatchObject({
      stream: 'usage-follow-a',
      data: { studioId: 'follow-a', model: 'dev/echo' },
    });
    expect(stream.events.some((e) => e.data.includes('follow-b'))).toBe(false);
    closeAll();
  });

  it('may name its own usage stream, and nothing else', async () => {
    const own = await open('?stream=usage-follow-a&after=0', asUser());
    expect(own.status).toBe(200);
    await own.next((e) => e.data.includes('"usage-follow-a"'));
    closeAll();
    for (const stream of ['usage-follow-b', 'studio-follow-a', 'tokens']) {
      const refused = await gw.api('GET', `/v1/audit/events/follow?stream=${stream}`, { token: userToken });
      expectApiError(refused, 403, 'forbidden');
      expect(refused.json.error.message).toContain('usage-follow-a');
    }
    // and the paged log stays the admin's
    expectApiError(await gw.api('GET', '/v1/audit/events', { token: userToken }), 403, 'forbidden');
  });
});

describe('bounds', () => {
  it('one client holds at most STUDIO_MAX_STREAMS_PER_CLIENT follows; closing one frees its place', async () => {
    const streams = [];
    for (let i = 0; i < 3; i++) streams.push(await open('', admin()));
    expect(streams.map((s) => s.status)).toEqual([200, 200, 200]);
    const refused = await gw.api('GET', '/v1/audit/events/follow', { token: gw.adminKey });
    expectApiError(refused, 429, 'rate_limited');
    expect(refused.headers.get('retry-after')).toBe('1');
    streams[0]!.close();
    await expect
      .poll(async () => {
        const again = await open('', admin());
        again.close();
        return again.status;
      })
      .toBe(200);
    closeAll();
  });

  it('a gateway closing ends its follows (and does not wait for them)', async () => {
    const own = await startTestGateway({ store: 'memory', logLevel: 'silent' });
    const stream = await follow(`${own.url}/v1/audit/events/follow?after=0`, {
      authorization: `Bearer ${own.adminKey}`,
    });
    await stream.next((e) => e.event === 'caught_up');
    await own.close();
    await stream.ended;
  });
});
