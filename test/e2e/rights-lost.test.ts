/**
 * Long-lived answers end within a second of their caller losing its rights (a token revoked, its
 * studio paused), with a last event that says why: a log follow, and a generation stream.
 */
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinAiProviders } from '../../services/ai/providers/index.ts';
import { UpstreamClient } from '../../services/ai/upstream.ts';
import { waitUntil } from '../../shared/testing/wait.ts';
import { adminOk, studioWithToken } from '../support/admin.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { type Recorded, recordingServer } from '../support/recording-server.ts';

type Upstream = Awaited<ReturnType<typeof recordingServer>>;
let upstream: Upstream;
let gw: TestGateway;

/** A stream that sends its first chunk, then nothing until the connection closes. */
function endless(_req: Recorded, res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.write(
    `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, delta: { role: 'assistant', content: 'never ' }, finish_reason: null }] })}\n\n`,
  );
}

beforeAll(async () => {
  upstream = await recordingServer(endless);
  gw = await startTestGateway({
    store: 'memory',
    logLevel: 'silent',
    processEnv: { OPENAI_API_KEY: 'sk-rights-0123456789', OPENAI_BASE_URL: `${upstream.url}/v1` },
    ai: {
      upstream: new UpstreamClient({ timeoutMs: 60_000, idleTimeoutMs: 60_000, retries: 0, retryBaseMs: 1 }),
      providers: builtinAiProviders,
    },
  });
});
afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});

/** Reads an answer's body as it comes, until it ends; answers its text and when it ended. */
async function readToEnd(res: Response): Promise<{ text: string; endedAt: number }> {
  let text = '';
  const decoder = new TextDecoder();
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) text += decoder.decode(chunk);
  return { text, endedAt: performance.now() };
}

const lastEvent = (text: string) => text.trim().split('\n\n').at(-1) ?? '';

describe('a log follow', () => {
  it('ends within a second of its token being revoked, its last event saying so', async () => {
    const { token, tokenId } = await studioWithToken(gw, 'follow-revoked');
    const res = await fetch(`${gw.url}/v1/audit/events/follow?after=0`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(res.status).toBe(200);
    const ended = readToEnd(res);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await adminOk(gw, 'POST', '/v1/studios/tokens/revoke', { token_id: tokenId });
    const revokedAt = performance.now();
    const { text, endedAt } = await ended;
    expect(endedAt - revokedAt).toBeLessThan(1_000);
    expect(lastEvent(text)).toMatch(/^event: error\ndata: /);
    expect(JSON.parse(lastEvent(text).split('data: ')[1]!).error).toMatchObject({
      code: 'unauthenticated',
      message: 'this token has been revoked',
    });
  });

  it('ends within a second of its studio being paused, and a new follow is refused', async () => {
    const { token } = await studioWithToken(gw, 'follow-paused');
    const res = await fetch(`${gw.url}/v1/audit/events/follow`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const ended = readToEnd(res);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await adminOk(gw, 'POST', '/v1/studios/pause', { studio_id: 'follow-paused', reason: 'audit' });
    const pausedAt = performance.now();
    const { text, endedAt } = await ended;
    expect(endedAt - pausedAt).toBeLessThan(1_000);
    expect(JSON.parse(lastEvent(text).split('data: ')[1]!).error).toMatchObject({ code: 'studio_paused' });
    const again = await fetch(`${gw.url}/v1/audit/events/follow`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(again.status).toBe(403);
  });
});

describe('a token that expires', () => {
  it('ends its follow within a second of expiring, its last event saying so', async () => {
    await gw.api('POST', '/v1/studios/create', {
      token: gw.adminKey,
      body: { name: 'follow-expiring', studio_id: 'follow-expiring' },
    });
    const issued = (
      await adminOk(gw, 'POST', '/v1/studios/tokens/apply', { studio_id: 'follow-expiring', expires_in_s: 1 })
    ).json;
    const res = await fetch(`${gw.url}/v1/audit/events/follow`, {
      headers: { authorization: `Bearer ${issued.user_token}` },
    });
    expect(res.status).toBe(200);
    const { text } = await readToEnd(res);
    // Ended after the expiry, and within a second and a half of it.
    const sinceExpiry = Date.now() - Date.parse(issued.token.expires_at);
    expect(sinceExpiry).toBeGreaterThanOrEqual(0);
    expect(sinceExpiry).toBeLessThan(1_500);
    expect(JSON.parse(lastEvent(text).split('data: ')[1]!).error).toMatchObject({
      code: 'unauthenticated',
      message: 'this token has expired',
    });
  });
});

describe('a generation stream', () => {
  it('ends within a second of its token being revoked: an error frame, the upstream call cancelled, the generation recorded', async () => {
    const { token, tokenId } = await studioWithToken(gw, 'stream-revoked');
    const res = await fetch(`${gw.url}/v1/ai/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'openai/gpt-4o-mini',
        stream: true,
        messages: [{ role: 'user', content: 'go' }],
      }),
    });
    expect(res.status).toBe(200);
    const ended = readToEnd(res);
    await waitUntil(() => upstream.requests.length > 0, 'the upstream called');
    await new Promise((resolve) => setTimeout(resolve, 200));
    await adminOk(gw, 'POST', '/v1/studios/tokens/revoke', { token_id: tokenId });
    const revokedAt = performance.now();
    const { text, endedAt } = await ended;
    expect(endedAt - revokedAt).toBeLessThan(1_000);
    expect(text).toContain('"content":"never "');
    expect(JSON.parse(lastEvent(text).slice('data: '.length)).error).toMatchObject({
      code: 'unauthenticated',
      message: 'this token has been revoked',
    });
    await waitUntil(() => upstream.requests.at(-1)!.aborted, 'the upstream call cancelled');
    const events = await gw.running.ctx.events.readStream('usage-stream-revoked');
    expect(events.at(-1)).toMatchObject({
      type: 'GenerationFailed',
      data: { status: 401, errorCode: 'unauthenticated', outputTokens: 1 },
    });
  });
});
