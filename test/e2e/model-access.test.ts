import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { adminOk } from '../support/admin.ts';
import {
  expectApiError,
  sleep,
  startTestGateway,
  type TestGateway,
  type TestStoreKind,
} from '../support/gateway.ts';
import { openAiMock, type WireMock } from '../support/mock-ai-upstreams.ts';

// A token limited to some models (`tokens/apply {models}`) sees only those in the catalog and the
// prices, and is refused every other model on every route that calls one, before anything goes
// upstream. A token without `models` and the admin key are not limited. Over real HTTP, with OpenAI
// served by a mock upstream that counts what reaches it.

interface Route {
  name: string;
  path: string;
  /** The model this route calls for a token limited to `dev/*`, and one it may not call. */
  dev: string;
  other: string;
  body(model: string): Record<string, unknown>;
}

const ROUTES: Route[] = [
  {
    name: 'text',
    path: '/v1/ai/text',
    dev: 'dev/echo',
    other: 'openai/gpt-4o-mini',
    body: (model) => ({ model, prompt: 'hello' }),
  },
  {
    name: 'stream',
    path: '/v1/ai/stream',
    dev: 'dev/echo',
    other: 'openai/gpt-4o-mini',
    body: (model) => ({ model, prompt: 'hello' }),
  },
  {
    name: 'chat completions',
    path: '/v1/ai/chat/completions',
    dev: 'dev/echo',
    other: 'openai/gpt-4o-mini',
    body: (model) => ({ model, messages: [{ role: 'user', content: 'hello' }] }),
  },
  {
    name: 'chat completions, streamed',
    path: '/v1/ai/chat/completions',
    dev: 'dev/echo',
    other: 'openai/gpt-4o-mini',
    body: (model) => ({ model, messages: [{ role: 'user', content: 'hello' }], stream: true }),
  },
  {
    name: 'responses',
    path: '/v1/ai/responses',
    dev: 'dev/echo',
    other: 'openai/gpt-4o-mini',
    body: (model) => ({ model, input: 'hello' }),
  },
  {
    name: 'responses, streamed',
    path: '/v1/ai/responses',
    dev: 'dev/echo',
    other: 'openai/gpt-4o-mini',
    body: (model) => ({ model, input: 'hello', stream: true }),
  },
  {
    name: 'image',
    path: '/v1/ai/image',
    dev: 'dev/image',
    other: 'openai/gpt-image-1',
    body: (model) => ({ model, prompt: 'a lighthouse' }),
  },
  {
    name: 'tts',
    path: '/v1/ai/tts',
    dev: 'dev/tts',
    other: 'openai/tts-1',
    body: (model) => ({ model, input: 'hello' }),
  },
  {
    name: 'asr',
    path: '/v1/ai/asr',
    dev: 'dev/asr',
    other: 'openai/whisper-1',
    body: (model) => ({
      model,
      audio: Buffer.from('RIFF fake audio').toString('base64'),
      mime_type: 'audio/wav',
    }),
  },
  {
    name: 'video',
    path: '/v1/ai/video',
    dev: 'dev/video',
    other: 'openai/sora-2',
    body: (model) => ({ model, prompt: 'waves' }),
  },
];

describe.each<TestStoreKind>(['memory', 'sqlite'])('model access per token (%s store)', (store) => {
  let mock: WireMock;
  let gw: TestGateway;
  /** Limited to `dev/*`; limited to one exact id; not limited. */
  let devOnly: string;
  let exact: string;
  let open: string;

  const apply = async (body: Record<string, unknown>) =>
    (await adminOk(gw, 'POST', '/v1/studios/tokens/apply', { studio_id: 'acme', ...body })).json;
  const modelIds = async (token: string) =>
    ((await gw.api('GET', '/v1/ai/models', { token })).json.data as { id: string }[]).map((m) => m.id);
  const priced = async (token: string) =>
    ((await gw.api('GET', '/v1/ai/prices', { token })).json.items as { model: string }[]).map((p) => p.model);
  const queuedModels = async () =>
    (
      (await gw.api('GET', '/v1/audit/events?type=JobQueued&limit=1000', { token: gw.adminKey })).json
        .items as {
        data: { model: string };
      }[]
    ).map((e) => e.data.model);

  beforeAll(async () => {
    mock = await openAiMock();
    gw = await startTestGateway({
      store,
      logLevel: 'silent',
      processEnv: { OPENAI_API_KEY: 'sk-model-access-0123456789', OPENAI_BASE_URL: `${mock.url}/v1` },
      ai: { jobPollMs: 5 },
    });
    await adminOk(gw, 'POST', '/v1/studios/create', { name: 'Acme', studio_id: 'acme' });
    devOnly = (await apply({ name: 'dev only', models: ['dev/*'] })).user_token;
    exact = (await apply({ name: 'one model', models: ['openai/gpt-4o-mini'] })).user_token;
    open = (await apply({ name: 'every model' })).user_token;
  });
  beforeEach(() => mock.reset());
  afterAll(async () => {
    await gw?.close();
    await mock?.close();
  });

  it('tokens/apply answers the token with its models; tokens/list shows them, null for every model', async () => {
    const applied = await apply({ name: 'two', models: ['dev/echo', 'openai/*', 'dev/echo'] });
    expect(applied.token.models).toEqual(['dev/echo', 'openai/*']);
    const listed = (await adminOk(gw, 'GET', '/v1/studios/tokens/list?studio_id=acme')).json.items as {
      name: string;
      models: string[] | null;
    }[];
    expect(Object.fromEntries(listed.map((t) => [t.name, t.models]))).toEqual({
      'dev only': ['dev/*'],
      'one model': ['openai/gpt-4o-mini'],
      'every model': null,
      two: ['dev/echo', 'openai/*'],
    });
  });

  it.each([
    ['an empty list', []],
    ['an empty pattern', ['']],
    ['a wildcard other than *', ['openai/gpt-4?']],
    ['white space', ['dev/ echo']],
    ['more than 100 patterns', Array.from({ length: 101 }, (_, i) => `dev/m${i}`)],
    ['a pattern over 200 characters', [`dev/${'x'.repeat(200)}`]],
    ['not a list', 'dev/*'],
  ])('tokens/apply refuses %s: 400, and no token is issued', async (_label, models) => {
    const before = (await gw.api('GET', '/v1/studios/tokens/list?studio_id=acme', { token: gw.adminKey }))
      .json.items.length;
    const res = await gw.api('POST', '/v1/studios/tokens/apply', {
      token: gw.adminKey,
      body: { studio_id: 'acme', models },
    });
    expectApiError(res, 400, 'validation_failed');
    expect(
      (await gw.api('GET', '/v1/studios/tokens/list?studio_id=acme', { token: gw.adminKey })).json.items,
    ).toHaveLength(before);
  });

  it('the catalog and the prices show a limited token only the models it may call', async () => {
    const devModels = ['dev/echo', 'dev/image', 'dev/tts', 'dev/asr', 'dev/video'];
    const seen = await modelIds(devOnly);
    expect(seen).toEqual(expect.arrayContaining(devModels));
    expect(seen.filter((id) => !id.startsWith('dev/'))).toEqual([]);
    const items = (await gw.api('GET', '/v1/ai/models', { token: devOnly })).json.items as { id: string }[];
    expect(items.map((m) => m.id)).toEqual(seen);
    expect(await priced(devOnly)).toEqual([...seen].sort());

    expect(await modelIds(exact)).toEqual(['openai/gpt-4o-mini']);
    expect(await priced(exact)).toEqual(['openai/gpt-4o-mini']);
  });

  it('a token without models sees every callable model and its price; the admin key every model, callable or not', async () => {
    const every = await modelIds(open);
    expect(every).toEqual(expect.arrayContaining(['dev/echo', 'openai/gpt-4o-mini', 'openai/sora-2']));
    expect(await priced(open)).toEqual([...every].sort());
    const all = await modelIds(gw.adminKey);
    expect(all).toEqual(expect.arrayContaining([...every, 'anthropic/claude-sonnet-4-5']));
    expect(await priced(gw.adminKey)).toEqual([...all].sort());
  });

  describe.each(ROUTES)('$name', (route) => {
    it(`a token limited to dev/* calls ${route.dev}`, async () => {
      const res = await gw.api('POST', route.path, { token: devOnly, body: route.body(route.dev) });
      expect(res.status, res.text).toBe(route.name === 'video' ? 202 : 200);
    });

    it(`a token limited to dev/* is refused ${route.other} with 403 model_not_allowed, and nothing goes upstream`, async () => {
      const res = await gw.api('POST', route.path, { token: devOnly, body: route.body(route.other) });
      const error = expectApiError(res, 403, 'model_not_allowed');
      expect(error).toMatchObject({ type: 'permission_error', param: 'model' });
      expect(error.message).toContain(route.other);
      expect(mock.requests).toEqual([]);
      // A video job is queued before its 202 and started upstream after: no job was queued at all.
      expect(await queuedModels()).not.toContain(route.other);
    });

    it(`a token without models reaches the upstream with ${route.other}`, async () => {
      const res = await gw.api('POST', route.path, { token: open, body: route.body(route.other) });
      expect(res.status, res.text).not.toBe(403);
      // Chat is answered by the mock; other modalities reach it and get its 404 (502 here, or a failed job).
      for (let i = 0; i < 200 && mock.requests.length === 0; i++) await sleep(5);
      expect(mock.requests.length).toBeGreaterThan(0);
    });
  });

  it('a token limited to one exact id calls that model and no other, even of the same provider', async () => {
    const allowed = await gw.api('POST', '/v1/ai/text', {
      token: exact,
      body: { model: 'openai/gpt-4o-mini', prompt: 'hi' },
    });
    expect(allowed.status, allowed.text).toBe(200);
    expect(allowed.json.parts[0].text).toBe('Echo: hi');
    for (const model of ['openai/gpt-4o', 'dev/echo']) {
      const refused = await gw.api('POST', '/v1/ai/text', { token: exact, body: { model, prompt: 'hi' } });
      expectApiError(refused, 403, 'model_not_allowed');
    }
  });

  // On a durable store: the restriction is in the log, and in the snapshot read at the next start.
  if (store === 'sqlite')
    it('a restart keeps every token to its models', async () => {
      await gw.restart();
      expect((await modelIds(devOnly)).filter((id) => !id.startsWith('dev/'))).toEqual([]);
      expectApiError(
        await gw.api('POST', '/v1/ai/text', {
          token: devOnly,
          body: { model: 'openai/gpt-4o-mini', prompt: 'hi' },
        }),
        403,
        'model_not_allowed',
      );
      expect(
        (await gw.api('POST', '/v1/ai/text', { token: devOnly, body: { model: 'dev/echo', prompt: 'hi' } }))
          .status,
      ).toBe(200);
      expect(await modelIds(open)).toContain('openai/gpt-4o-mini');
    });
});
