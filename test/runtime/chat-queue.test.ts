import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completionId, nowSeconds } from '../../services/ai/chat/ids.ts';
import { type ChatRequest, textOf } from '../../services/ai/chat/wire.ts';
import { devProvider } from '../../services/ai/providers/dev/provider.ts';
import type { Provider } from '../../services/ai/providers/types.ts';
import { waitUntil } from '../../shared/testing/wait.ts';
import { startTestStack, type TestStack } from '../support/runtime.ts';

/** Echoes, but holds a request whose last message says `HOLD:<gate>` until that gate is opened. */
const gates = new Map<string, { opened: Promise<void>; open: () => void }>();
function gate(name: string) {
  let entry = gates.get(name);
  if (!entry) {
    let open = () => {};
    const opened = new Promise<void>((resolve) => {
      open = resolve;
    });
    entry = { opened, open };
    gates.set(name, entry);
  }
  return entry;
}
const gated: Provider = {
  id: 'gated',
  name: 'Gated',
  env: [],
  models: () => [
    {
      id: 'gated/echo',
      name: 'g',
      description: '',
      modalities: ['chat'],
      tags: [],
      meta: {},
      upstreamModel: 'g',
    },
  ],
  async chatStream(model, request: ChatRequest) {
    const text = textOf(request.messages.at(-1)?.content ?? '');
    const hold = /HOLD:(\w+)/.exec(text);
    if (hold) await gate(hold[1]!).opened;
    const base = {
      id: completionId(),
      object: 'chat.completion.chunk' as const,
      created: nowSeconds(),
      model: model.id,
    };
    return (async function* () {
      yield {
        ...base,
        choices: [
          { index: 0, delta: { role: 'assistant' as const, content: `re: ${text}` }, finish_reason: null },
        ],
      };
      yield { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] };
    })();
  },
};

interface Delivered {
  conversationId: string;
  turnId: string;
  text: string;
}
const delivered: Delivered[] = [];
let webhook: Server;
let stack: TestStack;

beforeAll(async () => {
  webhook = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      delivered.push(JSON.parse(body));
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => webhook.listen(0, '127.0.0.1', resolve));
  stack = await startTestStack({
    gateway: { ai: { providers: () => [devProvider, gated] } },
    config: { STUDIO_AGENT_MODEL: 'gated/echo' },
    runtimeEnv: {
      CHAT_OUTBOUND_WEBHOOK_URL: `http://127.0.0.1:${(webhook.address() as AddressInfo).port}/hook`,
    },
  });
});
afterAll(async () => {
  for (const g of gates.values()) g.open();
  await stack?.close();
  webhook?.close();
});

const inbound = (channel: string, text: string) =>
  stack.call('POST', '/api/chat/inbound', { platform: 'slack', channel, text, sender: 'ann' });
const events = async (stream: string) =>
  (await stack.gw.api('GET', `/v1/audit/events?stream=${stream}&limit=1000`, { token: stack.gw.adminKey }))
    .json.items as {
    type: string;
    position: number;
    data: Record<string, unknown>;
  }[];

describe('chat: one FIFO queue per conversation', () => {
  it('twenty concurrent inbound messages run strictly in order, each told its queue position', async () => {
    // The first turn waits at its gate, so the other nineteen line up behind it.
    const first = await inbound('general', 'message 0 HOLD:line');
    const rest = await Promise.all(
      Array.from({ length: 19 }, (_, i) => inbound('general', `message ${i + 1}`)),
    );
    const receipts = [first, ...rest];
    for (const r of receipts) expect(r.status, r.text).toBe(200);
    const conversationId = receipts[0]!.json.conversationId as string;
    expect(new Set(receipts.map((r) => r.json.conversationId))).toEqual(new Set([conversationId]));
    expect(conversationId).toMatch(/^conv_/);
    // Every message was told a distinct place in the line, and the line is the order they were taken in.
    const positions = receipts.map((r) => r.json.queuePosition as number);
    expect([...positions].sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(first.json.queuePosition).toBe(1);
    const inLine = [...receipts].sort((a, b) => a.json.queuePosition - b.json.queuePosition);
    const byPosition = inLine.map((r) => r.json.queueItemId);
    gate('line').open();

    await waitUntil(
      async () =>
        (await events(`session-${conversationId}`)).filter((e) => e.type === 'TurnCompleted').length === 20,
      'twenty turns completed',
    );
    const session = await events(`session-${conversationId}`);
    const queued = session.filter((e) => e.type === 'TurnQueued').map((e) => e.data.turnId);
    const started = session.filter((e) => e.type === 'TurnStarted').map((e) => e.data.turnId);
    expect(queued).toEqual(byPosition);
    expect(started).toEqual(queued);
    // Strictly one at a time: each turn ends before the next starts.
    let running: unknown = null;
    for (const e of session) {
      if (e.type === 'TurnStarted') {
        expect(running).toBeNull();
        running = e.data.turnId;
      }
      if (e.type === 'TurnCompleted') {
        expect(e.data.turnId).toBe(running);
        running = null;
      }
    }
    // The history came first: each message is in the conversation's stream before its turn was queued.
    const chat = await events(`chat-${conversationId}`);
    const received = chat.filter((e) => e.type === 'MessageReceived');
    expect(received.map((e) => e.data.turnId)).toEqual(queued);
    const sent = (r: (typeof receipts)[number]) =>
      `message ${receipts.indexOf(r)}${r === first ? ' HOLD:line' : ''}`;
    expect(received.map((e) => e.data.text)).toEqual(inLine.map(sent));

    // And every reply reached the webhook, in order.
    await waitUntil(
      async () => delivered.filter((d) => d.conversationId === conversationId).length === 20,
      'twenty replies delivered',
    );
    expect(delivered.filter((d) => d.conversationId === conversationId).map((d) => d.turnId)).toEqual(queued);
    expect(delivered.filter((d) => d.conversationId === conversationId).map((d) => d.text)).toEqual(
      inLine.map((r) => `re: ${sent(r)}`),
    );
    await waitUntil(
      async () =>
        (await events(`chat-${conversationId}`)).filter((e) => e.type === 'ReplyDelivered').length === 20,
      'twenty replies recorded',
    );
  });

  it('two conversations run independently: one waiting does not hold up the other', async () => {
    const blocked = await inbound('slow-channel', 'HOLD:slow this one');
    const free = await inbound('fast-channel', 'go ahead');
    expect(blocked.json.conversationId).not.toBe(free.json.conversationId);
    expect(blocked.json.queuePosition).toBe(1);
    expect(free.json.queuePosition).toBe(1);
    await waitUntil(
      async () =>
        (await events(`session-${free.json.conversationId}`)).some((e) => e.type === 'TurnCompleted'),
      'the free conversation completed a turn',
    );
    expect(
      (await events(`session-${blocked.json.conversationId}`)).some((e) => e.type === 'TurnCompleted'),
    ).toBe(false);

    // The blocked conversation's next message queues behind it.
    const second = await inbound('slow-channel', 'after the hold');
    expect(second.json.queuePosition).toBe(2);
    gate('slow').open();
    await waitUntil(
      async () =>
        (await events(`session-${blocked.json.conversationId}`)).filter((e) => e.type === 'TurnCompleted')
          .length === 2,
      'the blocked conversation completed two turns',
    );
  });

  it('a dashboard call to a chat session is queued in the same queue, its history appended first', async () => {
    const first = await inbound('dash', 'from the platform');
    const id = first.json.conversationId as string;
    const res = await stack.call('POST', `/api/dashboard/sessions/${id}/execute`, {
      instructions: 'from the dashboard',
    });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      success: true,
      sessionId: id,
      queued: true,
      queueItemId: expect.stringMatching(/^turn_/),
      queuePosition: expect.any(Number),
    });
    expect(res.json.queuePosition).toBeGreaterThanOrEqual(1);
    await waitUntil(
      async () => (await events(`session-${id}`)).filter((e) => e.type === 'TurnCompleted').length === 2,
      'two turns completed',
    );
    const chat = await events(`chat-${id}`);
    const session = await events(`session-${id}`);
    const received = chat.find((e) => e.type === 'MessageReceived' && e.data.source === 'dashboard')!;
    const queued = session.find((e) => e.type === 'TurnQueued' && e.data.turnId === res.json.queueItemId)!;
    expect(received.data.turnId).toBe(res.json.queueItemId);
    expect(received.position).toBeLessThan(queued.position);
  });

  it('inbound validation: empty after normalizing, bad platform', async () => {
    const empty = await stack.call('POST', '/api/chat/inbound', {
      platform: 'slack',
      channel: 'c',
      text: '   ',
    });
    expect(empty.status).toBe(400);
    const platform = await stack.call('POST', '/api/chat/inbound', {
      platform: 'Bad Platform',
      channel: 'c',
      text: 'x',
    });
    expect(platform.status).toBe(400);
    expect(platform.json.error.details[0].path).toBe('platform');
  });
});
