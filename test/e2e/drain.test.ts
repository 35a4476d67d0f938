import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type ServerProcess, startStudio } from '../scale/processes.ts';
import { adminOk } from '../support/admin.ts';
import { auditData } from '../support/audit.ts';
import { gate, openAiMock, openAiStream, openAiWire, type WireMock } from '../support/mock-ai-upstreams.ts';
import { nodeGet } from '../support/node-get.ts';

// `studio gateway start` as its own process on the embedded store, its model upstream a mock held
// mid-stream: SIGTERM must let the stream finish whole, refuse what comes after, say `draining` on
// /ready, exit 0, and leave the stream's usage event in the log for the next process. Two SQLite
// starts: over a minute on a loaded machine.

describe('SIGTERM drains the gateway', () => {
  let dataDir: string | undefined;
  let studio: ServerProcess | undefined;
  let mock: WireMock | undefined;
  const agents: Agent[] = [];
  afterAll(async () => {
    for (const agent of agents) agent.destroy();
    studio?.kill('SIGKILL');
    await studio?.exited;
    await mock?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('finishes the stream in flight, refuses new requests, exits 0, and the usage is in the log', {
    timeout: 120_000,
  }, async () => {
    mock = await openAiMock();
    const held = gate();
    mock.reply(
      openAiStream(
        [
          openAiWire.chunk({ role: 'assistant', content: '' }),
          openAiWire.chunk({ content: 'slow ' }),
          openAiWire.chunk({ content: 'answer' }),
          openAiWire.chunk({}, 'stop'),
          openAiWire.usageChunk({ prompt_tokens: 3, completion_tokens: 2 }),
        ],
        { after: 1, wait: held.wait },
      ),
    );
    dataDir = await mkdtemp(join(tmpdir(), 'studio-drain-'));
    const adminKey = `adm_${randomBytes(32).toString('base64url')}`;
    const env = {
      STUDIO_DATA_DIR: dataDir,
      ADMIN_SECRET_KEY: adminKey,
      STUDIO_MASTER_KEY: randomBytes(32).toString('hex'),
      OPENAI_API_KEY: 'sk-drain-0123456789',
      OPENAI_BASE_URL: `${mock.url}/v1`,
      STUDIO_DRAIN_S: '60',
    };
    studio = await startStudio(['gateway', 'start', '--port', '0'], env);
    const url = studio.url('Studio gateway');
    const gateway = { url, adminKey };
    await adminOk(gateway, 'POST', '/v1/studios/create', { name: 'Acme', studio_id: 'acme' });
    const token = (await adminOk(gateway, 'POST', '/v1/studios/tokens/apply', { studio_id: 'acme' })).json
      .user_token as string;
    const auth = { authorization: `Bearer ${token}` };

    // Two kept-alive connections opened before the signal: one for the probe, one for the API.
    const probe = new Agent({ keepAlive: true, maxSockets: 1 });
    const api = new Agent({ keepAlive: true, maxSockets: 1 });
    agents.push(probe, api);
    expect((await nodeGet(`${url}/ready`, probe)).status).toBe(200);
    expect((await nodeGet(`${url}/v1/ai/models`, api, auth)).status).toBe(200);

    const streaming = await fetch(`${url}/v1/ai/chat/completions`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json', 'x-request-id': 'drain-stream' },
      body: JSON.stringify({
        model: 'openai/gpt-4.1-mini',
        messages: [{ role: 'user', content: 'take your time' }],
        stream: true,
      }),
    });
    expect(streaming.status).toBe(200);
    const reader = streaming.body!.pipeThrough(new TextDecoderStream()).getReader();
    let streamed = '';
    while (!streamed.includes('slow ')) streamed += (await reader.read()).value ?? '';

    studio.kill('SIGTERM');
    // The signal takes a moment to arrive: until then /ready still says ready, on the same connection.
    let ready = await nodeGet(`${url}/ready`, probe);
    for (const deadline = Date.now() + 20_000; ready.status === 200 && Date.now() < deadline; )
      ready = await nodeGet(`${url}/ready`, probe);
    expect(ready.status).toBe(503);
    expect(ready.reusedSocket).toBe(true);
    expect(ready.headers['retry-after']).toBe('1');
    expect(ready.headers.connection).toBe('close');
    expect(JSON.parse(ready.body)).toMatchObject({ status: 'draining' });

    const refused = await nodeGet(`${url}/v1/ai/models`, api, auth);
    expect(refused.reusedSocket).toBe(true);
    expect(refused.status).toBe(503);
    expect(refused.headers.connection).toBe('close');
    expect(refused.headers['retry-after']).toBe('1');
    expect(JSON.parse(refused.body)).toMatchObject({ error: { code: 'unavailable' } });
    await expect(nodeGet(`${url}/health`, false)).rejects.toMatchObject({ code: 'ECONNREFUSED' });

    held.open();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      streamed += value;
    }
    expect(streamed).toContain('answer');
    expect(streamed.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(await studio.exited).toBe(0);

    studio = await startStudio(['gateway', 'start', '--port', '0'], env);
    const completed = await auditData<{ requestId: string; outputTokens: number }>(
      studio.url('Studio gateway'),
      adminKey,
      'GenerationCompleted',
    );
    expect(completed.filter((data) => data.requestId === 'drain-stream')).toEqual([
      expect.objectContaining({ requestId: 'drain-stream', outputTokens: 2 }),
    ]);
  });
});
