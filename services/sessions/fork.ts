import { foldEvents } from '../../shared/decider.ts';
import { ApiError } from '../../shared/errors.ts';
import type { EventMetadata, EventStore } from '../../shared/event-store/types.ts';
import { newSessionId } from './ids.ts';
import { type SessionEvent, sessionDecider, sessionStreamId } from './session.ts';

/**
 * Appends a new session whose history is the source's up to `atRevision` (copied, in one atomic
 * append) followed by its own, beginning with `SessionForked`. The source is not touched. Answers the
 * new session's id and the position of the append.
 */
export async function forkSession(
  events: EventStore,
  source: { id: string; revision: number },
  atRevision: number | undefined,
  metadata: EventMetadata,
): Promise<{ sessionId: string; position: number }> {
  const last = source.revision;
  const cut = atRevision ?? last;
  if (cut < 0 || cut > last) {
    throw new ApiError(
      'validation_failed',
      `at_revision must be between 0 and ${last}, the last revision of ${source.id}`,
      { param: 'at_revision' },
    );
  }
  const copies = await events.readStream(sessionStreamId(source.id), { limit: cut + 1 });
  const sessionId = newSessionId();
  const state = foldEvents(sessionDecider, copies as SessionEvent[]);
  const decided = sessionDecider.decide(
    { type: 'ForkSession', sessionId, fromSessionId: source.id, atRevision: cut },
    state,
  );
  const result = await events.append(
    sessionStreamId(sessionId),
    [...copies.map((e) => ({ type: e.type, data: e.data })), ...decided],
    { expected: 'no_stream', metadata },
  );
  return { sessionId, position: result.position };
}
