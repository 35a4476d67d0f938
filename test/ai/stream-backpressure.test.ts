import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completionId, nowSeconds } from '../../services/ai/chat/ids.ts';
import type { ChatChunk } from '../../services/ai/chat/wire.ts';
import type { Provider } from '../../services/ai/providers/types.ts';
import { type RunningGateway, startGateway } from '../../services/gateway/gateway.ts';
import { loadConfig } from '../../shared/config.ts';

/** Chunks of 16 KiB as fast as they are asked for, up to 320 MiB: `pulled` counts those asked for. */
let pulled = 0;
const CHUNKS = 20_000;
const floodProvider: Provider = {
  id: 'test',
  name: 'Test',
  env: [],
  models: () => [
    {
      id: 'test/flood',
      name: 'f',
      description: '',
      modalities: ['chat'],
      tags: [],
      meta: {},
      upstreamModel: 'f',
    },
  ],
  async chatStream(model) {
    const text = 'x'.repeat(16 * 1024);
    async function* chunks(): AsyncGenerator<ChatChunk> {
      for (; pulled < CHUNKS; ) {
        pulled++;
        yield {
          id: completionId(),
          object: 'chat.completion.chunk',
          created: nowSeconds(),
          model: model.id,
          choices: [{ index: 0, delta: { content: text }, finish_reason: null }],
        };
      }
    }
    return chunks();
  },
};

const adminKey = 'admin-key-for-backpressure-tests-0123';
let gw: RunningGateway;
let token: string;

const post = async (path: string, body: unknown) =>
  (await fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  }).then((res) => res.json())) as Record<string, unknown>;

beforeAll(async () => {
  const config = loadConfig({
    STUDIO_EVENT_STORE: 'memory',
    ADMIN_SECRET_KEY: adminKey,
    STUDIO_MASTER_KEY: 'c'.repeat(64),
    STUDIO_GATEWAY_PORT: '0',
    LOG_LEVEL: 'silent',
  });
  gw = await startGateway({ config, processEnv: {}, ai: { providers: () => [floodProvider] } });
  await post('/v1/studios/create', { name: 'Flood', studio_id: 'flood' });
  token = (await post('/v1/studios/tokens/apply', { studio_id: 'flood' })).user_token as string;
});
afterAll(async () => {
  await gw?.close();
});

describe('a relayed stream and a client that does not read', () => {
  it('stops asking the upstream for chunks once the answer is full, instead of holding them all', async () => {
    const { port } = new URL(gw.url);
    const body = JSON.stringify({
      model: 'test/flood',
      messages: [{ role: 'user', content: 'go' }],
      stream: true,
    });
    const socket = connect(Number(port), '127.0.0.1');
    socket.pause(); // never reads: the answer piles up in the socket's buffers, then in the response
    socket.write(
      `POST /v1/ai/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    try {
      for (let i = 0; i < 100 && pulled === 0; i++) await sleep(20);
      await sleep(1_000);
      const asked = pulled;
      await sleep(500);
      // The kernel's buffers of a loopback connection hold some MiB; the rest of 320 MiB must wait.
      expect(asked).toBeGreaterThan(0);
      expect(asked).toBeLessThan(2_000);
      expect(pulled).toBe(asked);
    } finally {
      // Gone either way, so the gateway's close does not wait for a stream no one reads.
      socket.destroy();
    }
  });
});
