import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createLogger } from '../../../shared/logger.ts';
import { PluginManager } from '../plugins/manager.ts';
import { definePlugin } from '../plugins/types.ts';
import { actionTools, callActionTool } from './tools.ts';

/** An action that never answers, one that throws something not an ApiError, and one with no object input. */
const stuck = definePlugin({
  name: 'stuck',
  version: '0.1.0',
  description: 'never answers',
  requires: { env: [], bins: [] },
  actions: [
    {
      name: 'wait',
      description: 'never answers',
      input: z.strictObject({}),
      handler: () => new Promise(() => {}),
    },
    {
      name: 'crash',
      description: 'throws',
      input: z.strictObject({}),
      handler: async () => {
        throw new TypeError('boom');
      },
    },
    { name: 'anything', description: 'takes anything', input: z.unknown(), handler: async () => [1, 2] },
  ],
});

async function manager(): Promise<PluginManager> {
  const plugins = new PluginManager({
    workspace: '/nowhere',
    env: () => undefined,
    logger: createLogger('silent'),
  });
  plugins.register(stuck);
  await plugins.startAll();
  return plugins;
}

describe('plugin actions as MCP tools', () => {
  it('an input that is not an object schema is offered as any object', async () => {
    const tools = actionTools(await manager());
    expect(tools.find((t) => t.name === 'stuck__anything')!.inputSchema).toEqual({ type: 'object' });
    expect(tools.find((t) => t.name === 'stuck__wait')!.inputSchema).toMatchObject({ type: 'object' });
  });

  it('an action that does not answer in time is a tool error, and so is a call its client cancels', async () => {
    const plugins = await manager();
    const late = await callActionTool(
      plugins,
      'stuck__wait',
      {},
      {
        signal: new AbortController().signal,
        deadlineMs: 5,
      },
    );
    expect(late).toEqual({
      content: [{ type: 'text', text: 'upstream_timeout: stuck.wait did not answer within 0.005 s' }],
      isError: true,
    });
    const cancel = new AbortController();
    const cancelled = callActionTool(plugins, 'stuck__wait', {}, { signal: cancel.signal });
    cancel.abort();
    expect(await cancelled).toMatchObject({
      isError: true,
      content: [{ text: 'unavailable: stuck.wait: the call was cancelled' }],
    });
  });

  it('an action that throws is a tool error saying why; an answer that is not an object is text only', async () => {
    const plugins = await manager();
    const signal = new AbortController().signal;
    expect(await callActionTool(plugins, 'stuck__crash', {}, { signal })).toEqual({
      content: [{ type: 'text', text: 'upstream_error: stuck.crash failed: boom' }],
      isError: true,
    });
    expect(await callActionTool(plugins, 'stuck__anything', {}, { signal })).toEqual({
      content: [{ type: 'text', text: '[1,2]' }],
    });
  });
});
