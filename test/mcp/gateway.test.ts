import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminOk, asAdmin, createStudio } from '../support/admin.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { startToolServer, type ToolServer } from './support/tool-server.ts';

// The MCP gateway end to end: the official MCP client over Streamable HTTP against a real gateway,
// with two real tool servers behind it (the filesystem server over stdio, an SDK server over HTTP)
// and a stdio server that dies mid-call.

const root = join(import.meta.dirname, '..', '..');
const FILESYSTEM = join(
  root,
  'node_modules',
  '@modelcontextprotocol',
  'server-filesystem',
  'dist',
  'index.js',
);
const CRASH = join(import.meta.dirname, 'support', 'crash-server.mjs');

let gw: TestGateway;
let tools: ToolServer;
let dir: string;
const clients: Client[] = [];

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function connect(token: string): Promise<Client> {
  const client = new Client({ name: 'mcp-gateway-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${gw.url}/v1/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  clients.push(client);
  return client;
}

async function tokenOf(
  studioId: string,
  token: Record<string, unknown>,
): Promise<{ token: string; id: string }> {
  const issued = await adminOk(gw, 'POST', '/v1/studios/tokens/apply', { studio_id: studioId, ...token });
  return { token: issued.json.user_token, id: issued.json.token.id };
}

const textOf = (result: Awaited<ReturnType<Client['callTool']>>) =>
  (result.content as { type: string; text?: string }[]).map((c) => c.text ?? '').join('');

/** The MCP error a promise fails with. */
async function mcpErrorOf(promise: Promise<unknown>): Promise<McpError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(McpError);
  return error as McpError;
}

async function callEvents(studioId: string) {
  const res = await adminOk(gw, 'GET', `/v1/audit/events?stream=mcp-calls-${studioId}&limit=1000`);
  return res.json.items as { type: string; actor: string; data: Record<string, unknown> }[];
}

/** Reads SSE events off a response body until `until` says enough. */
async function readEvents(
  res: Response,
  until: (events: { id?: string; data: string }[]) => boolean,
): Promise<{ id?: string; data: string }[]> {
  const events: { id?: string; data: string }[] = [];
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  while (!until(events)) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const id = /^id: ?(.*)$/m.exec(frame)?.[1];
      const data = [...frame.matchAll(/^data: ?(.*)$/gm)].map((m) => m[1]).join('\n');
      if (data !== '') events.push({ ...(id === undefined ? {} : { id }), data });
    }
  }
  await reader.cancel();
  return events;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'studio-mcp-files-'));
  await writeFile(join(dir, 'hello.txt'), 'hello from the filesystem server');
  tools = await startToolServer();
  gw = await startTestGateway({
    store: 'sqlite',
    logLevel: 'silent',
    settings: { STUDIO_MCP_STDIO: 'allow', STUDIO_GATEWAY_PORT: String(await freePort()) },
  });
  await adminOk(gw, 'POST', '/v1/mcp/servers/upsert', {
    id: 'files',
    transport: 'stdio',
    command: process.execPath,
    args: [FILESYSTEM, dir],
  });
  await adminOk(gw, 'POST', '/v1/mcp/servers/upsert', {
    id: 'web',
    transport: 'http',
    url: tools.url,
    headers: { Authorization: 'Bearer upstream-secret-0123456789' },
    tool_prices_usd: { priced: 0.01 },
  });
  await adminOk(gw, 'POST', '/v1/mcp/servers/upsert', {
    id: 'crash',
    transport: 'stdio',
    command: process.execPath,
    args: [CRASH],
    env: { CRASH_NOTE: 'a-value-of-the-server-only' },
  });
}, 60_000);

afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  await gw?.close();
  await tools?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('servers as data', () => {
  it('lists the servers with env values and headers masked; a server removed leaves', async () => {
    const list = await adminOk(gw, 'GET', '/v1/mcp/servers/list');
    const byId = Object.fromEntries(list.json.items.map((s: { id: string }) => [s.id, s]));
    expect(byId.web).toMatchObject({
      transport: 'http',
      url: tools.url,
      headers: { Authorization: '••••6789' },
      tool_prices_usd: { priced: 0.01 },
    });
    expect(byId.crash).toMatchObject({ transport: 'stdio', env: { CRASH_NOTE: '••••only' } });
    expect(list.text).not.toContain('upstream-secret');
    await adminOk(gw, 'POST', '/v1/mcp/servers/upsert', {
      id: 'gone',
      transport: 'sse',
      url: 'http://127.0.0.1:9/sse',
    });
    await adminOk(gw, 'POST', '/v1/mcp/servers/remove', { id: 'gone' });
    const after = await adminOk(gw, 'GET', '/v1/mcp/servers/list');
    expect(after.json.items.map((s: { id: string }) => s.id).sort()).toEqual(['crash', 'files', 'web']);
    expect((await asAdmin(gw, 'POST', '/v1/mcp/servers/remove', { id: 'gone' })).status).toBe(404);
  });

  it('refuses a URL at a cloud metadata address', async () => {
    const res = await asAdmin(gw, 'POST', '/v1/mcp/servers/upsert', {
      id: 'metadata',
      transport: 'http',
      url: 'http://169.254.169.254/mcp',
    });
    expect(res.status).toBe(400);
    expect(res.json.error.param).toBe('url');
  });

  it('refuses stdio servers unless STUDIO_MCP_STDIO=allow, naming the setting', async () => {
    const plain = await startTestGateway({ store: 'memory', logLevel: 'silent' });
    try {
      const res = await asAdmin(plain, 'POST', '/v1/mcp/servers/upsert', {
        id: 'files',
        transport: 'stdio',
        command: 'npx',
      });
      expect(res.status).toBe(400);
      expect(res.json.error.message).toContain('STUDIO_MCP_STDIO=allow');
      expect(
        (
          await asAdmin(plain, 'POST', '/v1/mcp/servers/upsert', {
            id: 'web',
            transport: 'http',
            url: tools.url,
          })
        ).status,
      ).toBe(200);
    } finally {
      await plain.close();
    }
  });
});

describe('the door: /v1/mcp', () => {
  it('answers 401 with the resource metadata to find, without a token or with a bad one', async () => {
    const credentials: Record<string, string>[] = [{}, { authorization: 'Bearer sk-studio-not-a-token' }];
    for (const headers of credentials) {
      const res = await fetch(`${gw.url}/v1/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
      });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe(
        `Bearer resource_metadata="${gw.url}/.well-known/oauth-protected-resource/v1/mcp"`,
      );
    }
    for (const path of [
      '/.well-known/oauth-protected-resource',
      '/.well-known/oauth-protected-resource/v1/mcp',
    ]) {
      const meta = await fetch(`${gw.url}${path}`);
      expect(await meta.json()).toEqual({
        resource: `${gw.url}/v1/mcp`,
        authorization_servers: [],
        bearer_methods_supported: ['header'],
        resource_name: 'Studio MCP gateway',
      });
    }
  });

  it('offers every server namespaced, calls through to stdio and HTTP servers, with the upstream headers', async () => {
    await createStudio(gw, 'mcp-all');
    const { token } = await tokenOf('mcp-all', { tools: ['*'] });
    const client = await connect(token);
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining(['files__read_text_file', 'web__echo', 'web__add', 'crash__pid']),
    );
    const file = await client.callTool({
      name: 'files__read_text_file',
      arguments: { path: join(dir, 'hello.txt') },
    });
    expect(textOf(file)).toBe('hello from the filesystem server');
    const echo = await client.callTool({ name: 'web__echo', arguments: { text: 'hi' } });
    expect(textOf(echo)).toBe('echo: hi');
    expect(tools.authorizations.at(-1)).toBe('Bearer upstream-secret-0123456789');
  });

  it('reaches a server over the legacy HTTP+SSE transport, its headers on the stream and on every message', async () => {
    const legacy = await startToolServer('sse');
    try {
      await adminOk(gw, 'POST', '/v1/mcp/servers/upsert', {
        id: 'legacy',
        transport: 'sse',
        url: legacy.url,
        headers: { Authorization: 'Bearer legacy-secret-0123456789' },
      });
      await createStudio(gw, 'mcp-legacy');
      const { token } = await tokenOf('mcp-legacy', { tools: ['legacy__*'] });
      const client = await connect(token);
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining(['legacy__echo', 'legacy__add']));
      expect(names.every((name) => name.startsWith('legacy__'))).toBe(true);
      const sum = await client.callTool({ name: 'legacy__add', arguments: { a: 2, b: 40 } });
      expect(textOf(sum)).toBe('42');
      expect(legacy.calls.get('add')).toBe(1);
      // The GET that opened the stream and each POST of a message carried the connection's header.
      expect(legacy.authorizations.length).toBeGreaterThanOrEqual(3);
      expect(new Set(legacy.authorizations)).toEqual(new Set(['Bearer legacy-secret-0123456789']));
    } finally {
      await asAdmin(gw, 'POST', '/v1/mcp/servers/remove', { id: 'legacy' });
      await legacy.close();
    }
  });

  it('passes resources and prompts on, namespaced', async () => {
    const { token } = await tokenOf('mcp-all', { tools: ['web__*'] });
    const client = await connect(token);
    const { resources } = await client.listResources();
    expect(resources.map((r) => [r.uri, r.name])).toEqual([['web__memo://note', 'web__note']]);
    const read = await client.readResource({ uri: 'web__memo://note' });
    expect(read.contents).toEqual([{ uri: 'web__memo://note', text: 'remember the milk' }]);
    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name)).toEqual(['web__greet']);
    const prompt = await client.getPrompt({ name: 'web__greet', arguments: { who: 'Ada' } });
    expect(prompt.messages).toEqual([{ role: 'user', content: { type: 'text', text: 'Say hello to Ada' } }]);
    // the filesystem server's tools are not this token's
    expect((await client.listTools()).tools.every((t) => t.name.startsWith('web__'))).toBe(true);
  });
});

describe('access per token', () => {
  it('lists only what the token may call; anything else is an MCP error that never reaches the server', async () => {
    await createStudio(gw, 'mcp-narrow');
    const { token } = await tokenOf('mcp-narrow', { tools: ['files__read_text_file', 'web__echo'] });
    const client = await connect(token);
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual([
      'files__read_text_file',
      'web__echo',
    ]);
    expect((await client.listResources()).resources).toEqual([]);
    const before = tools.calls.get('add') ?? 0;
    const refused = await mcpErrorOf(client.callTool({ name: 'web__add', arguments: { a: 1, b: 2 } }));
    expect(refused.message).toContain('no tool web__add this token may use');
    expect(tools.calls.get('add') ?? 0).toBe(before);
    await mcpErrorOf(client.readResource({ uri: 'web__memo://note' }));
    await mcpErrorOf(client.getPrompt({ name: 'web__greet', arguments: { who: 'x' } }));
    const events = await callEvents('mcp-narrow');
    expect(events.map((e) => [e.data.server, e.data.tool, e.data.status])).toEqual([
      ['web', 'add', 'not_allowed'],
    ]);
  });

  it('a token issued without tools may call none', async () => {
    await createStudio(gw, 'mcp-none');
    const { token } = await tokenOf('mcp-none', {});
    const client = await connect(token);
    expect((await client.listTools()).tools).toEqual([]);
    await mcpErrorOf(client.callTool({ name: 'web__echo', arguments: { text: 'x' } }));
  });

  it('a token revoked while its client is connected can do nothing more', async () => {
    await createStudio(gw, 'mcp-revoked');
    const { token, id } = await tokenOf('mcp-revoked', { tools: ['web__echo'] });
    const client = await connect(token);
    await client.callTool({ name: 'web__echo', arguments: { text: 'before' } });
    await adminOk(gw, 'POST', '/v1/studios/tokens/revoke', { token_id: id });
    const refused = await client.callTool({ name: 'web__echo', arguments: { text: 'after' } }).then(
      () => undefined,
      (e: unknown) => e as Error & { code?: number },
    );
    expect(refused?.code).toBe(401);
  });

  it('binds a session to the token that opened it', async () => {
    await createStudio(gw, 'mcp-thief');
    const owner = await tokenOf('mcp-thief', { tools: ['*'] });
    const thief = await tokenOf('mcp-thief', { tools: ['*'] });
    const client = await connect(owner.token);
    const sessionId = (client.transport as StreamableHTTPClientTransport).sessionId!;
    const res = await fetch(`${gw.url}/v1/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${thief.token}`,
        'mcp-session-id': sessionId,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }),
    });
    expect(res.status).toBe(404);
  });
});

describe('upstream lifecycle', () => {
  it('a server killed mid-call answers an MCP error; the next call starts it again', async () => {
    await createStudio(gw, 'mcp-crash');
    const { token } = await tokenOf('mcp-crash', { tools: ['crash__*'] });
    const client = await connect(token);
    const first = textOf(await client.callTool({ name: 'crash__pid', arguments: {} }));
    const died = await mcpErrorOf(client.callTool({ name: 'crash__die', arguments: {} }));
    expect(died.message).toContain('MCP server crash');
    const second = textOf(await client.callTool({ name: 'crash__pid', arguments: {} }));
    expect(Number(second)).toBeGreaterThan(0);
    expect(second).not.toBe(first);
    const statuses = (await callEvents('mcp-crash')).map((e) => [e.data.tool, e.data.status]);
    expect(statuses).toEqual([
      ['pid', 'ok'],
      ['die', 'upstream_error'],
      ['pid', 'ok'],
    ]);
  });

  it("a stdio server's environment is PATH, HOME and its own variables, never the gateway's", async () => {
    await createStudio(gw, 'mcp-env');
    const { token } = await tokenOf('mcp-env', { tools: ['crash__env'] });
    const client = await connect(token);
    const said = JSON.parse(textOf(await client.callTool({ name: 'crash__env', arguments: {} })));
    // the test's own process (the gateway's) has many more: CI, USER, SHELL …
    expect(said).toEqual({ names: ['CRASH_NOTE', 'HOME', 'PATH'], note: 'a-value-of-the-server-only' });
  });

  it('passes notifications/tools/list_changed of a server on to its clients', async () => {
    await createStudio(gw, 'mcp-changes');
    const { token } = await tokenOf('mcp-changes', { tools: ['web__*'] });
    const client = await connect(token);
    await client.listTools(); // the gateway's connection to `web` is open and listening
    const changed = new Promise<void>((resolve) =>
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve()),
    );
    tools.addTool('late');
    await changed;
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('web__late');
  });
});

describe('governed: events, rate limits, budgets', () => {
  it('records every call in the studio stream: token, server, tool, digest of the arguments, status, latency, size', async () => {
    await createStudio(gw, 'mcp-log');
    const { token, id } = await tokenOf('mcp-log', { tools: ['web__echo'] });
    const client = await connect(token);
    const result = await client.callTool({ name: 'web__echo', arguments: { text: 'logged' } });
    const [event] = await callEvents('mcp-log');
    expect(event).toMatchObject({
      type: 'McpToolCalled',
      actor: `token:${id}`,
      data: {
        studioId: 'mcp-log',
        tokenId: id,
        server: 'web',
        tool: 'echo',
        argumentsSha256: createHash('sha256')
          .update(JSON.stringify({ text: 'logged' }))
          .digest('hex'),
        status: 'ok',
        resultBytes: Buffer.byteLength(JSON.stringify(result)),
        costMicroUsd: 0,
      },
    });
    expect(event!.data.latencyMs).toEqual(expect.any(Number));
    expect(JSON.stringify(event)).not.toContain('logged');
  });

  it("with the studio's capture set to full, a call's arguments and result are kept sealed, readable by its request id", async () => {
    await createStudio(gw, 'mcp-capture');
    await adminOk(gw, 'POST', '/v1/studios/capture/set', { studio_id: 'mcp-capture', capture: 'full' });
    const { token } = await tokenOf('mcp-capture', { tools: ['web__echo'] });
    const client = await connect(token);
    await client.callTool({ name: 'web__echo', arguments: { text: 'kept sealed' } });
    const [call] = await callEvents('mcp-capture');
    let captured: { type: string; data: { requestId: string } }[] = [];
    for (let i = 0; i < 100 && captured.length === 0; i++) {
      captured = (await adminOk(gw, 'GET', '/v1/audit/events?stream=payloads-mcp-capture&limit=10')).json
        .items;
      if (captured.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(captured).toEqual([expect.objectContaining({ type: 'PayloadCaptured' })]);
    expect(JSON.stringify(captured)).not.toContain('kept sealed');
    expect(captured[0]!.data.requestId).toBe((call!.data as { requestId: string }).requestId);
  });

  it('rate limits apply to tool calls', async () => {
    await createStudio(gw, 'mcp-rpm');
    const { token, id } = await tokenOf('mcp-rpm', { tools: ['web__echo'] });
    await adminOk(gw, 'POST', '/v1/studios/limits/set', { studio_id: 'mcp-rpm', token_id: id, rpm: 2 });
    const client = await connect(token);
    const before = tools.calls.get('echo') ?? 0;
    await client.callTool({ name: 'web__echo', arguments: { text: '1' } });
    await client.callTool({ name: 'web__echo', arguments: { text: '2' } });
    const limited = await mcpErrorOf(client.callTool({ name: 'web__echo', arguments: { text: '3' } }));
    expect(limited.message).toContain('rate limit reached');
    expect(limited.data).toEqual({ code: 'rate_limited' });
    expect(tools.calls.get('echo')).toBe(before + 2);
    expect((await callEvents('mcp-rpm')).map((e) => e.data.status)).toEqual(['ok', 'ok', 'rate_limited']);
  });

  it('max_concurrent bounds the tool calls under way', async () => {
    await createStudio(gw, 'mcp-concurrent');
    const { token } = await tokenOf('mcp-concurrent', { tools: ['web__slow', 'web__echo'] });
    await adminOk(gw, 'POST', '/v1/studios/limits/set', { studio_id: 'mcp-concurrent', max_concurrent: 1 });
    const client = await connect(token);
    const cancel = new AbortController();
    const started = tools.called('slow');
    const slow = client
      .callTool({ name: 'web__slow', arguments: {} }, undefined, { signal: cancel.signal })
      .catch((e: unknown) => e);
    await started;
    const busy = await mcpErrorOf(client.callTool({ name: 'web__echo', arguments: { text: 'x' } }));
    expect(busy.data).toEqual({ code: 'rate_limited' });
    expect(busy.message).toContain('at once');
    cancel.abort();
    await slow;
  });

  it("a priced call is charged against the studio's budgets, and refused once they cannot pay", async () => {
    await createStudio(gw, 'mcp-budget');
    const { token } = await tokenOf('mcp-budget', { tools: ['web__priced', 'web__echo'] });
    await adminOk(gw, 'POST', '/v1/studios/budgets/set', {
      studio_id: 'mcp-budget',
      amount_usd: 0.015,
      window: 'total',
      mode: 'hard',
    });
    const client = await connect(token);
    const before = tools.calls.get('priced') ?? 0;
    expect(textOf(await client.callTool({ name: 'web__priced', arguments: {} }))).toBe('paid for');
    const refused = await mcpErrorOf(client.callTool({ name: 'web__priced', arguments: {} }));
    expect(refused.data).toEqual({ code: 'budget_exceeded' });
    expect(tools.calls.get('priced')).toBe(before + 1);
    // a free tool still goes through
    await client.callTool({ name: 'web__echo', arguments: { text: 'free' } });
    const budgets = await adminOk(gw, 'GET', '/v1/studios/budgets/list?studio_id=mcp-budget');
    expect(budgets.json.items[0]).toMatchObject({ spent_usd: 0.01 });
    const usage = await adminOk(gw, 'GET', '/v1/ai/usage?studio_id=mcp-budget');
    expect(usage.json.items).toEqual([expect.objectContaining({ model: 'mcp/web__priced', cost_usd: 0.01 })]);
    expect(
      (await callEvents('mcp-budget')).map((e) => [e.data.tool, e.data.status, e.data.costMicroUsd]),
    ).toEqual([
      ['priced', 'ok', 10_000],
      ['priced', 'budget_exceeded', 0],
      ['echo', 'ok', 0],
    ]);
  });
});

describe('resumable streams', () => {
  it("a session's GET stream resumes with Last-Event-ID: what was sent while it was away is replayed", async () => {
    await createStudio(gw, 'mcp-resume');
    const { token } = await tokenOf('mcp-resume', { tools: ['web__*'] });
    const headers = {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    };
    const init = await fetch(`${gw.url}/v1/mcp`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: {
          protocolVersion: '2025-06-18',
          capabilities: {},
          clientInfo: { name: 'raw', version: '1' },
        },
      }),
    });
    const session = init.headers.get('mcp-session-id')!;
    const [answer] = await readEvents(init, (events) => events.some((e) => e.data.includes('"result"')));
    expect(JSON.parse(answer!.data).result.protocolVersion).toBe('2025-06-18');
    const inSession = { ...headers, 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' };
    const initialized = await fetch(`${gw.url}/v1/mcp`, {
      method: 'POST',
      headers: inSession,
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    });
    expect(initialized.status).toBe(202);

    const changed = (events: { id?: string; data: string }[]) =>
      events.filter((e) => e.data.includes('notifications/tools/list_changed'));
    const away = new AbortController();
    const stream = await fetch(`${gw.url}/v1/mcp`, { headers: inSession, signal: away.signal });
    expect(stream.headers.get('content-type')).toBe('text/event-stream');
    // a server registered or changed: every session hears that the tools changed
    const reading = readEvents(stream, (events) => changed(events).length === 1);
    await adminOk(gw, 'POST', '/v1/mcp/servers/upsert', {
      id: 'resume-a',
      transport: 'http',
      url: tools.url,
    });
    const [first] = changed(await reading);
    expect(first!.id).toBeTruthy();
    away.abort();
    // while the client is away
    await adminOk(gw, 'POST', '/v1/mcp/servers/upsert', {
      id: 'resume-b',
      transport: 'http',
      url: tools.url,
    });
    let resumed: Response | undefined;
    // until the gateway has seen the first stream go (one stream per session at a time)
    for (let tries = 0; tries < 100; tries++) {
      resumed = await fetch(`${gw.url}/v1/mcp`, { headers: { ...inSession, 'last-event-id': first!.id! } });
      if (resumed.status !== 409) break;
      await resumed.body?.cancel();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(resumed!.status).toBe(200);
    const replayed = changed(await readEvents(resumed!, (events) => changed(events).length === 1));
    expect(replayed).toHaveLength(1);
    expect(replayed[0]!.id).not.toBe(first!.id);
    await adminOk(gw, 'POST', '/v1/mcp/servers/remove', { id: 'resume-a' });
    await adminOk(gw, 'POST', '/v1/mcp/servers/remove', { id: 'resume-b' });
  });
});

describe('a session ended by its client', () => {
  it('DELETE ends it: its id is unknown from then on, and another token cannot end one not its own', async () => {
    await createStudio(gw, 'mcp-end');
    const { token } = await tokenOf('mcp-end', { tools: ['web__echo'] });
    const other = await tokenOf('mcp-end', { tools: ['web__echo'] });
    const client = new Client({ name: 'mcp-gateway-test', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${gw.url}/v1/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    });
    await client.connect(transport);
    clients.push(client);
    await client.callTool({ name: 'web__echo', arguments: { text: 'before' } });
    const sessionId = transport.sessionId!;
    const ended = (as: string) =>
      fetch(`${gw.url}/v1/mcp`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${as}`, 'mcp-session-id': sessionId },
      });

    const notTheirs = await ended(other.token);
    expect(notTheirs.status).toBe(404);
    await client.callTool({ name: 'web__echo', arguments: { text: 'still there' } });

    await transport.terminateSession();
    expect(transport.sessionId).toBeUndefined();
    const again = await ended(token);
    expect(again.status).toBe(404);
    expect(((await again.json()) as { error: { message: string } }).error.message).toMatch(
      /no such MCP session/,
    );
    const withoutSession = await fetch(`${gw.url}/v1/mcp`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(withoutSession.status).toBe(400);
  });
});

describe('the gateway restarted', () => {
  it('a connected client is told its session is gone, initializes again and calls on', async () => {
    await createStudio(gw, 'mcp-restart');
    const { token } = await tokenOf('mcp-restart', { tools: ['web__echo'] });
    const client = await connect(token);
    await client.callTool({ name: 'web__echo', arguments: { text: 'before' } });
    await gw.restart();
    const lost = await client.callTool({ name: 'web__echo', arguments: { text: 'lost' } }).then(
      () => undefined,
      (e: unknown) => e as Error & { code?: number },
    );
    expect(lost?.code).toBe(404);
    await client.close();
    const again = await connect(token);
    expect(textOf(await again.callTool({ name: 'web__echo', arguments: { text: 'after' } }))).toBe(
      'echo: after',
    );
  });
});
