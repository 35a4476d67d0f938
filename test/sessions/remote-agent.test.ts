import { RemoteAgent, RemoteAgentError } from 'studio-ai-gateway/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../support/runtime.ts';

let stack: TestStack;
let agent: RemoteAgent;
beforeAll(async () => {
  stack = await startTestStack({ config: { STUDIO_SSE_HEARTBEAT_MS: '50' } });
  agent = new RemoteAgent({ baseUrl: stack.runtime.url });
});
afterAll(() => stack?.close());

const texts = (messages: { role: string; parts: { type: string; text?: string }[] }[]) =>
  messages.map(
    (m) =>
      `${m.role}: ${m.parts
        .filter((p) => p.type === 'text')
        .map((p) => p.text)
        .join('')}`,
  );

describe('RemoteAgent end to end', () => {
  it('create, prompt, messages, fork, prompt both sides: both histories are what they must be', async () => {
    const session = await agent.create({ title: 'demo', system: 'be terse' });
    expect(session).toMatchObject({
      title: 'demo',
      system: 'be terse',
      model: 'dev/echo',
      status: 'idle',
      parent_id: null,
      forked_from: null,
    });
    expect((await agent.get(session.id)).id).toBe(session.id);

    const first = await agent.prompt(session.id, { text: 'first' });
    expect(first.status).toBe('completed');
    expect(first.message?.parts[0]).toMatchObject({ type: 'text', text: 'Echo: first' });
    const cut = (await agent.get(session.id)).revision;
    await agent.prompt(session.id, { text: 'second on the source' });

    const fork = await agent.fork(session.id, { at_revision: cut });
    expect(fork).toMatchObject({
      parent_id: session.id,
      forked_from: { session_id: session.id, revision: cut },
      title: 'demo',
    });
    await agent.prompt(fork.id, { text: 'second on the fork' });

    const source = (await agent.messages(session.id)).items;
    const forked = (await agent.messages(fork.id)).items;
    expect(texts(source)).toEqual([
      'user: first',
      'assistant: Echo: first',
      'user: second on the source',
      'assistant: Echo: second on the source',
    ]);
    expect(texts(forked)).toEqual([
      'user: first',
      'assistant: Echo: first',
      'user: second on the fork',
      'assistant: Echo: second on the fork',
    ]);

    // The fork's history is the source's up to the cut, then its own; the source never changed.
    const sourceHistory = await agent.allHistory(session.id);
    const forkHistory = await agent.allHistory(fork.id);
    const strip = (e: { type: string; data: unknown; revision: number }) => ({
      type: e.type,
      data: e.data,
      revision: e.revision,
    });
    expect(forkHistory.slice(0, cut + 1).map(strip)).toEqual(sourceHistory.slice(0, cut + 1).map(strip));
    expect(forkHistory[cut + 1]).toMatchObject({
      type: 'SessionForked',
      data: { fromSessionId: session.id, atRevision: cut },
    });
    expect(sourceHistory.map((e) => e.type)).not.toContain('SessionForked');
    expect(sourceHistory.map((e) => e.revision)).toEqual(sourceHistory.map((_, i) => i));
  });

  it('a fork cut in the middle of a turn ends that turn in the fork only', async () => {
    const session = await agent.create();
    await agent.prompt(session.id, { text: 'x' });
    const history = await agent.allHistory(session.id);
    const started = history.find((e) => e.type === 'TurnStarted')!.revision;
    const fork = await agent.fork(session.id, { at_revision: started });
    const forkHistory = await agent.allHistory(fork.id);
    expect(forkHistory.slice(started + 1).map((e) => e.type)).toEqual(['SessionForked', 'TurnCancelled']);
    expect((await agent.get(fork.id)).status).toBe('idle');
    const next = await agent.prompt(fork.id, { text: 'after the cut' });
    expect(next.message?.parts[0]).toMatchObject({ text: 'Echo: after the cut' });
  });

  it('list pages with a cursor', async () => {
    for (let i = 0; i < 3; i++) await agent.create({ title: `page ${i}` });
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await agent.list({ limit: 2, ...(cursor ? { cursor } : {}) });
      expect(page.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.items.map((s) => s.id));
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.length).toBe(stack.runtime.sessions.list().length);
  });

  it('system shows the model, the prompt and the tools the session sees', async () => {
    const session = await agent.create({ system: 'sys' });
    const system = await agent.system(session.id);
    expect(system).toMatchObject({ model: 'dev/echo', system: 'sys' });
    expect(system.plugins).toEqual(expect.arrayContaining(['files', 'chat']));
    expect(system.tools.map((t) => t.name)).toEqual(
      expect.arrayContaining(['files__read', 'files__write', 'files__list']),
    );
  });

  it('prompt with wait=false answers 202 with queue metadata, and turns run in order', async () => {
    const session = await agent.create();
    const queued = await Promise.all(
      [1, 2, 3].map((i) => agent.prompt(session.id, { text: `q${i}`, wait: false })),
    );
    for (const q of queued)
      expect(q).toMatchObject({ queued: true, queueItemId: expect.stringMatching(/^turn_/) });
    for (let i = 0; i < 200 && (await agent.get(session.id)).status === 'busy'; i++)
      await new Promise((r) => setTimeout(r, 10));
    const history = await agent.allHistory(session.id);
    expect(history.filter((e) => e.type === 'TurnStarted').map((e) => e.data.turnId)).toEqual(
      queued.map((q) => q.queueItemId),
    );
  });

  it('events: stored ones with their revision, live deltas without, heartbeats in between', async () => {
    const session = await agent.create();
    const raw = await fetch(`${stack.runtime.url}/api/sdk/sessions/${session.id}/events`);
    const reader = raw.body!.getReader();
    await agent.prompt(session.id, { text: 'stream this please' });
    let text = '';
    const decoder = new TextDecoder();
    while (!text.includes('event: TurnCompleted') || !text.includes(': heartbeat')) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    await reader.cancel();
    expect(text).toMatch(/^id: 0\nevent: SessionCreated\ndata: \{/m);
    const deltas = text.split('\n\n').filter((block) => block.startsWith('event: part.delta'));
    expect(deltas.length).toBeGreaterThan(0);
    for (const d of deltas) expect(d).not.toMatch(/^id:/m);
    expect(deltas.map((d) => JSON.parse(d.split('data: ')[1]!).delta).join('')).toBe(
      'Echo: stream this please',
    );
  });
});

describe('bad input', () => {
  it('an unknown session is 404 on every route', async () => {
    for (const path of ['', '/history', '/messages', '/system', '/events']) {
      const res = await stack.call('GET', `/api/sdk/sessions/ses_nope${path}`);
      expect(res.status, path).toBe(404);
    }
    await expect(agent.prompt('ses_nope', { text: 'x' })).rejects.toMatchObject({
      status: 404,
      code: 'not_found',
    });
    await expect(agent.fork('ses_nope')).rejects.toBeInstanceOf(RemoteAgentError);
  });

  it('fork beyond the last revision is 400', async () => {
    const session = await agent.create();
    await expect(agent.fork(session.id, { at_revision: session.revision + 1 })).rejects.toMatchObject({
      status: 400,
      code: 'validation_failed',
    });
    await expect(agent.fork(session.id, { at_revision: -1 })).rejects.toMatchObject({ status: 400 });
  });

  it('a malformed Last-Event-ID is 400', async () => {
    const session = await agent.create();
    const res = await stack.call('GET', `/api/sdk/sessions/${session.id}/events`, undefined, {
      'last-event-id': 'abc',
    });
    expect(res.status).toBe(400);
    expect(res.json.error.param).toBe('Last-Event-ID');
    const after = await stack.call('GET', `/api/sdk/sessions/${session.id}/events?after=1.5`);
    expect(after.status).toBe(400);
  });

  it('empty text is 400', async () => {
    const session = await agent.create();
    await expect(agent.prompt(session.id, { text: '   ' })).rejects.toMatchObject({
      status: 400,
      code: 'validation_failed',
    });
  });

  it('a bad cursor is 400', async () => {
    const res = await stack.call('GET', '/api/sdk/sessions?cursor=bm9wZQ');
    expect(res.status).toBe(400);
  });
});
