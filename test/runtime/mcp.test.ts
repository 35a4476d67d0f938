import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../../shared/testing/wait.ts';
import { recordingServer, sendJson } from '../support/recording-server.ts';
import { startTestStack, type TestStack } from '../support/runtime.ts';

const FS_SERVER = join(
  import.meta.dirname,
  '../../node_modules/@modelcontextprotocol/server-filesystem/dist/index.js',
);

let dir: string;
let workspace: string;
let upstream: Awaited<ReturnType<typeof recordingServer>>;
let stack: TestStack;

interface ScriptedAnswer {
  choices: {
    index: number;
    message: {
      role: string;
      content: string | null;
      tool_calls?: { id: string; type: string; function: { name: string; arguments: string } }[];
    };
    finish_reason: string;
  }[];
}

/** The scripted model: write a note with `files`, read it back through MCP, then answer with what it read. */
function scripted(body: { messages: { role: string; content: string | null }[] }): ScriptedAnswer {
  const results = body.messages.filter((m) => m.role === 'tool').map((m) => m.content ?? '');
  const call = (id: string, name: string, args: unknown) => ({
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: null,
          tool_calls: [{ id, type: 'function', function: { name, arguments: JSON.stringify(args) } }],
        },
        finish_reason: 'tool_calls',
      },
    ],
  });
  if (results.length === 0)
    return call('call_1', 'files__write', { path: 'notes.txt', content: 'written by files, read by mcp' });
  if (results.length === 1)
    return call('call_2', 'mcp__fs__read_text_file', { path: join(workspace, 'notes.txt') });
  return {
    choices: [
      { index: 0, message: { role: 'assistant', content: `done: ${results[1]}` }, finish_reason: 'stop' },
    ],
  };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'studio-mcp-'));
  workspace = join(dir, 'workspace');
  upstream = await recordingServer((req, res) => {
    const body = JSON.parse(req.body.toString());
    const answer = scripted(body);
    if (body.stream) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const choice = answer.choices[0]!;
      const delta = choice.message.tool_calls
        ? { role: 'assistant', tool_calls: choice.message.tool_calls.map((c, index) => ({ index, ...c })) }
        : { role: 'assistant', content: choice.message.content };
      res.write(
        `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'scripted', choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`,
      );
      res.write(
        `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'scripted', choices: [{ index: 0, delta: {}, finish_reason: choice.finish_reason }] })}\n\n`,
      );
      res.end('data: [DONE]\n\n');
      return;
    }
    sendJson(res, 200, { id: 'c', object: 'chat.completion', created: 1, model: 'scripted', ...answer });
  });
  const config = join(dir, 'mcp.json');
  await writeFile(
    config,
    JSON.stringify({ servers: { fs: { command: process.execPath, args: [FS_SERVER, dir] } } }),
  );
  stack = await startTestStack({
    gateway: {
      processEnv: { OPENAI_COMPATIBLE_BASE_URL: `${upstream.url}/v1`, OPENAI_COMPATIBLE_MODELS: 'scripted' },
    },
    config: { STUDIO_MCP_CONFIG: config, STUDIO_WORKSPACE: workspace, STUDIO_AGENT_MODEL: 'compat/scripted' },
  });
});
afterAll(async () => {
  await stack?.close();
  await upstream?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('mcp plugin with a real MCP server over stdio', () => {
  it('is available and running, with the server tools as actions', async () => {
    const status = (await stack.call('POST', '/api/plugins/control', { pluginName: 'mcp', action: 'status' }))
      .json.plugin;
    expect(status).toMatchObject({ state: 'running', availability: { available: true, reasons: [] } });
    const ui = (await stack.call('GET', '/api/ui/plugins')).json.plugins.find(
      (p: { name: string }) => p.name === 'mcp',
    );
    expect(ui.actions).toEqual(
      expect.arrayContaining(['fs__read_text_file', 'fs__write_file', 'fs__list_directory']),
    );
    expect(ui.hasSystem).toBe(true);
  });

  it('an action calls the real tool', async () => {
    await writeFile(join(dir, 'hello.txt'), 'hello from disk');
    const res = await stack.call('POST', '/api/plugins/action', {
      pluginName: 'mcp',
      actionName: 'fs__read_text_file',
      payload: { path: join(dir, 'hello.txt') },
    });
    expect(res.status, res.text).toBe(200);
    expect(JSON.stringify(res.json.result)).toContain('hello from disk');
    const denied = await stack.call('POST', '/api/plugins/action', {
      pluginName: 'mcp',
      actionName: 'fs__read_text_file',
      payload: { path: '/etc/hostname' },
    });
    expect(denied.status).toBe(502);
    expect(denied.json.error.message).toMatch(/^mcp.fs__read_text_file failed: /);
  });

  it('a scripted OpenAI-compatible upstream behind the gateway drives multi-step tool use through files and mcp', async () => {
    const res = await stack.call('POST', '/api/execute', { instructions: 'write a note, then read it back' });
    expect(res.status, res.text).toBe(200);
    // The MCP server's structured result, fed back to the model as JSON.
    expect(res.json.message.parts[0].text).toBe('done: {"content":"written by files, read by mcp"}');
    // The upstream saw each tool's result fed back, in order.
    const toolMessages = upstream.requests
      .map(
        (r) =>
          JSON.parse(r.body.toString()) as {
            messages: { role: string; content: string }[];
            tools: { function: { name: string } }[];
          },
      )
      .at(-1)!;
    expect(toolMessages.messages.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual([
      '{"path":"notes.txt","bytes":29}',
      '{"content":"written by files, read by mcp"}',
    ]);
    expect(toolMessages.tools.map((t) => t.function.name)).toEqual(
      expect.arrayContaining(['files__write', 'mcp__fs__read_text_file']),
    );
    const events = (
      await stack.gw.api('GET', `/v1/audit/events?stream=session-${res.json.sessionId}&limit=1000`, {
        token: stack.gw.adminKey,
      })
    ).json.items;
    const tools = events.filter(
      (e: { type: string; data: { part?: { type: string; state: string } } }) =>
        e.type === 'PartUpdated' && e.data.part?.type === 'tool',
    );
    expect(
      tools.map(
        (e: { data: { part: { tool: string; state: string } } }) =>
          `${e.data.part.tool}:${e.data.part.state}`,
      ),
    ).toEqual([
      'files__write:pending',
      'files__write:running',
      'files__write:completed',
      'mcp__fs__read_text_file:pending',
      'mcp__fs__read_text_file:running',
      'mcp__fs__read_text_file:completed',
    ]);
  });

  it('a server that dies marks the plugin failed; the runtime goes on; a restart brings it back', async () => {
    const before = (await stack.call('POST', '/api/plugins/control', { pluginName: 'mcp', action: 'status' }))
      .json.plugin;
    const pid = before.details.servers[0].pid as number;
    process.kill(pid, 'SIGKILL');
    const state = async () =>
      (await stack.call('POST', '/api/plugins/control', { pluginName: 'mcp', action: 'status' })).json.plugin
        .state;
    await waitUntil(async () => (await state()) === 'failed', 'the mcp plugin is marked failed', 2_000);
    expect((await stack.call('GET', '/health')).status).toBe(200);
    const restarted = await stack.call('POST', '/api/plugins/control', {
      pluginName: 'mcp',
      action: 'restart',
    });
    expect(restarted.json.plugin.state).toBe('running');
    const newPid = restarted.json.plugin.details.servers[0].pid as number;
    expect(newPid).not.toBe(pid);

    // stop leaves no child running
    await stack.call('POST', '/api/plugins/control', { pluginName: 'mcp', action: 'stop' });
    for (let i = 0; i < 50 && isAlive(newPid); i++) await new Promise((r) => setTimeout(r, 20));
    expect(isAlive(newPid)).toBe(false);
    await stack.call('POST', '/api/plugins/control', { pluginName: 'mcp', action: 'start' });
  });
});

describe('mcp availability', () => {
  it('a missing command or a malformed config make it unavailable, with the reason', async () => {
    const { mcpPlugin } = await import('../../services/runtime/plugins/mcp/index.ts');
    const { PluginManager } = await import('../../services/runtime/plugins/manager.ts');
    const { createLogger } = await import('../../shared/logger.ts');
    const missing = join(dir, 'missing.json');
    await writeFile(missing, JSON.stringify({ servers: { x: { command: 'no-such-mcp-server-binary' } } }));
    const broken = join(dir, 'broken.json');
    await writeFile(broken, '{ "servers": ');
    const manager = new PluginManager({ workspace, env: () => undefined, logger: createLogger('silent') });
    const m1 = mcpPlugin({ configPath: missing });
    manager.register({ ...m1, name: 'mcp-missing' });
    const m2 = mcpPlugin({ configPath: broken });
    manager.register({ ...m2, name: 'mcp-broken' });
    expect(await manager.availability('mcp-missing')).toEqual({
      enabled: true,
      available: false,
      reasons: ['server x: missing command no-such-mcp-server-binary'],
    });
    expect(await manager.availability('mcp-broken')).toEqual({
      enabled: true,
      available: false,
      reasons: [`${broken} is not valid JSON`],
    });
  });
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
