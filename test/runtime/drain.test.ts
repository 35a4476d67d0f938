import { RemoteAgent } from 'studio-ai-gateway/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAction, definePlugin } from '../../services/runtime/plugins/types.ts';
import { gate } from '../support/mock-ai-upstreams.ts';
import { startTestStack, type TestStack } from '../support/runtime.ts';

const entered = gate();
const release = gate();

/** A tool that holds its turn until the test lets it go. */
const slow = definePlugin({
  name: 'slow',
  version: '0.1.0',
  description: 'waits',
  requires: { env: [], bins: [] },
  actions: [
    defineAction({
      name: 'wait',
      description: 'waits until released',
      input: z.strictObject({}),
      async handler() {
        entered.open();
        await release.wait;
        return 'released';
      },
    }),
  ],
});

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({ plugins: [slow] });
});
afterAll(async () => {
  release.open();
  await stack?.close();
});

describe('draining the runtime', () => {
  it('tells session streams to reconnect elsewhere, lets the running turn finish, then stops', async () => {
    const agent = new RemoteAgent({ baseUrl: stack.runtime.url });
    const session = await agent.create({ title: 'drained' });
    const events = await fetch(`${stack.runtime.url}/api/sdk/sessions/${session.id}/events`);
    const reader = events.body!.pipeThrough(new TextDecoderStream()).getReader();
    let streamed = '';
    while (!streamed.includes('id: 0\n')) streamed += (await reader.read()).value ?? '';

    // The SDK follows the same session: the going-away frame is no session event to it.
    const followed: unknown[] = [];
    const stopFollowing = new AbortController();
    const following = (async () => {
      for await (const item of agent.events(session.id, { signal: stopFollowing.signal }))
        followed.push(item);
    })();

    await agent.prompt(session.id, { text: 'tool:slow__wait {}', wait: false });
    await entered.wait;
    let drained = false;
    const outcome = stack.runtime.drain(AbortSignal.timeout(30_000)).finally(() => {
      drained = true;
    });

    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      streamed += value;
    }
    const lastRevision = Math.max(...[...streamed.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1])));
    expect(streamed).toMatch(
      new RegExp(
        `retry: 1000\\nevent: server.going_away\\ndata: \\{"reason":"shutting_down","resume_after":${lastRevision}\\}\\n\\n$`,
      ),
    );
    expect(drained).toBe(false); // the turn is still running

    release.open();
    expect(await outcome).toEqual({ finished: true, durable: true });
    const turns = await stack.gw.api('GET', '/v1/audit/events?type=TurnCompleted,TurnCancelled', {
      token: stack.gw.adminKey,
    });
    expect(turns.json.items.map((e: { type: string }) => e.type)).toEqual(['TurnCompleted']);
    stopFollowing.abort();
    await following;
    expect(followed.length).toBeGreaterThan(0);
    for (const item of followed)
      expect(item).toSatisfy(
        (i: { kind: string; revision?: unknown }) => i.kind === 'delta' || typeof i.revision === 'number',
      );
  });
});
