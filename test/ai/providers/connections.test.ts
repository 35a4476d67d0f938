import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { adminOk, asAdmin } from '../../support/admin.ts';
import { expectApiError } from '../../support/gateway.ts';
import {
  anthropicMock,
  openAiMock,
  openAiWire,
  sendJson,
  type WireMock,
} from '../../support/mock-ai-upstreams.ts';
import { type ProviderGateway, startProviderGateway } from './support.ts';

// Provider connections made by an admin, as events: each a provider of the catalog of its own, its
// models `<connection>/<model>`, its key encrypted in the log and never shown again, reached over
// OpenAI's wire (here a mock that records what it receives).

const KEY = 'sk-connection-secret-0123456789abcd';
let mock: WireMock;
let pg: ProviderGateway;

beforeAll(async () => {
  mock = await openAiMock();
  pg = await startProviderGateway({});
});
beforeEach(() => mock.reset());
afterAll(async () => {
  await pg?.close();
  await mock?.close();
});

const connect = (body: Record<string, unknown>) => asAdmin(pg.gw, 'POST', '/v1/ai/providers/upsert', body);

describe('provider connections', () => {
  it('a connection serves its models through the official client, with its key, under its own ids', async () => {
    const made = await connect({
      id: 'team-llm',
      kind: 'openai_compatible',
      base_url: `${mock.url}/v1`,
      api_key: KEY,
      models: [{ id: 'fast', upstream_id: 'llama-3.1-8b' }],
    });
    expect(made.status, made.text).toBe(200);
    expect(made.json).toMatchObject({
      id: 'team-llm',
      api_key: `••••${KEY.slice(-4)}`,
      models: [{ id: 'team-llm/fast', upstream_id: 'llama-3.1-8b' }],
    });

    const answer = await pg.client().chat.completions.create({
      model: 'team-llm/fast',
      messages: [{ role: 'user', content: 'hello' }],
    });
    expect(answer.model).toBe('team-llm/fast');
    const sent = mock.requests.at(-1)!;
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(mock.body().model).toBe('llama-3.1-8b');
    expect(await pg.userModelIds()).toContain('team-llm/fast');
  });

  it('the key is in no event, list or answer in clear; left out on an update, it stays', async () => {
    await connect({
      id: 'keyed',
      kind: 'openai',
      base_url: `${mock.url}/v1`,
      api_key: KEY,
      models: [{ id: 'm' }],
    });
    await connect({
      id: 'keyed',
      kind: 'openai',
      base_url: `${mock.url}/v1`,
      models: [{ id: 'm' }, { id: 'n' }],
    });
    const events = await adminOk(pg.gw, 'GET', '/v1/audit/events?stream=connections&limit=100');
    const listed = await adminOk(pg.gw, 'GET', '/v1/ai/providers/list');
    expect(events.text).not.toContain(KEY);
    expect(listed.text).not.toContain(KEY);
    await pg
      .client()
      .chat.completions.create({ model: 'keyed/n', messages: [{ role: 'user', content: 'hi' }] });
    expect(mock.requests.at(-1)!.headers.authorization).toBe(`Bearer ${KEY}`);
  });

  it('a preset fills the base URL; removing a connection takes its models out of the catalog', async () => {
    const made = await connect({
      id: 'groq-eu',
      preset: 'groq',
      api_key: 'gsk-0123456789',
      models: [{ id: 'llama' }],
    });
    expect(made.json).toMatchObject({
      kind: 'openai_compatible',
      preset: 'groq',
      base_url: 'https://api.groq.com/openai/v1',
    });
    expect(await pg.userModelIds()).toContain('groq-eu/llama');
    await adminOk(pg.gw, 'POST', '/v1/ai/providers/remove', { id: 'groq-eu' });
    expect(await pg.userModelIds()).not.toContain('groq-eu/llama');
    expectApiError(
      await asAdmin(pg.gw, 'POST', '/v1/ai/providers/remove', { id: 'groq-eu' }),
      404,
      'not_found',
    );
  });

  it("refuses a built-in provider's id, a connection without a base URL, and a bad id, each saying why", async () => {
    const builtin = await connect({
      id: 'openai',
      kind: 'openai',
      base_url: 'https://x.example/v1',
      models: [{ id: 'm' }],
    });
    expect(expectApiError(builtin, 400, 'validation_failed').message).toContain("built-in provider's");
    const noUrl = await connect({ id: 'nowhere', kind: 'openai_compatible', models: [{ id: 'm' }] });
    expect(expectApiError(noUrl, 400, 'validation_failed').param).toBe('base_url');
    expectApiError(
      await connect({ id: 'Bad Id', preset: 'groq', models: [{ id: 'm' }] }),
      400,
      'validation_failed',
    );
  });

  it("Azure OpenAI: the deployment in the path, api-version in the query, the key in api-key (Azure's documented wire)", async () => {
    mock.reply((req, res) => {
      const path = '/openai/deployments/gpt-4o-prod/chat/completions?api-version=2024-10-21';
      if (req.method !== 'POST' || req.path !== path)
        return sendJson(res, 404, { error: { message: req.path } });
      return sendJson(res, 200, openAiWire.completion({ content: 'from azure' }, { model: 'gpt-4o' }));
    });
    const made = await connect({
      id: 'azure-eu',
      kind: 'azure_openai',
      base_url: mock.url,
      api_key: KEY,
      models: [{ id: 'gpt-4o', upstream_id: 'gpt-4o-prod' }],
    });
    expect(made.json).toMatchObject({ kind: 'azure_openai', api_version: '2024-10-21' });
    const answer = await pg.client().chat.completions.create({
      model: 'azure-eu/gpt-4o',
      messages: [{ role: 'user', content: 'hello' }],
    });
    expect(answer.choices[0]?.message.content).toBe('from azure');
    const sent = mock.requests.at(-1)!;
    expect(sent.headers['api-key']).toBe(KEY);
    expect(sent.headers.authorization).toBeUndefined();
    expect(JSON.parse(sent.body.toString()).messages).toEqual([{ role: 'user', content: 'hello' }]);
    expectApiError(
      await connect({ id: 'not-azure', preset: 'groq', api_version: '2024-10-21', models: [{ id: 'm' }] }),
      400,
      'validation_failed',
    );
  });

  it("Anthropic: the Messages API at the connection's URL with its x-api-key, native for Anthropic's client and translated for OpenAI's", async () => {
    const claude = await anthropicMock();
    try {
      const made = await connect({
        id: 'claude-eu',
        kind: 'anthropic',
        base_url: claude.url,
        api_key: KEY,
        models: [{ id: 'sonnet', upstream_id: 'claude-sonnet-4-5' }],
      });
      expect(made.status, made.text).toBe(200);
      const anthropic = new Anthropic({
        baseURL: `${pg.gw.url}/v1/ai/anthropic`,
        apiKey: pg.token,
        maxRetries: 0,
      });
      const message = await anthropic.messages.create({
        model: 'claude-eu/sonnet',
        max_tokens: 64,
        messages: [{ role: 'user', content: 'hello' }],
      });
      expect(message.type).toBe('message');
      const sent = claude.requests.at(-1)!;
      expect(sent.path).toBe('/v1/messages');
      expect(sent.headers['x-api-key']).toBe(KEY);
      expect(JSON.parse(sent.body.toString()).model).toBe('claude-sonnet-4-5');
      const answer = await pg.client().chat.completions.create({
        model: 'claude-eu/sonnet',
        messages: [{ role: 'user', content: 'hello' }],
      });
      expect(answer.choices[0]?.message.role).toBe('assistant');
      expect(JSON.parse(claude.requests.at(-1)!.body.toString()).messages).toEqual([
        { role: 'user', content: [{ type: 'text', text: 'hello' }] },
      ]);
    } finally {
      await claude.close();
    }
  });

  it('user tokens may not touch connections', async () => {
    const res = await pg.gw.api('GET', '/v1/ai/providers/list', { token: pg.token });
    expectApiError(res, 403, 'forbidden');
  });
});
