import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import {
  ApiErrorBody,
  CompletedTurn,
  HistoryEvent,
  HistoryPage,
  Message,
  PartDelta,
  pageOf,
  QueuedTurn,
  Session,
  SystemInfo,
} from '../../services/sessions/schemas.ts';
import { startTestStack, type TestStack } from '../support/runtime.ts';

// The SDK's types are inferred from these schemas; this holds the server to them: every answer of
// the session routes, read over real HTTP, parses with the strict schema (no field missing, none extra).

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({ config: { STUDIO_SSE_HEARTBEAT_MS: '50' } });
});
afterAll(() => stack?.close());

const base = '/api/sdk/sessions';

async function answer<Schema extends z.ZodType>(
  schema: Schema,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
): Promise<z.infer<Schema>> {
  const res = await stack.call(method, path, body);
  expect(res.status, `${method} ${path}: ${JSON.stringify(res.json)}`).toBeLessThan(300);
  return schema.parse(res.json);
}

/** The frames of a session's event stream, read until its last turn completed. */
async function frames(sessionId: string): Promise<{ event: string; data: unknown }[]> {
  const controller = new AbortController();
  const res = await fetch(`${stack.runtime.url}${base}/${sessionId}/events`, { signal: controller.signal });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  while (!text.includes('event: TurnCompleted')) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  controller.abort();
  return text
    .split('\n\n')
    .filter((block) => block.includes('data: '))
    .map((block) => ({
      event: /^event: (.*)$/m.exec(block)?.[1] ?? '',
      data: JSON.parse(/^data: (.*)$/m.exec(block)![1]!),
    }));
}

describe('the session routes answer exactly the shapes of services/sessions/schemas.ts', () => {
  it('sessions, messages with text and tool parts, history, system, forks, queued turns', async () => {
    const session = await answer(Session, 'POST', base, { title: 'shapes', system: 'terse' });
    expect(await answer(Session, 'GET', `${base}/${session.id}`)).toMatchObject({ id: session.id });

    const turn = await answer(CompletedTurn, 'POST', `${base}/${session.id}/prompt`, {
      text: 'tool:files__write {"path":"shapes.txt","content":"x"}',
    });
    expect(turn.message?.parts[0]).toMatchObject({ type: 'text' });

    const messages = await answer(pageOf(Message), 'GET', `${base}/${session.id}/messages`);
    const partTypes = messages.items.flatMap((m) => m.parts.map((p) => p.type));
    expect(partTypes).toEqual(expect.arrayContaining(['text', 'tool']));

    const history = await answer(HistoryPage, 'GET', `${base}/${session.id}/history`);
    expect(history.items.length).toBeGreaterThan(0);

    await answer(pageOf(Session), 'GET', base);
    await answer(SystemInfo, 'GET', `${base}/${session.id}/system`);
    const fork = await answer(Session, 'POST', `${base}/${session.id}/fork`, { at_revision: 0 });
    expect(fork.forked_from).toEqual({ session_id: session.id, revision: 0 });
    await answer(QueuedTurn, 'POST', `${base}/${fork.id}/prompt`, { text: 'later', wait: false });
  });

  it('the event stream: stored events and part deltas', async () => {
    const session = await answer(Session, 'POST', base, {});
    const streamed = frames(session.id);
    await answer(CompletedTurn, 'POST', `${base}/${session.id}/prompt`, { text: 'stream this' });
    const all = await streamed;
    const deltas = all.filter((f) => f.event === 'part.delta');
    expect(deltas.length).toBeGreaterThan(0);
    for (const frame of deltas) PartDelta.parse(frame.data);
    for (const frame of all.filter((f) => f.event !== 'part.delta'))
      expect(HistoryEvent.parse(frame.data).type).toBe(frame.event);
  });

  it('an error answer is the one envelope', async () => {
    const res = await stack.call('GET', `${base}/ses_nope`);
    expect(res.status).toBe(404);
    ApiErrorBody.parse(res.json);
  });
});
