import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { definePlugin } from '../../services/runtime/plugins/types.ts';
import { adminOk, createStudio } from '../support/admin.ts';
import { startTestStack, type TestStack } from '../support/runtime.ts';

// The runtime's plugin actions as an MCP server (`/api/mcp`): the official MCP client over
// Streamable HTTP against a real runtime, then through a real gateway that has the runtime
// registered as one of its tool servers.

const RUNTIME_TOKEN = 'runtime-token-0123456789abcdef';
const bearer = { authorization: `Bearer ${RUNTIME_TOKEN}` };

/** A plugin with one action and a guard: the guard refuses a payload the schema accepts. */
const extra = definePlugin({
  name: 'extra',
  version: '0.1.0',
  description: 'for the tool list to change',
  requires: { env: [], bins: [] },
  actions: [
    {
      name: 'shout',
      description: 'Answers its word in capitals',
      input: z.strictObject({ word: z.string() }),
      handler: async (input: { word: string }) => input.word.toUpperCase(),
    },
  ],
  guards: [
    {
      name: 'no-secrets',
      check: (call) =>
        call.plugin === 'extra' && (call.input as { word?: string }).word === 'secret'
          ? { allow: false, reason: 'no secrets' }
          : { allow: true },
    },
  ],
});

let dir: string;
let stack: TestStack;
const clients: Client[] = [];

async function connect(url: string, headers: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'runtime-mcp-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  clients.push(client);
  return client;
}

const runtimeMcp = () => connect(`${stack.runtime.url}/api/mcp`, bearer);

const textOf = (result: Awaited<ReturnType<Client['callTool']>>) =>
  (result.content as { type: string; text?: string }[]).map((c) => c.text ?? '').join('');

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'studio-runtime-mcp-'));
  stack = await startTestStack({
    plugins: [extra],
    config: { STUDIO_WORKSPACE: join(dir, 'workspace'), STUDIO_RUNTIME_TOKEN: RUNTIME_TOKEN },
  });
  await writeFile(join(stack.workspace, 'hello.txt'), 'hello from the workspace');
}, 60_000);

afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  await stack?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('/api/mcp on the runtime', () => {
  it('is behind the runtime token: without it, 401', async () => {
    const res = await fetch(`${stack.runtime.url}/api/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('unauthenticated');
    await expect(connect(`${stack.runtime.url}/api/mcp`, {})).rejects.toThrow();
  });

  it('lists the running plugins’ actions as tools, named <plugin>__<action>, with their input schemas', async () => {
    const client = await runtimeMcp();
    const { tools } = await client.listTools();
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    expect(Object.keys(byName)).toEqual(
      expect.arrayContaining(['files__read', 'files__write', 'files__list', 'chat__inbound', 'extra__shout']),
    );
    expect(byName.files__read).toEqual({
      name: 'files__read',
      description: 'Read a UTF-8 text file of the workspace',
      inputSchema: {
        type: 'object',
        properties: { path: { type: 'string', minLength: 1, maxLength: 1000 } },
        required: ['path'],
        additionalProperties: false,
      },
    });
    expect(byName.files__list!.inputSchema.required).toBeUndefined();
  });

  it('calls an action: its answer as text and as structured content', async () => {
    const client = await runtimeMcp();
    const read = await client.callTool({ name: 'files__read', arguments: { path: 'hello.txt' } });
    expect(read.isError).toBeFalsy();
    const answer = { path: 'hello.txt', content: 'hello from the workspace', bytes: 24 };
    expect(read.structuredContent).toEqual(answer);
    expect(JSON.parse(textOf(read))).toEqual(answer);
    const list = await client.callTool({ name: 'files__list', arguments: {} });
    expect(list.structuredContent).toEqual({
      path: '.',
      entries: [{ name: 'hello.txt', type: 'file', path: 'hello.txt' }],
    });
    const shout = await client.callTool({ name: 'extra__shout', arguments: { word: 'hey' } });
    expect(textOf(shout)).toBe('HEY');
    expect(shout.structuredContent).toBeUndefined();
  });

  it('ends a session its client deletes: its id is unknown from then on', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${stack.runtime.url}/api/mcp`), {
      requestInit: { headers: bearer },
    });
    const client = new Client({ name: 'runtime-mcp-test', version: '1.0.0' });
    await client.connect(transport);
    clients.push(client);
    const sessionId = transport.sessionId!;
    await transport.terminateSession();
    const again = await fetch(`${stack.runtime.url}/api/mcp`, {
      method: 'DELETE',
      headers: { ...bearer, 'mcp-session-id': sessionId },
    });
    expect(again.status).toBe(404);
    expect(((await again.json()) as { error: { message: string } }).error.message).toMatch(
      /no such MCP session/,
    );
  });

  it('answers failures as tool errors: a bad input, a guard’s denial, a failing action, an unknown tool', async () => {
    const client = await runtimeMcp();
    const bad = await client.callTool({ name: 'files__read', arguments: { path: 42 } });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toMatch(/^validation_failed: invalid payload for files\.read\n- path: /);
    const denied = await client.callTool({ name: 'extra__shout', arguments: { word: 'secret' } });
    expect(denied.isError).toBe(true);
    expect(textOf(denied)).toBe('forbidden: denied by extra.no-secrets: no secrets');
    const outside = await client.callTool({ name: 'files__read', arguments: { path: '../../etc/passwd' } });
    expect(outside.isError).toBe(true);
    expect(textOf(outside)).not.toContain('root:');
    const unknown = await client.callTool({ name: 'files__delete', arguments: {} });
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown)).toMatch(/^not_found: no tool named files__delete/);
  });

  it('tells its clients when the tools change: a plugin stopped leaves the list, started again comes back', async () => {
    const client = await runtimeMcp();
    let changes = 0;
    let changed = () => {};
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changes++;
      changed();
    });
    const next = () => new Promise<void>((resolve) => (changed = resolve));
    const control = (action: string) =>
      stack.call('POST', '/api/plugins/control', { pluginName: 'extra', action }, bearer);

    let told = next();
    expect((await control('stop')).json.plugin.state).toBe('stopped');
    await told;
    expect((await client.listTools()).tools.map((t) => t.name)).not.toContain('extra__shout');
    const gone = await client.callTool({ name: 'extra__shout', arguments: { word: 'hey' } });
    expect(gone.isError).toBe(true);

    told = next();
    expect((await control('start')).json.plugin.state).toBe('running');
    await told;
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('extra__shout');
    expect(changes).toBe(2);
  });
});

describe('the runtime behind the gateway’s /v1/mcp', () => {
  it('a user token with tools runtime__* calls a runtime action; the call is recorded in mcp-calls-<studio>', async () => {
    const { gw } = stack;
    await adminOk(gw, 'POST', '/v1/mcp/servers/upsert', {
      id: 'runtime',
      transport: 'http',
      url: `${stack.runtime.url}/api/mcp`,
      headers: { Authorization: `Bearer ${RUNTIME_TOKEN}` },
    });
    await createStudio(gw, 'agents');
    const issued = await adminOk(gw, 'POST', '/v1/studios/tokens/apply', {
      studio_id: 'agents',
      tools: ['runtime__*'],
    });
    const client = await connect(`${gw.url}/v1/mcp`, { authorization: `Bearer ${issued.json.user_token}` });
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['runtime__files__read']));
    expect(tools.find((t) => t.name === 'runtime__files__read')!.inputSchema).toMatchObject({
      type: 'object',
      required: ['path'],
    });

    const read = await client.callTool({ name: 'runtime__files__read', arguments: { path: 'hello.txt' } });
    expect(read.isError).toBeFalsy();
    expect(read.structuredContent).toMatchObject({ content: 'hello from the workspace' });
    const bad = await client.callTool({ name: 'runtime__files__read', arguments: {} });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toMatch(/^validation_failed: /);

    const events = (await adminOk(gw, 'GET', '/v1/audit/events?stream=mcp-calls-agents&limit=100')).json
      .items as { type: string; actor: string; data: Record<string, unknown> }[];
    expect(events.map((e) => [e.type, e.actor, e.data.server, e.data.tool, e.data.status])).toEqual([
      ['McpToolCalled', `token:${issued.json.token.id}`, 'runtime', 'files__read', 'ok'],
      ['McpToolCalled', `token:${issued.json.token.id}`, 'runtime', 'files__read', 'tool_error'],
    ]);
  });
});

describe('draining the runtime', () => {
  it('ends the MCP sessions, their open streams included, so the drain finishes without cutting anything', async () => {
    const client = await runtimeMcp();
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    expect(await stack.runtime.drain(AbortSignal.timeout(30_000))).toEqual({ finished: true, durable: true });
  });
});
