import { randomBytes } from 'node:crypto';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../../../shared/testing/wait.ts';
import { adminOk, studioWithToken } from '../../support/admin.ts';
import { startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { freshPostgresDatabase } from '../../support/postgres.ts';

// Payloads, opt-in per studio: with `capture: full` a request's bodies are kept sealed under a key
// of the studio's own; erasing the studio's payloads destroys that key, so they become unreadable
// for good while every event, its digest and the seal chain still verify.

const PROMPT = 'the secret plans for the quarter';
let gw: TestGateway;
let user: { token: string; tokenId: string };

const client = () => new OpenAI({ baseURL: `${gw.url}/v1/ai`, apiKey: user.token, maxRetries: 0 });
const detail = async (id: string) => (await adminOk(gw, 'GET', `/v1/ai/requests/${id}`)).json;
const newestId = async (query = '') =>
  (await adminOk(gw, 'GET', `/v1/ai/requests?studio_id=acme${query}`)).json.items[0]?.id as
    | string
    | undefined;

beforeAll(async () => {
  gw = await startTestGateway({ store: 'sqlite', logLevel: 'silent' });
  user = await studioWithToken(gw, 'acme');
}, 60_000);
afterAll(async () => {
  await gw?.close();
});

describe('payload capture', () => {
  it('is off by default: the log keeps metadata, never bodies', async () => {
    expect((await gw.api('GET', '/v1/studios/capture?studio_id=acme', { token: user.token })).json).toEqual({
      studio_id: 'acme',
      capture: 'metadata',
      retention_days: 30,
    });
    const answer = await client().chat.completions.create({
      model: 'dev/echo',
      messages: [{ role: 'user', content: PROMPT }],
    });
    await waitUntil(
      async () => (await newestId()) === answer.id || (await newestId()) !== undefined,
      'listed',
    );
    const id = (await newestId())!;
    expect((await detail(id)).payload).toBeNull();
  });

  it('with capture full, the request and the answer (streamed too) are kept sealed, readable by the studio', async () => {
    await adminOk(gw, 'POST', '/v1/studios/capture/set', {
      studio_id: 'acme',
      capture: 'full',
      retention_days: 7,
    });
    await client().chat.completions.create({
      model: 'dev/echo',
      messages: [{ role: 'user', content: PROMPT }],
    });
    const stream = await client().chat.completions.create({
      model: 'dev/echo',
      messages: [{ role: 'user', content: `${PROMPT}, streamed` }],
      stream: true,
    });
    for await (const _chunk of stream) {
      // read to the end
    }
    await waitUntil(async () => {
      const rows = (await adminOk(gw, 'GET', '/v1/ai/requests?studio_id=acme&limit=2')).json.items;
      const details = await Promise.all(rows.map((row: { id: string }) => detail(row.id)));
      return details.every((d) => d.payload !== null);
    }, 'both payloads are captured');
    const [streamed, plain] = (await adminOk(gw, 'GET', '/v1/ai/requests?studio_id=acme&limit=2')).json.items;
    const plainPayload = (await detail(plain.id)).payload;
    expect(plainPayload).toMatchObject({ erased: false, truncated: false, response: { status: 200 } });
    expect(plainPayload.request.messages).toEqual([{ role: 'user', content: PROMPT }]);
    expect(plainPayload.response.body).toContain(`Echo: ${PROMPT}`);
    const streamedPayload = (await gw.api('GET', `/v1/ai/requests/${streamed.id}`, { token: user.token }))
      .json.payload;
    expect(streamedPayload.response.content_type).toContain('text/event-stream');
    expect(streamedPayload.response.body).toContain('data: [DONE]');

    // The log holds them sealed: the prompt is nowhere in it in clear.
    const events = await adminOk(gw, 'GET', '/v1/audit/events?stream=payloads-acme&limit=100');
    expect(events.json.items.length).toBe(2);
    expect(events.text).not.toContain(PROMPT);
  });

  it('erasing destroys the key: the payloads are unreadable for good, the log still verifies', async () => {
    const id = (await newestId())!;
    const erased = await adminOk(gw, 'POST', '/v1/studios/erase-payloads', { studio_id: 'acme' });
    expect(erased.json).toEqual({ studio_id: 'acme', keys_destroyed: 1 });
    expect((await detail(id)).payload).toEqual({ erased: true });
    await gw.restart();
    expect((await detail(id)).payload).toEqual({ erased: true });
    await waitUntil(async () => (await adminOk(gw, 'GET', '/v1/audit/verify')).json.unsealed === 0, 'sealed');
    const verified = (await adminOk(gw, 'GET', '/v1/audit/verify')).json;
    expect(verified).toMatchObject({ ok: true, breaks: 0 });
    const erasures = await adminOk(gw, 'GET', '/v1/audit/events?stream=capture-acme&limit=10');
    expect(erasures.json.items.map((e: { type: string }) => e.type)).toEqual([
      'PayloadCaptureSet',
      'PayloadsErased',
    ]);

    // Captured again from then on, under a new key.
    await client().chat.completions.create({
      model: 'dev/echo',
      messages: [{ role: 'user', content: 'after' }],
    });
    await waitUntil(async () => (await detail((await newestId())!)).payload !== null, 'a new payload');
    expect((await detail((await newestId())!)).payload.request.messages[0].content).toBe('after');
  });

  it('with capture none, error messages are not kept; only an admin sets capture', async () => {
    await adminOk(gw, 'POST', '/v1/studios/capture/set', { studio_id: 'acme', capture: 'none' });
    const missing = await gw.api('POST', '/v1/ai/chat/completions', {
      token: user.token,
      body: { model: 'nope/missing', messages: [{ role: 'user', content: PROMPT }] },
    });
    expect(missing.status).toBe(404);
    await waitUntil(async () => (await newestId('&status=refused')) !== undefined, 'the refusal is listed');
    const refused = (await adminOk(gw, 'GET', '/v1/ai/requests?studio_id=acme&status=refused')).json.items[0];
    expect(refused).toMatchObject({ error_code: 'model_not_found', error_message: '' });
    const bySelf = await gw.api('POST', '/v1/studios/capture/set', {
      token: user.token,
      body: { studio_id: 'acme', capture: 'full' },
    });
    expect(bySelf.status).toBe(403);
    const bad = await gw.api('POST', '/v1/studios/capture/set', {
      token: gw.adminKey,
      body: { studio_id: 'acme', capture: 'everything' },
    });
    expect(bad.status).toBe(400);
  });
});

describe('payload erasure on two gateways sharing PostgreSQL', () => {
  it('a payload read on one gateway is unreadable there as soon as another erased it', async (t) => {
    const db = await freshPostgresDatabase();
    if (!db) return t.skip();
    const masterKey = randomBytes(32).toString('hex');
    const options = { store: 'postgres', databaseUrl: db.url, masterKey, logLevel: 'silent' } as const;
    const a = await startTestGateway(options);
    const b = await startTestGateway(options);
    try {
      const owner = await studioWithToken(a, 'shared');
      await adminOk(a, 'POST', '/v1/studios/capture/set', { studio_id: 'shared', capture: 'full' });
      const onB = new OpenAI({ baseURL: `${b.url}/v1/ai`, apiKey: owner.token, maxRetries: 0 });
      // b has seen the token and the capture setting once the payload it seals is on record.
      let id: string | undefined;
      await waitUntil(async () => {
        const asked = await onB.chat.completions
          .create({ model: 'dev/echo', messages: [{ role: 'user', content: PROMPT }] })
          .then(
            () => true,
            () => false, // 401 until b has seen the token
          );
        if (!asked) return false;
        id = (await adminOk(b, 'GET', '/v1/ai/requests?studio_id=shared')).json.items[0]?.id;
        return id !== undefined && (await adminOk(b, 'GET', `/v1/ai/requests/${id}`)).json.payload !== null;
      }, 'a payload sealed and read on b');
      const before = (await adminOk(b, 'GET', `/v1/ai/requests/${id}`)).json.payload;
      expect(before.request.messages).toEqual([{ role: 'user', content: PROMPT }]);

      await adminOk(a, 'POST', '/v1/studios/erase-payloads', { studio_id: 'shared' });
      expect((await adminOk(b, 'GET', `/v1/ai/requests/${id}`)).json.payload).toEqual({ erased: true });
    } finally {
      await a.close();
      await b.close();
      await db.drop();
    }
  });
});
