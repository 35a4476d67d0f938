import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completionId, nowSeconds } from '../../services/ai/chat/ids.ts';
import { devProvider } from '../../services/ai/providers/dev/provider.ts';
import type { Provider } from '../../services/ai/providers/types.ts';
import { startRuntime } from '../../services/runtime/runtime.ts';
import { ConfigError, loadConfig } from '../../shared/config.ts';
import { ApiError } from '../../shared/errors.ts';
import { createLogger } from '../../shared/logger.ts';
import { startTestStack, type TestStack } from '../support/runtime.ts';

/** `test/broken` always fails upstream; `test/slow` streams forever until cancelled. */
const testProvider: Provider = {
  id: 'test',
  name: 'Test',
  env: [],
  models: () => [
    {
      id: 'test/broken',
      name: 'b',
      description: '',
      modalities: ['chat'],
      tags: [],
      meta: {},
      upstreamModel: 'b',
    },
    {
      id: 'test/slow',
      name: 's',
      description: '',
      modalities: ['chat'],
      tags: [],
      meta: {},
      upstreamModel: 's',
    },
  ],
  async chatStream(model, _request, ctx) {
    if (model.id === 'test/broken') throw new ApiError('upstream_error', 'upstream answered 500: boom');
    const base = {
      id: completionId(),
      object: 'chat.completion.chunk' as const,
      created: nowSeconds(),
      model: model.id,
    };
    return (async function* () {
      // One tool call first, so a cancellation finds a tool part open.
      yield {
        ...base,
        choices: [
          {
            index: 0,
            delta: {
              tool_calls: [
                {
                  index: 0,
                  id: 'call_1',
                  type: 'function' as const,
                  function: { name: 'files__list', arguments: '{}' },
                },
              ],
            },
            finish_reason: null,
          },
        ],
      };
      while (!ctx.signal.aborted) {
        yield { ...base, choices: [{ index: 0, delta: { content: '.' }, finish_reason: null }] };
        await new Promise((r) => setTimeout(r, 20));
      }
      throw new Error('aborted');
    })();
  },
};

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({ gateway: { ai: { providers: () => [devProvider, testProvider] } } });
});
afterAll(() => stack?.close());

const sessionEvents = async (id: string) =>
  (
    await stack.gw.api('GET', `/v1/audit/events?stream=session-${id}&limit=1000`, {
      token: stack.gw.adminKey,
    })
  ).json.items as {
    type: string;
    data: Record<string, unknown>;
  }[];

async function newSession(model = 'dev/echo') {
  return stack.runtime.sessions.create({ kind: 'dashboard', title: 't', model, system: '' });
}

describe('POST /api/dashboard/sessions/:sessionId/execute', () => {
  it('materializes attachments and injects them as file tags before the instruction', async () => {
    const { session } = await newSession();
    const res = await stack.call('POST', `/api/dashboard/sessions/${session.id}/execute`, {
      instructions: 'summarize',
      attachments: [
        {
          type: 'document',
          fileName: 'notes.md',
          contentType: 'text/markdown; charset=utf-8',
          content: '# Notes\nhello',
        },
      ],
    });
    expect(res.status, res.text).toBe(200);
    expect(res.json).toMatchObject({ success: true, sessionId: session.id, message: { role: 'assistant' } });
    const echoed = res.json.message.parts[0].text as string;
    const tag =
      /^Echo: <file name="notes\.md" path="(attachments\/[^"]+-notes\.md)" type="text\/markdown; charset=utf-8"># Notes\nhello<\/file>\n\nsummarize$/.exec(
        echoed,
      );
    expect(tag, echoed).not.toBeNull();
    expect(await readFile(join(stack.workspace, tag![1]!), 'utf8')).toBe('# Notes\nhello');
    expect(tag![1]).toContain(`attachments/${session.id}/`);

    const user = stack.runtime.sessions.require(session.id).messages.find((m) => m.role === 'user')!;
    expect(user.parts.map((p) => p.type)).toEqual(['text', 'file']);
  });

  it('file names are sanitized: no traversal, no separators', async () => {
    const { session } = await newSession();
    const res = await stack.call('POST', `/api/dashboard/sessions/${session.id}/execute`, {
      instructions: 'x',
      attachments: [
        { type: 'document', fileName: '../../etc/passwd', contentType: 'text/plain', content: 'x' },
      ],
    });
    expect(res.status).toBe(400);
    expect(res.json.error.param).toBe('attachments.0.fileName');
    const odd = await stack.call('POST', `/api/dashboard/sessions/${session.id}/execute`, {
      instructions: 'x',
      attachments: [
        { type: 'document', fileName: 'we<i>rd:na"me.txt', contentType: 'text/plain', content: 'x' },
      ],
    });
    expect(odd.status).toBe(200);
    expect(odd.json.message.parts[0].text).toMatch(/name="we_i_rd_na_me\.txt"/);
  });

  it('an attachment over the limit is 413', async () => {
    const { session } = await newSession();
    const res = await stack.call('POST', `/api/dashboard/sessions/${session.id}/execute`, {
      instructions: 'x',
      attachments: [
        {
          type: 'document',
          fileName: 'big.txt',
          contentType: 'text/plain',
          content: 'x'.repeat(5 * 1024 * 1024 + 1),
        },
      ],
    });
    expect(res.status).toBe(413);
    expect(res.json.error.code).toBe('payload_too_large');
  });

  it('an unknown sessionId is 404', async () => {
    const res = await stack.call('POST', '/api/dashboard/sessions/ses_nope/execute', { instructions: 'x' });
    expect(res.status).toBe(404);
    expect(res.json.error.code).toBe('not_found');
  });
});

describe('failed and cancelled turns leave the session consistent', () => {
  it('a failed turn is recorded, answered 502, and the next turn still runs', async () => {
    const { session } = await newSession('test/broken');
    const failed = await stack.call('POST', `/api/dashboard/sessions/${session.id}/execute`, {
      instructions: 'x',
    });
    expect(failed.status).toBe(502);
    expect(failed.json.error.message).toContain('boom');
    const types = (await sessionEvents(session.id)).map((e) => e.type);
    expect(types.slice(-3)).toEqual(['MessageCreated', 'MessageCompleted', 'TurnFailed']);
    expect(stack.runtime.sessions.require(session.id).session.status).toBe('idle');

    await stack.runtime.sessions.handle(session.id, { type: 'UpdateSystem', model: 'dev/echo' });
    const next = await stack.call('POST', `/api/dashboard/sessions/${session.id}/execute`, {
      instructions: 'again',
    });
    expect(next.status).toBe(200);
    expect(next.json.message.parts[0].text).toBe('Echo: again');
  });

  it('a cancelled turn ends its pending tool call as an error and lets the queue move', async () => {
    const { session } = await newSession('test/slow');
    const running = stack.runtime.sessions.enqueue(session.id, { text: 'go', source: 'test' });
    const { done } = await running;
    for (
      let i = 0;
      i < 200 && !stack.runtime.sessions.require(session.id).messages.some((m) => m.role === 'assistant');
      i++
    ) {
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(stack.runtime.sessions.cancel(session.id)).toBe(true);
    expect(await done).toMatchObject({ status: 'cancelled' });

    const view = stack.runtime.sessions.require(session.id);
    expect(view.session.status).toBe('idle');
    expect(view.messages.every((m) => m.completed)).toBe(true);
    const tools = view.messages.flatMap((m) => m.parts).filter((p) => p.type === 'tool');
    for (const t of tools) expect(t.state === 'completed' || t.state === 'error').toBe(true);
    expect((await sessionEvents(session.id)).at(-1)?.type).toBe('TurnCancelled');
  });
});

describe('binding and the runtime token', () => {
  it('refuses to bind beyond loopback without STUDIO_RUNTIME_TOKEN', async () => {
    const config = loadConfig({
      STUDIO_EVENT_STORE: 'memory',
      STUDIO_RUNTIME_HOST: '0.0.0.0',
      STUDIO_RUNTIME_PORT: '0',
      LOG_LEVEL: 'silent',
    });
    await expect(
      startRuntime({ config, logger: createLogger('silent'), gatewayUrl: stack.gw.url, token: stack.token }),
    ).rejects.toThrow(ConfigError);
  });

  it('with a runtime token, every /api route needs it and /health stays open', async () => {
    const token = 'runtime-token-0123456789';
    const guarded = await startTestStack({ config: { STUDIO_RUNTIME_TOKEN: token } });
    try {
      expect((await guarded.call('GET', '/health')).status).toBe(200);
      const refused = await guarded.call('GET', '/api/status');
      expect(refused.status).toBe(401);
      expect(refused.json.error.code).toBe('unauthenticated');
      expect(
        (
          await guarded.call('GET', '/api/status', undefined, {
            authorization: 'Bearer wrong-token-xxxxxxxx',
          })
        ).status,
      ).toBe(401);
      expect(
        (await guarded.call('GET', '/api/status', undefined, { authorization: `Bearer ${token}` })).status,
      ).toBe(200);
      expect(
        (await guarded.call('POST', '/api/files/list', {}, { authorization: `Bearer ${token}` })).status,
      ).toBe(200);
      expect((await guarded.call('POST', '/api/files/list', {})).status).toBe(401);
    } finally {
      await guarded.close();
    }
  });
});
