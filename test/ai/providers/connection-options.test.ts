import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { adminOk, asAdmin } from '../../support/admin.ts';
import { expectApiError } from '../../support/gateway.ts';
import { anthropicMock, openAiMock, sendJson, type WireMock } from '../../support/mock-ai-upstreams.ts';
import { type ProviderGateway, startProviderGateway } from './support.ts';

// What a connection carries beyond a URL and a key: headers sent with every call (kept encrypted,
// masked when listed), models read from the upstream's own list, an Azure key sent as a bearer
// token, output caps a budget reserves, and the options each kind takes refused on the others.

const KEY = 'sk-connection-secret-0123456789abcd';
const HEADER_SECRET = 'org-secret-value-42-abcdefgh';
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

describe('connection headers', () => {
  it('are sent with every call, listed masked, kept out of the log in clear and out of upstream errors', async () => {
    const made = await connect({
      id: 'with-headers',
      kind: 'openai_compatible',
      base_url: `${mock.url}/v1`,
      api_key: KEY,
      headers: { 'OpenAI-Organization': HEADER_SECRET, 'X-Team': 'blue' },
      models: [{ id: 'm' }],
    });
    expect(made.status, made.text).toBe(200);
    expect(made.json.headers).toEqual({
      'OpenAI-Organization': `••••${HEADER_SECRET.slice(-4)}`,
      'X-Team': '••••',
    });

    await pg
      .client()
      .chat.completions.create({ model: 'with-headers/m', messages: [{ role: 'user', content: 'hi' }] });
    const sent = mock.requests.at(-1)!;
    expect(sent.headers['openai-organization']).toBe(HEADER_SECRET);
    expect(sent.headers['x-team']).toBe('blue');
    expect(sent.headers.authorization).toBe(`Bearer ${KEY}`);

    // An upstream that echoes the header back in its error: the client never reads it.
    mock.reply((_req, res) =>
      sendJson(res, 400, { error: { message: `bad organization ${HEADER_SECRET}` } }),
    );
    const failed = await pg
      .client()
      .chat.completions.create({ model: 'with-headers/m', messages: [{ role: 'user', content: 'hi' }] })
      .catch((error: Error) => error);
    expect(String(failed)).toContain('bad organization');
    expect(String(failed)).not.toContain(HEADER_SECRET);

    const events = await adminOk(pg.gw, 'GET', '/v1/audit/events?stream=connections&limit=100');
    expect(events.text).not.toContain(HEADER_SECRET);
  });

  it('left out on an update they stay; an empty object removes them', async () => {
    const base = {
      id: 'kept-headers',
      kind: 'openai_compatible',
      base_url: `${mock.url}/v1`,
      models: [{ id: 'm' }],
    };
    await connect({ ...base, headers: { 'X-Team': 'green-team' } });
    await connect(base);
    await pg
      .client()
      .chat.completions.create({ model: 'kept-headers/m', messages: [{ role: 'user', content: 'a' }] });
    expect(mock.requests.at(-1)!.headers['x-team']).toBe('green-team');
    await connect({ ...base, headers: {} });
    await pg
      .client()
      .chat.completions.create({ model: 'kept-headers/m', messages: [{ role: 'user', content: 'b' }] });
    expect(mock.requests.at(-1)!.headers['x-team']).toBeUndefined();
  });

  it('refuses headers the gateway sets itself, and values over two lines', async () => {
    const base = {
      id: 'bad-headers',
      kind: 'openai_compatible',
      base_url: `${mock.url}/v1`,
      models: [{ id: 'm' }],
    };
    const host = expectApiError(
      await connect({ ...base, headers: { Host: 'evil' } }),
      400,
      'validation_failed',
    );
    expect(host.message).toContain('set by the gateway');
    expectApiError(
      await connect({ ...base, headers: { 'X-A': 'one\r\nX-B: two' } }),
      400,
      'validation_failed',
    );
  });
});

describe('model discovery', () => {
  it("an OpenAI-style connection's models are read from GET /models once, when it is set, and recorded in its event", async () => {
    mock.reply((req, res) => {
      if (req.method === 'GET' && req.path === '/v1/models')
        return sendJson(res, 200, {
          object: 'list',
          data: [
            { id: 'llama-3.3-70b', object: 'model', owned_by: 'team' },
            { id: 'nomic-embed-text', object: 'model', owned_by: 'team' },
            { id: 'whisper-large-v3', object: 'model', owned_by: 'team' },
            { id: 'meta-llama/llama-3.1-8b', object: 'model', owned_by: 'team' },
          ],
        });
      return sendJson(res, 404, { error: { message: req.path } });
    });
    const made = await connect({
      id: 'found',
      kind: 'openai_compatible',
      base_url: `${mock.url}/v1`,
      api_key: KEY,
      discover: true,
      models: [{ id: 'llama-3.3-70b', upstream_id: 'llama-3.3-70b', max_output_tokens: 8_192 }],
    });
    expect(made.status, made.text).toBe(200);
    expect(mock.requests.map((r) => `${r.method} ${r.path} ${r.headers.authorization}`)).toEqual([
      `GET /v1/models Bearer ${KEY}`,
    ]);
    expect(made.json.discovered).toBe(true);
    expect(made.json.models).toEqual([
      {
        id: 'found/llama-3.3-70b',
        upstream_id: 'llama-3.3-70b',
        modalities: ['text', 'stream', 'chat'],
        max_output_tokens: 8_192,
      },
      { id: 'found/nomic-embed-text', upstream_id: 'nomic-embed-text', modalities: ['embed'] },
      {
        id: 'found/meta-llama/llama-3.1-8b',
        upstream_id: 'meta-llama/llama-3.1-8b',
        modalities: ['text', 'stream', 'chat'],
      },
    ]);
    const ids = await pg.userModelIds();
    expect(ids).toEqual(expect.arrayContaining(['found/llama-3.3-70b', 'found/meta-llama/llama-3.1-8b']));
    expect(ids).not.toContain('found/whisper-large-v3');

    // Calls are made with the model's upstream name; the list is not read again.
    mock.reset();
    await pg.client().chat.completions.create({
      model: 'found/meta-llama/llama-3.1-8b',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(mock.requests.map((r) => r.path)).toEqual(['/v1/chat/completions']);
    expect(mock.body().model).toBe('meta-llama/llama-3.1-8b');
    const events = await adminOk(pg.gw, 'GET', '/v1/audit/events?stream=connections&limit=100');
    expect(events.text).toContain('nomic-embed-text');
  });

  it("an Anthropic connection's models are read from GET /v1/models page by page", async () => {
    const claude = await anthropicMock();
    try {
      claude.reply((req, res) => {
        if (req.method !== 'GET' || !req.path.startsWith('/v1/models'))
          return sendJson(res, 404, { type: 'error', error: { type: 'not_found_error', message: req.path } });
        const second = req.path.includes('after_id=claude-a');
        return sendJson(res, 200, {
          data: [
            {
              type: 'model',
              id: second ? 'claude-b' : 'claude-a',
              display_name: 'Claude',
              created_at: '2025-01-01T00:00:00Z',
            },
          ],
          has_more: !second,
          first_id: second ? 'claude-b' : 'claude-a',
          last_id: second ? 'claude-b' : 'claude-a',
        });
      });
      const made = await connect({
        id: 'claude-found',
        kind: 'anthropic',
        base_url: claude.url,
        api_key: KEY,
        discover: true,
      });
      expect(made.status, made.text).toBe(200);
      expect(made.json.models.map((m: { id: string }) => m.id)).toEqual([
        'claude-found/claude-a',
        'claude-found/claude-b',
      ]);
      expect(claude.requests.map((r) => r.path)).toEqual([
        '/v1/models?limit=1000',
        '/v1/models?limit=1000&after_id=claude-a',
      ]);
      expect(claude.requests[0]!.headers['x-api-key']).toBe(KEY);
      expect(claude.requests[0]!.headers['anthropic-version']).toBe('2023-06-01');
    } finally {
      await claude.close();
    }
  });

  it("says why when the upstream cannot list: the upstream's error, or a kind that names its models", async () => {
    mock.reply((_req, res) => sendJson(res, 401, { error: { message: 'Incorrect API key provided' } }));
    const refused = await connect({
      id: 'no-list',
      kind: 'openai_compatible',
      base_url: `${mock.url}/v1`,
      discover: true,
    });
    expect(expectApiError(refused, 502, 'upstream_error').message).toContain('Incorrect API key provided');
    const azure = await connect({
      id: 'azure-list',
      kind: 'azure_openai',
      base_url: mock.url,
      api_key: KEY,
      discover: true,
    });
    expect(expectApiError(azure, 400, 'validation_failed').message).toContain('give models');
    const neither = await connect({ id: 'nothing', kind: 'openai_compatible', base_url: `${mock.url}/v1` });
    expect(expectApiError(neither, 400, 'validation_failed').message).toContain('discover');
  });
});

describe('options of a kind', () => {
  it('Azure OpenAI with auth: bearer sends the key as a bearer token (an Entra ID token)', async () => {
    mock.reply((_req, res) =>
      sendJson(res, 200, {
        choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
      }),
    );
    const made = await connect({
      id: 'azure-entra',
      kind: 'azure_openai',
      base_url: mock.url,
      api_key: 'eyJ0eXAiOiJKV1QiLCJhbGciOi-entra',
      options: { auth: 'bearer' },
      models: [{ id: 'gpt-4o', upstream_id: 'gpt-4o-prod' }],
    });
    expect(made.json.options).toEqual({ auth: 'bearer' });
    await pg
      .client()
      .chat.completions.create({ model: 'azure-entra/gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
    const sent = mock.requests.at(-1)!;
    expect(sent.path).toBe('/openai/deployments/gpt-4o-prod/chat/completions?api-version=2024-10-21');
    expect(sent.headers.authorization).toBe('Bearer eyJ0eXAiOiJKV1QiLCJhbGciOi-entra');
    expect(sent.headers['api-key']).toBeUndefined();
  });

  it('refuses what a kind does not take, naming the field', async () => {
    const base = { base_url: `${mock.url}/v1`, models: [{ id: 'm' }] };
    const cases: [Record<string, unknown>, string][] = [
      [{ id: 'r1', kind: 'openai_compatible', options: { region: 'us-east-1' } }, 'options'],
      [{ id: 'r2', kind: 'openai', options: { auth: 'bearer' } }, 'options.auth'],
      [{ id: 'r3', kind: 'bedrock', models: [{ id: 'm' }] }, 'options.region'],
      [
        { id: 'r4', kind: 'bedrock', options: { region: 'us-east-1', access_key_id: 'AKIDEXAMPLE12345' } },
        'options',
      ],
      [{ id: 'r5', preset: 'groq', kind: 'anthropic' }, 'preset'],
    ];
    for (const [body, param] of cases)
      expect(
        expectApiError(await connect({ ...base, ...body }), 400, 'validation_failed').param,
        JSON.stringify(body),
      ).toBe(param);
  });

  it("a model's max_output_tokens is what a budget reserves for an answer that asks no cap; context_window is shown", async () => {
    const made = await connect({
      id: 'capped',
      kind: 'openai_compatible',
      base_url: `${mock.url}/v1`,
      models: [{ id: 'm', context_window: 131_072, max_output_tokens: 4_096 }],
    });
    expect(made.json.models[0]).toMatchObject({ context_window: 131_072, max_output_tokens: 4_096 });
    const models = await adminOk(pg.gw, 'GET', '/v1/ai/models');
    const listed = models.json.items as { id: string; meta?: Record<string, unknown> }[];
    expect(listed.find((m) => m.id === 'capped/m')?.meta).toMatchObject({ context_window: 131_072 });
  });
});

describe('a kind with one home', () => {
  it("the gemini preset, or the gemini kind alone, fills the URL of Google's Gemini API", async () => {
    const made = await connect({
      id: 'gem',
      preset: 'gemini',
      api_key: KEY,
      models: [{ id: 'flash', upstream_id: 'gemini-2.5-flash' }],
    });
    expect(made.json).toMatchObject({
      kind: 'gemini',
      base_url: 'https://generativelanguage.googleapis.com',
    });
    const plain = await connect({ id: 'gem-plain', kind: 'gemini', models: [{ id: 'flash' }] });
    expect(plain.json.base_url).toBe('https://generativelanguage.googleapis.com');
  });
});
