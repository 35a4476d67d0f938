import { request } from 'node:http';
import { RemoteAgent, type SessionStreamItem } from 'studio-ai-gateway/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completionId, nowSeconds } from '../../services/ai/chat/ids.ts';
import { textOf } from '../../services/ai/chat/wire.ts';
import { devProvider } from '../../services/ai/providers/dev/provider.ts';
import type { Provider } from '../../services/ai/providers/types.ts';
import { startTestStack, type TestStack } from '../support/runtime.ts';

const STEPS = 40;
let holdOpen = (): void => {};
const hold = new Promise<void>((resolve) => {
  holdOpen = resolve;
});

/** `test/chatty` lists the workspace STEPS times before it answers: one long turn of many events. `test/held` waits. */
const testProvider: Provider = {
  id: 'test',
  name: 'Test',
  env: [],
  models: () => [
    {
      id: 'test/chatty',
      name: 'c',
      description: '',
      modalities: ['chat'],
      tags: [],
      meta: {},
      upstreamModel: 'c',
    },
    {
      id: 'test/held',
      name: 'h',
      description: '',
      modalities: ['chat'],
      tags: [],
      meta: {},
      upstreamModel: 'h',
    },
  ],
  async chatStream(model, request) {
    if (model.id === 'test/held') await hold;
    const toolResults = request.messages.filter((m) => m.role === 'tool').length;
    const base = {
      id: completionId(),
      object: 'chat.completion.chunk' as const,
      created: nowSeconds(),
      model: model.id,
    };
    await new Promise((r) => setTimeout(r, 5));
    return (async function* () {
      if (model.id === 'test/chatty' && toolResults < STEPS) {
        yield {
          ...base,
          choices: [
            {
              index: 0,
              delta: {
                tool_calls: [
                  {
                    index: 0,
                    id: `call_${toolResults}`,
                    type: 'function' as const,
                    function: { name: 'files__list', arguments: '{}' },
                  },
                ],
              },
              finish_reason: 'tool_calls',
            },
          ],
        };
        return;
      }
      yield {
        ...base,
        choices: [
          {
            index: 0,
            delta: { content: `done: ${textOf(request.messages.at(-1)?.content ?? '')}`.slice(0, 40) },
            finish_reason: 'stop',
          },
        ],
      };
    })();
  },
};

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({
    gateway: { ai: { providers: () => [devProvider, testProvider] } },
    config: { STUDIO_AGENT_MAX_STEPS: '100', STUDIO_MAX_QUEUED_TURNS: '2', STUDIO_SSE_HEARTBEAT_MS: '20' },
  });
});
afterAll(async () => {
  holdOpen();
  await stack?.close();
});

/** A fetch whose response bodies break off after a random number of bytes, `budget` times in all. */
function droppingFetch(budget: number, random: () => number) {
  let drops = 0;
  const wrapped: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    if (!response.body || drops >= budget) return response;
    const reader = response.body.getReader();
    let left = 20 + Math.floor(random() * 1500);
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const { value, done } = await reader.read();
        if (done) return controller.close();
        if (drops < budget && value.length >= left) {
          drops++;
          controller.enqueue(value.subarray(0, left));
          controller.error(new Error('connection dropped'));
          await reader.cancel();
          return;
        }
        left -= value.length;
        controller.enqueue(value);
      },
      cancel: () => reader.cancel(),
    });
    return new Response(body, { status: response.status, headers: response.headers });
  };
  return { fetch: wrapped, drops: () => drops };
}

/** A small seeded generator, so a failure can be replayed. */
function mulberry32(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('events() resumes by itself', () => {
  it('dropped 50 times at random points during a long turn, the client still gets every stored event once, in order', async () => {
    const plain = new RemoteAgent({ baseUrl: stack.runtime.url });
    const session = await plain.create({ model: 'test/chatty' });
    const seed = Date.now();
    const dropping = droppingFetch(50, mulberry32(seed));
    const client = new RemoteAgent({ baseUrl: stack.runtime.url, fetch: dropping.fetch });

    const controller = new AbortController();
    const received: SessionStreamItem[] = [];
    const following = (async () => {
      for await (const item of client.events(session.id, { signal: controller.signal, retryMs: 1 })) {
        received.push(item);
        if (item.kind === 'event' && item.type === 'TurnCompleted' && dropping.drops() >= 50)
          controller.abort();
      }
    })();
    const turn = await plain.prompt(session.id, { text: 'go' });
    expect(turn.status).toBe('completed');
    await following;

    expect(dropping.drops(), `seed ${seed}`).toBe(50);
    const stored = await plain.allHistory(session.id);
    expect(stored.length).toBeGreaterThan(STEPS * 5);
    const events = received.filter((i) => i.kind === 'event');
    expect(
      events.map((e) => (e.kind === 'event' ? e.revision : -1)),
      `seed ${seed}`,
    ).toEqual(stored.map((e) => e.revision));
    expect(events.map((e) => (e.kind === 'event' ? e.type : ''))).toEqual(stored.map((e) => e.type));
  });
});

describe('limits', () => {
  it('a prompt to a session whose queue is full is 429 with Retry-After', async () => {
    const agent = new RemoteAgent({ baseUrl: stack.runtime.url });
    const session = await agent.create({ model: 'test/held' });
    await agent.prompt(session.id, { text: 'one', wait: false });
    await agent.prompt(session.id, { text: 'two', wait: false });
    const res = await stack.call('POST', `/api/sdk/sessions/${session.id}/prompt`, {
      text: 'three',
      wait: false,
    });
    expect(res.status).toBe(429);
    expect(res.json.error.code).toBe('rate_limited');
    expect(res.headers.get('retry-after')).toBe('5');
    holdOpen();
  });

  it('a client that reads at full speed is not cut off by a burst of large events', async () => {
    const agent = new RemoteAgent({ baseUrl: stack.runtime.url });
    const session = await agent.create();
    const raw = await fetch(`${stack.runtime.url}/api/sdk/sessions/${session.id}/events`);
    const reader = raw.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    const big = 'y'.repeat(32 * 1024);
    // 50 events of 32 kB appended together: well over the 1 MiB backlog limit if counted before sending.
    await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        stack.runtime.sessions.handle(session.id, { type: 'UpdateSystem', system: `${i} ${big}` }),
      ),
    );
    const last = (await agent.get(session.id)).revision;
    while (!text.includes(`id: ${last}\n`)) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    await reader.cancel();
    expect(text).not.toContain('too slow');
    expect(text.match(/event: SystemUpdated/g)).toHaveLength(50);
  });

  it('a client that does not read is cut off with a resumable position instead of growing server memory', async () => {
    const agent = new RemoteAgent({ baseUrl: stack.runtime.url });
    const session = await agent.create();
    const url = new URL(`${stack.runtime.url}/api/sdk/sessions/${session.id}/events`);
    let ended = false;
    let tail = '';
    let response: import('node:http').IncomingMessage | undefined;
    const req = request(url, (res) => {
      response = res;
      res.pause(); // reads nothing for now
      res.on('data', (chunk: Buffer) => {
        tail = (tail + chunk.toString()).slice(-300);
      });
      res.on('end', () => {
        ended = true;
      });
    });
    req.end();
    await new Promise((r) => setTimeout(r, 100));

    // Big events: 200 kB system prompts, appended faster than the client reads (it reads nothing).
    const big = 'x'.repeat(200_000);
    for (let i = 0; i < 200 && !ended; i++) {
      await stack.runtime.sessions.handle(session.id, { type: 'UpdateSystem', system: `${i} ${big}` });
      if (i > 0 && i % 10 === 0) {
        // Let the socket drain briefly to see whether the server has already closed it.
        await new Promise((r) => setTimeout(r, 10));
      }
    }
    // Now read: the server must have ended the response with the position to resume from.
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the server never cut the slow client off')), 20_000);
      const check = setInterval(() => {
        if (ended) {
          clearTimeout(timer);
          clearInterval(check);
          resolve();
        }
      }, 20);
      response?.resume();
    });
    expect(tail).toMatch(/: too slow, resume with Last-Event-ID \d+\n\n$/);
  });
});
