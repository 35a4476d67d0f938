import { describe, expect, it } from 'vitest';
import { asAdmin } from '../../support/admin.ts';
import { expectApiError, startTestGateway } from '../../support/gateway.ts';
import type { Json } from '../../support/mock-ai-upstreams.ts';
import { useRoutedGateway } from './support.ts';

/** Routes as admins keep them (upsert, list, remove, as events) and as the catalog shows them. */
const r = useRoutedGateway();
let n = 0;

const fallback = (id: string, ...models: string[]) => ({
  id,
  strategy: 'fallback',
  targets: models.map((model) => ({ model })),
});

describe('routes/upsert, routes/list, routes/remove', () => {
  it('keeps a route with its defaults filled in, lists it with its targets, removes it', async () => {
    const id = `team/smart${++n}`;
    const set = await r.upsert({
      id,
      strategy: 'weighted',
      targets: [{ model: 'compat/a', weight: 3 }, { model: 'compat/b' }],
      timeout_ms: 5_000,
      cooldown: { failures: 5 },
    });
    expect(set).toEqual({
      id,
      strategy: 'weighted',
      targets: [
        {
          model: 'compat/a',
          weight: 3,
          callable: true,
          state: 'healthy',
          recent_failures: 0,
          cooling_until: null,
        },
        {
          model: 'compat/b',
          weight: 1,
          callable: true,
          state: 'healthy',
          recent_failures: 0,
          cooling_until: null,
        },
      ],
      retry_on: [429, 500, 502, 503, 504, 'timeout', 'connection_error'],
      max_attempts: null,
      timeout_ms: 5_000,
      cooldown: { failures: 5, window_s: 60, cooldown_s: 30 },
      modalities: ['text', 'stream', 'chat'],
      available: true,
      updated_at: expect.any(String),
    });
    const listed = (await r.admin('GET', '/v1/ai/routes/list')).json.items;
    expect(listed.find((route: Json) => route.id === id)).toEqual(set);

    const removed = await r.admin('POST', '/v1/ai/routes/remove', { id });
    expect(removed.json).toEqual({ id, removed: true });
    const after = (await r.admin('GET', '/v1/ai/routes/list')).json.items;
    expect(after.map((route: Json) => route.id)).not.toContain(id);
    expectApiError(await r.admin('POST', '/v1/ai/routes/remove', { id }), 404, 'not_found');
  });

  it('records each change as an event with its actor and request id, and nothing for a repeat', async () => {
    const id = `audited${++n}`;
    const first = await r.admin('POST', '/v1/ai/routes/upsert', fallback(id, 'compat/a'));
    await r.admin('POST', '/v1/ai/routes/upsert', fallback(id, 'compat/a'));
    const removed = await r.admin('POST', '/v1/ai/routes/remove', { id });
    const events = (await r.pg.gw.running.ctx.events.readStream('routes')).filter(
      (e) => (e.data as { id: string }).id === id,
    );
    expect(events.map((e) => e.type)).toEqual(['RouteSet', 'RouteRemoved']);
    expect(events[0]!.metadata).toMatchObject({
      actor: 'admin',
      requestId: first.headers.get('x-request-id'),
    });
    expect(events[1]!.metadata).toMatchObject({ requestId: removed.headers.get('x-request-id') });
  });

  it('refuses ids a model could have, targets outside the catalog, repeated targets and too many attempts', async () => {
    const refused = async (body: unknown, param: string) => {
      const error = expectApiError(
        await r.admin('POST', '/v1/ai/routes/upsert', body),
        400,
        'validation_failed',
      );
      if (param) expect(error.param ?? error.message).toContain(param);
    };
    await refused(fallback('compat/mine', 'compat/a'), 'id');
    await refused(fallback('dev', 'compat/a'), 'id');
    await refused(fallback('bad id', 'compat/a'), 'id');
    await refused(fallback('ok', 'compat/nope'), 'targets');
    await refused(fallback('ok', 'dev/image'), 'targets');
    await refused(fallback('ok', 'compat/a', 'compat/a'), 'targets');
    await refused({ ...fallback('ok', 'compat/a'), max_attempts: 2 }, 'max_attempts');
    await refused({ ...fallback('ok', 'compat/a'), strategy: 'random' }, 'strategy');
    await refused({ ...fallback('ok', 'compat/a'), retry_on: [200] }, 'retry_on');
    await refused({ ...fallback('ok'), targets: [] }, 'targets');
  });
});

describe('routes in the catalog', () => {
  it('show a route like a model, with the modalities its callable targets share', async () => {
    const id = `catalogued${++n}`;
    await r.upsert(fallback(id, 'compat/a', 'dev/echo'));
    const user = (await r.pg.get('/v1/ai/models')).json;
    const item = user.items.find((m: Json) => m.id === id);
    expect(item).toEqual({
      id,
      name: id,
      description: 'Route (fallback) over compat/a, dev/echo',
      modalities: ['text', 'stream', 'chat'],
      tags: ['route'],
      meta: {},
    });
    expect(user.data).toContainEqual({ id, object: 'model', created: 0, owned_by: 'route' });

    const admin = (await r.admin('GET', '/v1/ai/models')).json.items.find((m: Json) => m.id === id);
    expect(admin).toMatchObject({
      available: true,
      missing_env: [],
      missing_programs: [],
      route: { id, strategy: 'fallback' },
    });
    expect(admin.route.targets.map((t: Json) => t.state)).toEqual(['healthy', 'healthy']);
  });

  it('hide from users a route none of whose targets can be called now; admins see it unavailable', async () => {
    const id = `stranded${++n}`;
    await r.upsert(fallback(id, 'compat/c'));
    await r.pg.setEnv('OPENAI_COMPATIBLE_MODELS', 'a,b');
    try {
      expect(await r.pg.userModelIds()).not.toContain(id);
      const admin = (await r.admin('GET', '/v1/ai/models')).json.items.find((m: Json) => m.id === id);
      expect(admin).toMatchObject({ available: false, modalities: [] });
      expect(admin.route.targets[0]).toMatchObject({ model: 'compat/c', callable: false });
      expectApiError(await r.pg.post('/v1/ai/text', { model: id, prompt: 'hi' }), 404, 'model_not_found');
    } finally {
      await r.pg.removeEnv('OPENAI_COMPATIBLE_MODELS');
    }
  });
});

describe('model access through a route', () => {
  it('lets a token allowed only the route id call it, and nothing else', async () => {
    const id = `allowed${++n}`;
    await r.upsert(fallback(id, 'compat/a', 'compat/b'));
    const issued = await r.admin('POST', '/v1/studios/tokens/apply', { studio_id: 'p', models: [id] });
    const token = issued.json.user_token;
    const call = (model: string) =>
      r.pg.gw.api('POST', '/v1/ai/chat/completions', {
        token,
        body: { model, messages: [{ role: 'user', content: 'hi' }] },
      });

    r.script('a', (_req, res) => {
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end('{}');
    });
    const routed = await call(id);
    expect(routed.status).toBe(200);
    expect(routed.json.model).toBe('compat/b');
    expect(r.calls()).toEqual(['a', 'b']);

    expectApiError(await call('compat/a'), 403, 'model_not_allowed');
    expectApiError(await call('compat/b'), 403, 'model_not_allowed');
    const listed = (await r.pg.gw.api('GET', '/v1/ai/models', { token })).json.items;
    expect(listed.map((m: Json) => m.id)).toEqual([id]);
  });

  it('refuses a token not allowed the route id, though it may call every target', async () => {
    const id = `forbidden${++n}`;
    await r.upsert(fallback(id, 'compat/a'));
    const issued = await r.admin('POST', '/v1/studios/tokens/apply', {
      studio_id: 'p',
      models: ['compat/*'],
    });
    const res = await r.pg.gw.api('POST', '/v1/ai/text', {
      token: issued.json.user_token,
      body: { model: id, prompt: 'hi' },
    });
    expectApiError(res, 403, 'model_not_allowed');
    expect(r.calls()).toEqual([]);
  });
});

describe('routes across a restart', { timeout: 60_000 }, () => {
  it('come back from the read model, callable as before (SQLite)', async () => {
    const gw = await startTestGateway({ store: 'sqlite', logLevel: 'silent' });
    try {
      await asAdmin(gw, 'POST', '/v1/studios/create', { name: 'R', studio_id: 'r' });
      const set = await asAdmin(gw, 'POST', '/v1/ai/routes/upsert', fallback('kept', 'dev/echo'));
      expect(set.status, set.text).toBe(200);
      await gw.restart();
      expect((await asAdmin(gw, 'GET', '/v1/ai/routes/list')).json.items).toEqual([set.json]);
      const token = (await asAdmin(gw, 'POST', '/v1/studios/tokens/apply', { studio_id: 'r' })).json
        .user_token;
      const res = await gw.api('POST', '/v1/ai/text', { token, body: { model: 'kept', prompt: 'hi' } });
      expect(res.json).toMatchObject({ model: 'dev/echo', parts: [{ text: 'Echo: hi' }] });
    } finally {
      await gw.close();
    }
  });
});
