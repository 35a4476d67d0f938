import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../support/runtime.ts';

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(() => stack?.close());

const sessionEvents = async (sessionId: string) =>
  (
    await stack.gw.api('GET', `/v1/audit/events?stream=session-${sessionId}&limit=1000`, {
      token: stack.gw.adminKey,
    })
  ).json.items as { type: string; data: Record<string, unknown>; actor: string }[];

describe('runtime health and status', () => {
  it('GET /health', async () => {
    const res = await stack.call('GET', '/health');
    expect(res.status).toBe(200);
    expect(Object.keys(res.json).sort()).toEqual(['read_models', 'status', 'stream_tails', 'timestamp']);
    expect(res.json.status).toBe('ok');
    expect(res.json.read_models).toMatchObject({ state: 'live', stalled_since: null });
    expect(new Date(res.json.timestamp).toISOString()).toBe(res.json.timestamp);
  });

  it('GET /api/status', async () => {
    const res = await stack.call('GET', '/api/status');
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ name: 'studio-runtime', status: 'running' });
    expect(Number.isNaN(Date.parse(res.json.timestamp))).toBe(false);
  });
});

describe('POST /api/execute', () => {
  it('runs one turn through the gateway and records it as session events', async () => {
    const res = await stack.call('POST', '/api/execute', { instructions: 'hello runtime' });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ success: true, sessionId: expect.stringMatching(/^ses_/) });
    expect(res.json.message.role).toBe('assistant');
    expect(res.json.message.parts).toEqual([
      expect.objectContaining({ type: 'text', text: 'Echo: hello runtime' }),
    ]);

    const types = (await sessionEvents(res.json.sessionId)).map((e) => e.type);
    expect(types).toEqual([
      'SessionCreated',
      'TurnQueued',
      'TurnStarted',
      'MessageCreated',
      'PartUpdated',
      'MessageCompleted',
      'MessageCreated',
      'PartUpdated',
      'MessageCompleted',
      'TurnCompleted',
    ]);
  });

  it('multi-step tool use: the model calls files, gets the result, and answers with it', async () => {
    const write = await stack.call('POST', '/api/execute', {
      instructions: 'save it tool:files__write {"path":"notes/todo.txt","content":"buy milk"}',
    });
    expect(write.status).toBe(200);
    expect(await readFile(join(stack.workspace, 'notes/todo.txt'), 'utf8')).toBe('buy milk');
    expect(write.json.message.parts[0].text).toBe(
      'Tool files__write returned: {"path":"notes/todo.txt","bytes":8}',
    );

    const read = await stack.call('POST', '/api/execute', {
      instructions: 'tool:files__read {"path":"notes/todo.txt"}',
    });
    expect(read.json.message.parts[0].text).toContain('"content":"buy milk"');

    const events = await sessionEvents(read.json.sessionId);
    const tool = events.filter(
      (e) => e.type === 'PartUpdated' && (e.data.part as { type: string }).type === 'tool',
    );
    expect(tool.map((e) => (e.data.part as { state: string }).state)).toEqual([
      'pending',
      'running',
      'completed',
    ]);
  });

  it('a tool that fails is reported to the model as an error, and the turn still completes', async () => {
    const res = await stack.call('POST', '/api/execute', {
      instructions: 'tool:files__read {"path":"../etc/passwd"}',
    });
    expect(res.status).toBe(200);
    expect(res.json.message.parts[0].text).toMatch(/^Tool files__read returned: error: .*\.\./);
  });

  it('chatId continues one session across calls', async () => {
    const first = await stack.call('POST', '/api/execute', { instructions: 'one', chatId: 'my-chat' });
    const second = await stack.call('POST', '/api/execute', { instructions: 'two', chatId: 'my-chat' });
    expect(first.json.sessionId).toBe('my-chat');
    expect(second.json.sessionId).toBe('my-chat');
    const turns = (await sessionEvents('my-chat')).filter((e) => e.type === 'TurnCompleted');
    expect(turns).toHaveLength(2);
  });

  it.each([
    [{}, 'instructions'],
    [{ instructions: '   ' }, 'instructions'],
    [{ instructions: 'x', chatId: '../escape' }, 'chatId'],
    [{ instructions: 'x', extra: true }, 'extra'],
  ])('bad input %j is a 400 naming %s', async (body, param) => {
    const res = await stack.call('POST', '/api/execute', body);
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({ code: 'validation_failed', param });
  });

  it('invalid JSON is a 400', async () => {
    const res = await stack.call('POST', '/api/execute', '{nope');
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe('invalid_json');
  });
});
