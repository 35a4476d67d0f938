import { RemoteAgent } from 'studio-ai-gateway/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SessionsState, sessionsProjection } from '../../projections/sessions.ts';
import { MemoryCheckpointStore } from '../../shared/projections/checkpoints.ts';
import { rebuildProjection } from '../../shared/projections/rebuild.ts';
import { startTestStack, type TestStack } from '../support/runtime.ts';

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(() => stack?.close());

describe('replay', () => {
  it('rebuilding the sessions read model from the log gives exactly the one built live', async () => {
    const agent = new RemoteAgent({ baseUrl: stack.runtime.url });
    const a = await agent.create({ title: 'a' });
    await agent.prompt(a.id, { text: 'hello' });
    await agent.prompt(a.id, { text: 'write tool:files__write {"path":"r.txt","content":"x"}' });
    const fork = await agent.fork(a.id, { at_revision: 5 });
    await agent.prompt(fork.id, { text: 'on the fork' });
    await stack.call('POST', '/api/chat/inbound', { platform: 'slack', channel: 'c1', text: 'from chat' });
    const b = await agent.create({ title: 'b' });
    await agent.prompt(b.id, { text: 'tool:files__read {"path":"missing.txt"}' });
    for (let i = 0; i < 200 && stack.runtime.sessions.list().some((s) => s.session.status === 'busy'); i++) {
      await new Promise((r) => setTimeout(r, 10));
    }

    const live: SessionsState = structuredClone(
      new Map(stack.runtime.sessions.list().map((v) => [v.session.id, v])),
    );
    const checkpoints = new MemoryCheckpointStore();
    const { events } = stack.gw.running.ctx;
    const result = await rebuildProjection(events, checkpoints, sessionsProjection);
    expect(result.events).toBeGreaterThan(30);
    const rebuilt = sessionsProjection.fromSnapshot((await checkpoints.load('sessions'))!.state);
    expect([...rebuilt.keys()].sort()).toEqual([...live.keys()].sort());
    expect(rebuilt).toEqual(live);

    // And every session's history is the log itself: what the API returns is what replay read.
    for (const id of live.keys()) {
      const history = await agent.allHistory(id);
      const stored = await events.readStream(`session-${id}`);
      expect(history.map((e) => [e.type, e.revision, e.data])).toEqual(
        stored.map((e) => [e.type, e.revision, e.data]),
      );
    }
  });
});
