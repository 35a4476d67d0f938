import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completionId, nowSeconds } from '../../services/ai/chat/ids.ts';
import type { ChatChunk } from '../../services/ai/chat/wire.ts';
import { devProvider } from '../../services/ai/providers/dev/provider.ts';
import type { Provider } from '../../services/ai/providers/types.ts';
import { type RunningGateway, startGateway } from '../../services/gateway/gateway.ts';
import { loadConfig } from '../../shared/config.ts';
import { ApiError } from '../../shared/errors.ts';
import { waitUntil } from '../../shared/testing/wait.ts';
import { adminOk } from '../support/admin.ts';

/** A provider that fails, and one that streams slowly, to observe failures and cancellations. */
const testProvider: Provider = {
  id: 'test',
  name: 'Test',
  env: [],
  models: () => [
    {
      id: 'test/broken',
      name: 'b',
      description: '',
      modalities: ['text', 'chat'],
      tags: [],
      meta: {},
      upstreamModel: 'b',
    },
    {
      id: 'test/slow',
      name: 's',
      description: '',
      modalities: ['chat'],
      tags: [],
      meta: {},
      upstreamModel: 's',
    },
  ],
  async chat() {
    throw new ApiError('upstream_error', 'upstream answered 500: boom');
  },
  async chatStream(model, _request, ctx) {
    let aborted!: () => void;
    const abortedPromise = new Promise<void>((resolve) => {
      aborted = resolve;
    });
    ctx.signal.addEventListener('abort', () => aborted());
    async function* chunks(): AsyncGenerator<ChatChunk> {
      for (let i = 0; i < 1000; i++) {
        yield {
          id: completionId(),
          object: 'chat.completion.chunk',
          created: nowSeconds(),
          model: model.id,
          choices: [{ index: 0, delta: { content: `w${i} ` }, finish_reason: null }],
        };
        await Promise.race([sleep(20), abortedPromise]);
        if (ctx.signal.aborted) throw new Error('aborted');
      }
    }
    return chunks();
  },
};

const adminKey = 'admin-key-for-usage-tests-0123456789';
let dataDir: string;
let gw: RunningGateway;
let token: string;

async function start() {
  const config = loadConfig({
    STUDIO_EVENT_STORE: 'sqlite',
    STUDIO_DATA_DIR: dataDir,
    ADMIN_SECRET_KEY: adminKey,
    STUDIO_MASTER_KEY: 'b'.repeat(64),
    STUDIO_GATEWAY_PORT: '0',
    LOG_LEVEL: 'silent',
  });
  gw = await startGateway({ config, processEnv: {}, ai: { providers: () => [devProvider, testProvider] } });
}

const call = (path: string, body: unknown, auth = token, signal?: AbortSignal) =>
  fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${auth}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal,
  });
// biome-ignore lint/suspicious/noExplicitAny: parsed JSON, checked by the assertions that read it.
const admin = async (path: string): Promise<any> =>
  (await adminOk({ url: gw.url, adminKey }, 'GET', path)).json;

type UsageEvent = { type: string; data: Record<string, unknown>; actor: string };
async function usageEvents() {
  const body = await admin('/v1/audit/events?stream=usage-acme&limit=1000');
  return body.items as UsageEvent[];
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'studio-usage-'));
  await start();
  await call('/v1/studios/create', { name: 'Acme', studio_id: 'acme' }, adminKey);
  token = (
    (await (await call('/v1/studios/tokens/apply', { studio_id: 'acme' }, adminKey)).json()) as {
      user_token: string;
    }
  ).user_token;
});
afterAll(async () => {
  await gw?.close();
  await rm(dataDir, { recursive: true, force: true });
});

describe('usage', () => {
  it('appends GenerationCompleted for a success and GenerationFailed for a failure, off the hot path', async () => {
    expect((await call('/v1/ai/text', { model: 'dev/echo', prompt: 'one two' })).status).toBe(200);
    const failed = await call('/v1/ai/text', { model: 'test/broken', prompt: 'x' });
    expect(failed.status).toBe(502);
    expect(((await failed.json()) as { error: { code: string } }).error.code).toBe('upstream_error');

    let events: UsageEvent[] = [];
    await waitUntil(async () => {
      events = await usageEvents();
      return events.length >= 2;
    }, 'both generations are recorded');
    const tokenId = (await admin('/v1/studios/tokens/list?studio_id=acme')).items[0].id;
    expect(events.map((e) => e.type)).toEqual(['GenerationCompleted', 'GenerationFailed']);
    expect(events[0]!.data).toMatchObject({
      studioId: 'acme',
      tokenId,
      model: 'dev/echo',
      modality: 'text',
      inputTokens: 2,
      outputTokens: 3,
      status: 200,
      latencyMs: expect.any(Number),
      requestId: expect.any(String),
    });
    expect(events[1]!.data).toMatchObject({ model: 'test/broken', status: 502, errorCode: 'upstream_error' });
  });

  it('a client that disconnects mid-stream cancels the upstream and is recorded as 499', async () => {
    const controller = new AbortController();
    const res = await call(
      '/v1/ai/chat/completions',
      { model: 'test/slow', messages: [{ role: 'user', content: 'x' }], stream: true },
      token,
      controller.signal,
    );
    const reader = res.body!.getReader();
    await reader.read();
    controller.abort();
    let events: UsageEvent[] = [];
    await waitUntil(async () => {
      events = await usageEvents();
      return events.some((x) => x.data.model === 'test/slow');
    }, 'the cut stream is recorded');
    expect(events.find((e) => e.data.model === 'test/slow')).toMatchObject({
      type: 'GenerationFailed',
      data: { status: 499, errorCode: 'client_closed_request', modality: 'chat' },
    });
  });

  it('admins read aggregates by studio and time range', async () => {
    // biome-ignore lint/suspicious/noExplicitAny: parsed JSON, checked by the assertions that read it.
    let usage: any;
    await waitUntil(async () => {
      usage = await admin('/v1/ai/usage?studio_id=acme');
      return usage.totals.requests >= 3;
    }, 'three requests are aggregated');
    // dev/echo at its default 1.00 / 2.00 per million tokens: 2 + 3 × 2 micro-dollars. The stream
    // cut short counts what it streamed before the client left (1 input token, and as many output
    // tokens as had arrived), at test/slow's price of nothing.
    expect(usage.totals).toEqual({
      requests: 3,
      failures: 2,
      input_tokens: 3,
      output_tokens: expect.any(Number),
      cost_usd: 0.000008,
    });
    expect(usage.totals.output_tokens).toBeGreaterThanOrEqual(3);
    expect(usage.items).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          model: 'dev/echo',
          modality: 'text',
          requests: 1,
          failures: 0,
          input_tokens: 2,
          cost_usd: 0.000008,
        }),
        expect.objectContaining({
          model: 'test/broken',
          modality: 'text',
          requests: 1,
          failures: 1,
          cost_usd: 0,
        }),
      ]),
    );
    const future = await admin('/v1/ai/usage?studio_id=acme&from=2999-01-01');
    expect(future.totals.requests).toBe(0);
    const bad = await fetch(`${gw.url}/v1/ai/usage?studio_id=acme&from=yesterday`, {
      headers: { authorization: `Bearer ${adminKey}` },
    });
    expect(bad.status).toBe(400);
  });

  it('usage events and aggregates survive a restart', async () => {
    const before = await admin('/v1/ai/usage?studio_id=acme');
    const eventsBefore = await usageEvents();
    await gw.close();
    await start();
    expect(await usageEvents()).toEqual(eventsBefore);
    expect(await admin('/v1/ai/usage?studio_id=acme')).toEqual(before);
  });
});
