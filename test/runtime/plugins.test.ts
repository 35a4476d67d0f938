import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAction, definePlugin } from '../../services/runtime/plugins/types.ts';
import { startTestStack, type TestStack } from '../support/runtime.ts';

const env: Record<string, string | undefined> = {};

/** Needs an env key to be available. */
const keyed = definePlugin({
  name: 'keyed',
  version: '0.1.0',
  description: 'needs KEYED_API_KEY',
  requires: { env: ['KEYED_API_KEY'], bins: [] },
  actions: [
    defineAction({
      name: 'ping',
      description: 'pong',
      input: z.strictObject({}),
      async handler() {
        return 'pong';
      },
    }),
  ],
});

/** Fails to start: it must end up `failed`, and nothing else must suffer. */
const broken = definePlugin({
  name: 'broken',
  version: '0.1.0',
  description: 'cannot start',
  requires: { env: [], bins: [] },
  actions: [],
  async start() {
    throw new Error('disk on fire');
  },
});

/** Needs a binary that does not exist. */
const needsBinary = definePlugin({
  name: 'needs-binary',
  version: '0.1.0',
  description: 'needs a binary',
  requires: { env: [], bins: ['definitely-not-installed-studio-bin'] },
  actions: [],
});

/** A guard that denies writes to secrets/. */
const guarded = definePlugin({
  name: 'policy',
  version: '0.1.0',
  description: 'guards',
  requires: { env: [], bins: [] },
  actions: [],
  guards: [
    {
      name: 'no-secrets-dir',
      check: (call) =>
        call.plugin === 'files' && String((call.input as { path?: string }).path ?? '').startsWith('secrets/')
          ? { allow: false, reason: 'secrets/ is off limits' }
          : { allow: true },
    },
  ],
});

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({ runtimeEnv: env, plugins: [keyed, broken, needsBinary, guarded] });
});
afterAll(() => stack?.close());

describe('plugin listing', () => {
  it('GET /api/ui/plugins has exactly the fields of the console summary', async () => {
    const res = await stack.call('GET', '/api/ui/plugins');
    expect(res.status).toBe(200);
    expect(res.json.success).toBe(true);
    const files = res.json.plugins.find((p: { name: string }) => p.name === 'files');
    expect(Object.keys(files).sort()).toEqual(
      [
        'name',
        'actions',
        'pipelines',
        'guards',
        'effects',
        'resolves',
        'hasSystem',
        'hasAvailability',
        'availability',
        'config',
      ].sort(),
    );
    expect(files.actions).toEqual(['read', 'write', 'list']);
    expect(files.availability).toEqual({ enabled: true, available: true, reasons: [] });
    expect(files.config.actions[0]).toEqual({
      name: 'read',
      description: 'Read a UTF-8 text file of the workspace',
      supportsCommand: true,
      supportsApi: true,
      apiMethod: 'POST',
      apiPath: '/api/files/read',
      // The form the console builds to run it: the same JSON Schema the model sees as the tool's parameters.
      input: {
        type: 'object',
        properties: { path: { type: 'string', minLength: 1, maxLength: 1000 } },
        required: ['path'],
        additionalProperties: false,
      },
    });
    expect(files.config.actions[2].input).toMatchObject({ properties: { path: { type: 'string' } } });
    expect(files.config.actions[2].input.required).toBeUndefined();
    const chat = res.json.plugins.find((p: { name: string }) => p.name === 'chat');
    expect(chat.pipelines).toEqual(['normalize']);
    expect(chat.effects).toEqual(['deliver-reply']);
  });

  it('GET /api/plugins/list and /catalog', async () => {
    const list = await stack.call('GET', '/api/plugins/list');
    const state = (name: string) => list.json.plugins.find((p: { name: string }) => p.name === name).state;
    expect([state('files'), state('chat'), state('keyed'), state('broken'), state('needs-binary')]).toEqual([
      'running',
      'running',
      'stopped', // missing env
      'failed', // started with the others and threw
      'stopped', // missing binary
    ]);
    const catalog = await stack.call('GET', '/api/plugins/catalog');
    expect(catalog.json.plugins.map((p: { name: string }) => p.name)).toEqual([
      'files',
      'chat',
      'mcp',
      'keyed',
      'broken',
      'needs-binary',
      'policy',
    ]);
  });
});

describe('lifecycle and availability', () => {
  it('missing env and missing binaries make a plugin unavailable, with reasons', async () => {
    const keyedAvailability = await stack.call('POST', '/api/plugins/availability', { pluginName: 'keyed' });
    expect(keyedAvailability.json.availability).toEqual({
      enabled: true,
      available: false,
      reasons: ['missing env KEYED_API_KEY'],
    });
    const binary = await stack.call('POST', '/api/plugins/availability', { pluginName: 'needs-binary' });
    expect(binary.json.availability.reasons).toEqual(['missing binary definitely-not-installed-studio-bin']);
    const start = await stack.call('POST', '/api/plugins/control', { pluginName: 'keyed', action: 'start' });
    expect(start.status).toBe(409);
  });

  it('availability flips when the required env key appears, and the plugin can then start', async () => {
    env.KEYED_API_KEY = 'k-123';
    const availability = await stack.call('POST', '/api/plugins/availability', { pluginName: 'keyed' });
    expect(availability.json.availability).toEqual({ enabled: true, available: true, reasons: [] });
    const started = await stack.call('POST', '/api/plugins/control', {
      pluginName: 'keyed',
      action: 'start',
    });
    expect(started.json.plugin.state).toBe('running');
    const ping = await stack.call('POST', '/api/plugins/action', {
      pluginName: 'keyed',
      actionName: 'ping',
      payload: {},
    });
    expect(ping.json).toEqual({ success: true, result: 'pong' });
  });

  it('start, stop, restart, status; an action on a stopped plugin is 409', async () => {
    const stopped = await stack.call('POST', '/api/plugins/control', { pluginName: 'files', action: 'stop' });
    expect(stopped.json.plugin.state).toBe('stopped');
    const refused = await stack.call('POST', '/api/plugins/action', {
      pluginName: 'files',
      actionName: 'list',
      payload: {},
    });
    expect(refused.status).toBe(409);
    expect(refused.json.error.code).toBe('conflict');
    const restarted = await stack.call('POST', '/api/plugins/control', {
      pluginName: 'files',
      action: 'restart',
    });
    expect(restarted.json.plugin.state).toBe('running');
    const status = await stack.call('POST', '/api/plugins/control', {
      pluginName: 'files',
      action: 'status',
    });
    expect(status.json.plugin).toMatchObject({ name: 'files', state: 'running', error: null });
  });

  it('a plugin that throws on start is failed, and the runtime goes on', async () => {
    const res = await stack.call('POST', '/api/plugins/control', { pluginName: 'broken', action: 'start' });
    expect(res.status).toBe(200);
    expect(res.json.plugin).toMatchObject({ state: 'failed', error: 'disk on fire' });
    expect(res.json.plugin.availability.reasons).toEqual(['failed: disk on fire']);
    expect((await stack.call('GET', '/health')).status).toBe(200);
    expect((await stack.call('POST', '/api/execute', { instructions: 'still here' })).status).toBe(200);
  });
});

describe('actions', () => {
  it('through /api/plugins/action, /api/plugins/command and the mounted route', async () => {
    const write = await stack.call('POST', '/api/files/write', { path: 'a/b.txt', content: 'mounted' });
    expect(write.json).toEqual({ success: true, path: 'a/b.txt', bytes: 7 });
    const read = await stack.call('POST', '/api/plugins/command', {
      pluginName: 'files',
      command: 'read',
      payload: { path: 'a/b.txt' },
    });
    expect(read.json.result).toEqual({ path: 'a/b.txt', content: 'mounted', bytes: 7 });
    const list = await stack.call('POST', '/api/plugins/action', {
      pluginName: 'files',
      actionName: 'list',
      payload: { path: 'a' },
    });
    expect(list.json.result.entries).toEqual([{ name: 'b.txt', type: 'file', path: 'a/b.txt' }]);
  });

  it.each([
    ['unknown plugin', { pluginName: 'nope', actionName: 'x', payload: {} }, 404, 'not_found'],
    ['unknown action', { pluginName: 'files', actionName: 'delete', payload: {} }, 404, 'not_found'],
    [
      'invalid payload',
      { pluginName: 'files', actionName: 'write', payload: { path: 5 } },
      400,
      'validation_failed',
    ],
    [
      'a path with ..',
      { pluginName: 'files', actionName: 'read', payload: { path: 'a/../../x' } },
      400,
      'validation_failed',
    ],
    [
      'an absolute path',
      { pluginName: 'files', actionName: 'write', payload: { path: '/tmp/x', content: 'x' } },
      400,
      'validation_failed',
    ],
    [
      'a guard that denies',
      { pluginName: 'files', actionName: 'write', payload: { path: 'secrets/k', content: 'x' } },
      403,
      'forbidden',
    ],
  ])('%s', async (_name, body, status, code) => {
    const res = await stack.call('POST', '/api/plugins/action', body);
    expect(res.status, res.text).toBe(status);
    expect(res.json.error.code).toBe(code);
    if (code === 'validation_failed' && _name === 'invalid payload') {
      expect(res.json.error.details).toEqual(
        expect.arrayContaining([expect.objectContaining({ path: 'path' })]),
      );
    }
  });

  it('a command must be an action that supports commands', async () => {
    const res = await stack.call('POST', '/api/plugins/command', {
      pluginName: 'chat',
      command: 'conversations',
      payload: {},
    });
    expect(res.status).toBe(404);
  });

  it('a symbolic link cannot lead a path outside the workspace', async () => {
    const { symlink } = await import('node:fs/promises');
    const { join } = await import('node:path');
    await symlink('/etc', join(stack.workspace, 'escape'));
    const res = await stack.call('POST', '/api/plugins/action', {
      pluginName: 'files',
      actionName: 'read',
      payload: { path: 'escape/hostname' },
    });
    expect(res.status).toBe(403);
    expect(res.json.error.code).toBe('path_outside_workspace');
  });
});
