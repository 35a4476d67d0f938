import type { Request, Response } from 'express';
import { ApiError } from '../../shared/errors.ts';
import type { EventStore, StoredEvent } from '../../shared/event-store/types.ts';
import { openSse } from '../../shared/http/sse.ts';
import type { LiveBus } from '../runtime/live.ts';
import { sessionStreamId } from './session.ts';
import type { StreamHub } from './stream-hub.ts';

/** What a slow client may have waiting in the socket before it is cut off (it resumes from its last id). */
export const MAX_PENDING_BYTES = 1024 * 1024;
const PAGE = 500;

/** `Last-Event-ID` or `?after=`: a stream revision, -1 for "from the start". */
export function resumePoint(req: Request): number {
  const header = req.header('last-event-id');
  const query = typeof req.query.after === 'string' ? req.query.after : undefined;
  const raw = header ?? query;
  if (raw === undefined || raw === '') return -1;
  if (!/^(-1|\d{1,15})$/.test(raw.trim())) {
    throw new ApiError(
      'validation_failed',
      `${header === undefined ? 'after' : 'Last-Event-ID'} must be a revision (a whole number)`,
      {
        param: header === undefined ? 'after' : 'Last-Event-ID',
      },
    );
  }
  return Number(raw.trim());
}

export const eventView = (e: StoredEvent) => ({
  type: e.type,
  data: e.data,
  revision: e.revision,
  time: e.createdAt,
});

/**
 * Tails one session over SSE: stored events after the resume point (each once, `id:` = revision),
 * then live ones, plus live `part.delta` without ids, and a heartbeat comment every 15 s.
 */
export async function streamSession(
  res: Response,
  deps: {
    events: EventStore;
    hub: StreamHub;
    live: LiveBus;
    sessionId: string;
    after: number;
    heartbeatMs: number;
  },
): Promise<void> {
  const { sessionId } = deps;
  const streamId = sessionStreamId(sessionId);
  let cursor = deps.after;
  let caughtUp = false;
  const waiting: StoredEvent[] = [];
  let closed = false;

  openSse(res);

  // The backlog is judged after the writes of this tick have gone to the socket: bytes written in
  // the same tick are not yet sent, and counting them would cut off clients that read at full speed.
  let checkScheduled = false;
  const checkBacklog = () => {
    checkScheduled = false;
    if (closed || res.writableLength <= MAX_PENDING_BYTES) return;
    // Too far behind: stop here; the client reconnects with its last id and catches up from the log.
    closed = true;
    res.end(`: too slow, resume with Last-Event-ID ${cursor}\n\n`);
  };
  const write = (text: string) => {
    if (closed) return;
    res.write(text);
    if (!checkScheduled && res.writableLength > MAX_PENDING_BYTES) {
      checkScheduled = true;
      setImmediate(checkBacklog);
    }
  };
  const send = (event: StoredEvent) => {
    if (event.revision <= cursor) return;
    cursor = event.revision;
    write(`id: ${event.revision}\nevent: ${event.type}\ndata: ${JSON.stringify(eventView(event))}\n\n`);
  };

  // Join the live tail first, then read what is stored: nothing can fall between the two.
  const leave = deps.hub.listen(streamId, cursor, (event) => (caughtUp ? send(event) : waiting.push(event)));
  const unsubscribeDeltas = deps.live.subscribe(sessionId, (delta) =>
    write(`event: part.delta\ndata: ${JSON.stringify(delta)}\n\n`),
  );
  const heartbeat = setInterval(() => write(': heartbeat\n\n'), deps.heartbeatMs);
  heartbeat.unref();
  const stop = () => {
    closed = true;
    clearInterval(heartbeat);
    leave();
    unsubscribeDeltas();
  };
  res.on('close', stop);

  try {
    for (;;) {
      const page = await deps.events.readStream(streamId, { after: cursor, limit: PAGE });
      for (const event of page) send(event);
      if (page.length < PAGE || closed) break;
    }
    for (const event of waiting.splice(0)) send(event);
    caughtUp = true;
  } catch (error) {
    stop();
    res.end();
    throw error;
  }
}
