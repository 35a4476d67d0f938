import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway } from '../support/gateway.ts';
import { type Probe, sendProbe } from '../support/probe.ts';
import { prototypeFingerprint } from '../support/prototypes.ts';
import { startTestStack, type TestStack } from '../support/runtime.ts';

// Ids that are names of Object.prototype members, through every route that takes an id (path, query,
// body), on the gateway and the runtime: each is answered in time, never with a 5xx, and no request
// changes the process for the requests after it.

const NAMES = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf'] as const;
/** The names a studio id or session id may be (`__proto__` starts with "_", which ids may not). */
const VALID_IDS = NAMES.filter((name) => /^[A-Za-z0-9]/.test(name));

let stack: TestStack;
let userToken: string;
let sessionId: string;
let before: Record<string, string>;

const json = (value: unknown) => JSON.stringify(value);
const q = encodeURIComponent;
/** A JSON object whose own key `name` holds an object: `JSON.parse` keeps `__proto__` as an own key. */
const withKey = (fields: Record<string, unknown>, name: string) =>
  `${json(fields).slice(0, -1)}${Object.keys(fields).length > 0 ? ',' : ''}${json(name)}:{"polluted":"yes"}}`;

beforeAll(async () => {
  before = prototypeFingerprint();
  stack = await startTestStack();
  const admin = stack.gw.adminKey;
  await stack.gw.api('POST', '/v1/studios/create', {
    token: admin,
    body: { name: 'Probe', studio_id: 'probe' },
  });
  userToken = (
    await stack.gw.api('POST', '/v1/studios/tokens/apply', { token: admin, body: { studio_id: 'probe' } })
  ).json.user_token;
  sessionId = (await stack.call('POST', '/api/sdk/sessions', { title: 'probe' })).json.id;
});
afterAll(() => stack?.close());

function gatewayProbes(name: string): Probe[] {
  const admin = stack.gw.adminKey;
  const user = userToken;
  const messages = [{ role: 'user', content: 'hi' }];
  return [
    { method: 'GET', path: `/v1/ai/jobs/get?id=${q(name)}`, token: user },
    { method: 'GET', path: `/v1/ai/jobs/get?id=${q(name)}`, token: admin },
    { method: 'GET', path: `/v1/ai/jobs/content?id=${q(name)}`, token: user },
    { method: 'GET', path: `/v1/ai/jobs/content?id=${q(name)}`, token: admin },
    { method: 'GET', path: `/v1/ai/usage?studio_id=${q(name)}`, token: admin },
    { method: 'GET', path: `/v1/ai/usage?studio_id=${q(name)}`, token: user },
    { method: 'POST', path: '/v1/ai/chat/completions', token: user, body: json({ model: name, messages }) },
    {
      method: 'POST',
      path: '/v1/ai/chat/completions',
      token: user,
      body: withKey({ model: 'dev/echo', messages }, name),
    },
    { method: 'POST', path: '/v1/ai/text', token: user, body: json({ model: name, prompt: 'hi' }) },
    { method: 'POST', path: '/v1/ai/video', token: user, body: json({ model: name, prompt: 'hi' }) },
    {
      method: 'POST',
      path: '/v1/ai/routes/upsert',
      token: admin,
      body: json({ id: name, strategy: 'fallback', targets: [{ model: 'dev/echo' }] }),
    },
    { method: 'POST', path: '/v1/ai/text', token: user, body: json({ model: name, prompt: 'hi' }) },
    { method: 'GET', path: '/v1/ai/models', token: user },
    { method: 'POST', path: '/v1/ai/routes/remove', token: admin, body: json({ id: name }) },
    { method: 'GET', path: `/v1/studios/list?status=${q(name)}`, token: admin },
    { method: 'GET', path: `/v1/studios/list?${q(name)}=x`, token: admin },
    { method: 'POST', path: '/v1/studios/create', token: admin, body: withKey({ name: 'x' }, name) },
    { method: 'POST', path: '/v1/studios/pause', token: admin, body: json({ studio_id: name }) },
    { method: 'POST', path: '/v1/studios/activate', token: admin, body: json({ studio_id: name }) },
    { method: 'POST', path: '/v1/studios/tokens/apply', token: admin, body: json({ studio_id: name }) },
    { method: 'GET', path: `/v1/studios/tokens/list?studio_id=${q(name)}`, token: admin },
    { method: 'POST', path: '/v1/studios/tokens/revoke', token: admin, body: json({ token_id: name }) },
    { method: 'POST', path: '/v1/studios/remove', token: admin, body: json({ studio_id: name }) },
    { method: 'POST', path: '/v1/env/upsert', token: admin, body: json({ key: name, value: 'v' }) },
    {
      method: 'POST',
      path: '/v1/env/upsert',
      token: admin,
      body: withKey({ key: 'PROBE', value: 'v' }, name),
    },
    { method: 'POST', path: '/v1/env/remove', token: admin, body: json({ key: name }) },
    { method: 'POST', path: '/v1/env/import', token: admin, body: json({ content: `${name}=x\n` }) },
    {
      method: 'POST',
      path: '/v1/accounts/create',
      token: admin,
      body: json({ studio_id: name, email: 'a@example.com' }),
    },
    { method: 'GET', path: `/v1/accounts/list?studio_id=${q(name)}`, token: admin },
    { method: 'POST', path: '/v1/accounts/remove', token: admin, body: json({ account_id: name }) },
    {
      method: 'POST',
      path: '/v1/accounts/login',
      body: json({ studio_id: name, email: name, password: name }),
    },
    { method: 'POST', path: '/v1/accounts/oauth/start', body: json({ provider: 'github', studio_id: name }) },
    { method: 'GET', path: `/v1/accounts/oauth/callback?state=${q(name)}&code=${q(name)}`, page: true },
    { method: 'GET', path: `/v1/accounts/oauth/callback?${q(name)}=x`, page: true },
    { method: 'GET', path: `/v1/accounts/oauth/result?state=${q(name)}` },
    { method: 'GET', path: `/v1/audit/events?stream=${q(name)}&type=${q(name)}`, token: admin },
    { method: 'GET', path: `/v1/${q(name)}/list`, token: admin },
    { method: 'GET', path: `/v1/studios/${q(name)}`, token: admin },
  ];
}

const plugins = (route: string, fields: Record<string, unknown>): Probe => ({
  method: 'POST',
  path: `/api/plugins/${route}`,
  body: json(fields),
});

function runtimeProbes(name: string): Probe[] {
  const sdk = '/api/sdk/sessions';
  const cursor = Buffer.from(name).toString('base64url');
  return [
    { method: 'GET', path: `${sdk}/${q(name)}` },
    { method: 'GET', path: `${sdk}/${q(name)}/history` },
    { method: 'GET', path: `${sdk}/${q(name)}/messages` },
    { method: 'GET', path: `${sdk}/${q(name)}/system` },
    { method: 'GET', path: `${sdk}/${q(name)}/events` },
    { method: 'POST', path: `${sdk}/${q(name)}/prompt`, body: json({ text: 'hi' }) },
    { method: 'POST', path: `${sdk}/${q(name)}/fork`, body: json({}) },
    { method: 'GET', path: `${sdk}?cursor=${q(name)}` },
    { method: 'GET', path: `${sdk}?cursor=${cursor}` },
    { method: 'GET', path: `${sdk}/${sessionId}/messages?cursor=${cursor}` },
    { method: 'GET', path: `${sdk}/${sessionId}/history?${q(name)}=1` },
    { method: 'POST', path: sdk, body: json({ title: name }) },
    { method: 'POST', path: sdk, body: withKey({ title: 'x' }, name) },
    { method: 'POST', path: `${sdk}/${sessionId}/prompt`, body: withKey({ text: 'hi' }, name) },
    {
      method: 'POST',
      path: `/api/dashboard/sessions/${q(name)}/execute`,
      body: json({ instructions: 'hi' }),
    },
    { method: 'POST', path: '/api/execute', body: json({ instructions: 'hi', chatId: name }) },
    { method: 'POST', path: '/api/execute', body: withKey({ instructions: 'hi' }, name) },
    plugins('control', { pluginName: name, action: 'status' }),
    plugins('availability', { pluginName: name }),
    plugins('action', { pluginName: name, actionName: 'list' }),
    plugins('action', { pluginName: 'chat', actionName: name }),
    plugins('action', { pluginName: 'chat', actionName: 'history', payload: { conversationId: name } }),
    plugins('action', { pluginName: 'files', actionName: 'list', payload: JSON.parse(withKey({}, name)) }),
    plugins('command', { pluginName: 'chat', command: name }),
    plugins('command', { pluginName: 'chat', command: 'history', payload: { conversationId: name } }),
    {
      method: 'POST',
      path: '/api/chat/inbound',
      body: json({ platform: 'slack', channel: name, text: 'hi' }),
    },
    { method: 'POST', path: '/api/chat/inbound', body: json({ platform: name, channel: name, text: 'hi' }) },
    {
      method: 'POST',
      path: '/api/chat/inbound',
      body: json({ platform: 'slack', channel: 'c', text: 'hi', sender: name }),
    },
    { method: 'GET', path: `/api/chat/conversations?${q(name)}=x` },
    { method: 'POST', path: '/api/files/read', body: json({ path: name }) },
    { method: 'POST', path: '/api/files/list', body: json({ path: name }) },
  ];
}

async function problemsOf(baseUrl: string, probes: Probe[]): Promise<string[]> {
  const problems: string[] = [];
  for (const probe of probes) {
    const { problem } = await sendProbe(baseUrl, probe);
    if (problem) problems.push(problem);
  }
  return problems;
}

describe.each(VALID_IDS)('%s as a legitimate id behaves like any other id', (name) => {
  it('a studio: created, found, listed, with tokens, accounts and usage of its own', async () => {
    const admin = (method: string, path: string, body?: unknown) =>
      stack.gw.api(method, path, { token: stack.gw.adminKey, ...(body === undefined ? {} : { body }) });
    const created = await admin('POST', '/v1/studios/create', { name: `Studio ${name}`, studio_id: name });
    expect(created.status, created.text).toBe(201);
    expect(created.json).toMatchObject({ id: name, status: 'active' });
    expect((await admin('POST', '/v1/studios/create', { name: 'again', studio_id: name })).status).toBe(409);
    const listed = (await admin('GET', '/v1/studios/list')).json.items.map((s: { id: string }) => s.id);
    expect(listed.filter((id: string) => id === name)).toEqual([name]);

    const applied = await admin('POST', '/v1/studios/tokens/apply', { studio_id: name });
    expect(applied.status, applied.text).toBe(201);
    const tokens = await admin('GET', `/v1/studios/tokens/list?studio_id=${name}`);
    expect(tokens.json.items.map((t: { id: string }) => t.id)).toEqual([applied.json.token.id]);
    const completion = await stack.gw.api('POST', '/v1/ai/chat/completions', {
      token: applied.json.user_token,
      body: { model: 'dev/echo', messages: [{ role: 'user', content: 'hello' }] },
    });
    expect(completion.status, completion.text).toBe(200);
    await expect
      .poll(async () => (await admin('GET', `/v1/ai/usage?studio_id=${name}`)).json.totals?.requests)
      .toBe(1);

    const account = await admin('POST', '/v1/accounts/create', {
      studio_id: name,
      email: `${name}@example.com`,
    });
    expect(account.status, account.text).toBe(201);
    const accounts = await admin('GET', `/v1/accounts/list?studio_id=${name}`);
    expect(accounts.json.items.map((a: { id: string }) => a.id)).toEqual([account.json.id]);

    expect((await admin('POST', '/v1/studios/pause', { studio_id: name })).json.status).toBe('paused');
    expect((await admin('POST', '/v1/studios/activate', { studio_id: name })).json.status).toBe('active');
  });

  it('a session: created by its chat id, found, listed, prompted', async () => {
    const executed = await stack.call('POST', '/api/execute', { instructions: 'hello', chatId: name });
    expect(executed.status, executed.text).toBe(200);
    expect(executed.json.sessionId).toBe(name);
    const found = await stack.call('GET', `/api/sdk/sessions/${name}`);
    expect(found.status, found.text).toBe(200);
    expect(found.json.id).toBe(name);
    const listed = await stack.call('GET', '/api/sdk/sessions?limit=200');
    expect(listed.json.items.filter((s: { id: string }) => s.id === name)).toHaveLength(1);
    const again = await stack.call('POST', `/api/dashboard/sessions/${name}/execute`, {
      instructions: 'again',
    });
    expect(again.status, again.text).toBe(200);
    const messages = await stack.call('GET', `/api/sdk/sessions/${name}/messages`);
    expect(messages.json.items.map((m: { role: string }) => m.role)).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
    ]);
  });
});

describe.each(NAMES)('%s through every route that takes an id', (name) => {
  it('the gateway answers each in time, never with a 5xx, errors in the envelope', async () => {
    expect(await problemsOf(stack.gw.url, gatewayProbes(name))).toEqual([]);
  });

  it('the runtime answers each in time, never with a 5xx, errors in the envelope', async () => {
    expect(await problemsOf(stack.runtime.url, runtimeProbes(name))).toEqual([]);
  });
});

describe('across a restart (SQLite: read models come back from their snapshots)', { timeout: 90_000 }, () => {
  it('studios named like prototype members are still found, listed, and their tokens still work', async () => {
    const gw = await startTestGateway({ store: 'sqlite', logLevel: 'silent' });
    try {
      const admin = (method: string, path: string, body?: unknown) =>
        gw.api(method, path, { token: gw.adminKey, ...(body === undefined ? {} : { body }) });
      const tokens = new Map<string, string>();
      for (const name of VALID_IDS) {
        await admin('POST', '/v1/studios/create', { name, studio_id: name });
        tokens.set(
          name,
          (await admin('POST', '/v1/studios/tokens/apply', { studio_id: name })).json.user_token,
        );
      }
      await gw.restart();
      const listed = (await admin('GET', '/v1/studios/list')).json.items.map((s: { id: string }) => s.id);
      expect(listed.sort()).toEqual([...VALID_IDS].sort());
      for (const [name, token] of tokens) {
        expect((await admin('POST', '/v1/studios/pause', { studio_id: name })).json).toMatchObject({
          id: name,
        });
        expect((await gw.api('GET', '/v1/ai/models', { token })).status).toBe(403);
      }
    } finally {
      await gw.close();
    }
  });
});

describe('afterwards', () => {
  it('no request changed a built-in prototype', () => {
    expect(prototypeFingerprint()).toEqual(before);
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
    expect(({} as { updated_at?: unknown }).updated_at).toBeUndefined();
  });

  it('normal requests still work on both servers', async () => {
    const admin = stack.gw.adminKey;
    const created = await stack.gw.api('POST', '/v1/studios/create', {
      token: admin,
      body: { name: 'After' },
    });
    expect(created.status, created.text).toBe(201);
    const token = (
      await stack.gw.api('POST', '/v1/studios/tokens/apply', {
        token: admin,
        body: { studio_id: created.json.id },
      })
    ).json.user_token;
    const completion = await stack.gw.api('POST', '/v1/ai/chat/completions', {
      token,
      body: { model: 'dev/echo', messages: [{ role: 'user', content: 'still here' }] },
    });
    expect(completion.status, completion.text).toBe(200);
    expect(completion.json.choices[0].message.content).toContain('still here');

    const session = await stack.call('POST', '/api/sdk/sessions', { title: 'after' });
    expect(session.status, session.text).toBe(201);
    const prompted = await stack.call('POST', `/api/sdk/sessions/${session.json.id}/prompt`, {
      text: 'still here',
    });
    expect(prompted.status, prompted.text).toBe(200);
    expect(prompted.json.status).toBe('completed');
    const executed = await stack.call('POST', '/api/execute', { instructions: 'still here' });
    expect(executed.status, executed.text).toBe(200);
  });
});
