import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeletedSession } from '../../services/sessions/schemas.ts';
import { startTestStack, type TestStack } from '../support/runtime.ts';

// DELETE /api/sdk/sessions/:id: a SessionDeleted event, the session gone from the list and every
// route (404), its events kept in the log.

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(() => stack?.close());

const base = '/api/sdk/sessions';

describe('deleting a session', () => {
  it('answers {id, deleted}, drops it from the list and every route, and keeps its events in the log', async () => {
    const kept = await stack.call('POST', base, { title: 'kept' });
    const gone = await stack.call('POST', base, { title: 'to delete' });
    expect(gone.status).toBe(201);
    const id = gone.json.id as string;
    const answered = await stack.call('POST', `${base}/${id}/prompt`, { text: 'hello' });
    expect(answered.status, answered.text).toBe(200);

    const deleted = await stack.call('DELETE', `${base}/${id}`);
    expect(deleted.status, deleted.text).toBe(200);
    expect(DeletedSession.parse(deleted.json)).toEqual({ id, deleted: true });

    const list = await stack.call('GET', `${base}?limit=200`);
    const ids = (list.json.items as { id: string }[]).map((s) => s.id);
    expect(ids).toContain(kept.json.id);
    expect(ids).not.toContain(id);
    for (const path of [`${base}/${id}`, `${base}/${id}/messages`, `${base}/${id}/history`]) {
      const res = await stack.call('GET', path);
      expect(res.status, path).toBe(404);
      expect(res.json.error.code).toBe('not_found');
    }
    expect((await stack.call('POST', `${base}/${id}/prompt`, { text: 'again' })).status).toBe(404);
    expect((await stack.call('DELETE', `${base}/${id}`)).status).toBe(404);

    const log = await stack.gw.api('GET', `/v1/audit/events?stream=session-${id}&limit=200`, {
      token: stack.gw.adminKey,
    });
    const stored = log.json.items as { type: string; data: unknown }[];
    expect(stored.at(-1)).toMatchObject({ type: 'SessionDeleted', data: { sessionId: id } });
    expect(stored.map((e) => e.type)).toContain('TurnCompleted');
  });

  it('is a 404 for a session that never existed', async () => {
    const res = await stack.call('DELETE', `${base}/ses_nobody`);
    expect(res.status).toBe(404);
    expect(res.json.error.code).toBe('not_found');
  });
});
