import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from '../../shared/errors.ts';
import type { EventStore, StoredEvent } from '../../shared/event-store/types.ts';
import { onHeartbeat } from '../../shared/http/heartbeat.ts';
import { headerOf, queryOf } from '../../shared/http/request.ts';
import { openSse, sseComment, sseFrame } from '../../shared/http/sse.ts';
import type { LiveBus, PartDelta } from './live.ts';
import { sessionStreamId } from './session.ts';
import type { StreamHub } from './stream-hub.ts';

/** What a slow client may have waiting in the socket before it is cut off (it resumes from its last id). */
export const MAX_PENDING_BYTES = 1024 * 1024;
const PAGE = 500;

/** `Last-Event-ID` or `?after=`: a stream revision, -1 for "from the start". */
export function resumePoint(req: IncomingMessage): number {
  const header = headerOf(req, 'last-event-id');
  const after = queryOf(req).after;
  const query = typeof after === 'string' ? after : undefined;
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

/** `build(key)` once per key object: every client of a stream is handed the same objects. */
function memoized<K extends object>(build: (key: K) => string): (key: K) => string {
  const built = new WeakMap<K, string>();
  return (key) => {
    let text = built.get(key);
    if (text === undefined) {
      text = build(key);
      built.set(key, text);
    }
    return text;
  };
}

// The hub hands the same batch of the same events to every client, and the live bus the same
// delta: each is serialized once, not once per client.
const frameOf = memoized<StoredEvent>((event) =>
  sseFrame({ id: event.revision, event: event.type, data: JSON.stringify(eventView(event)) }),
);
const batchFrameOf = memoized<readonly StoredEvent[]>((events) => events.map(frameOf).join(''));
const framesOf = (events: readonly StoredEvent[]) =>
  events.length === 1 ? frameOf(events[0] as StoredEvent) : batchFrameOf(events);
const deltaFrameOf = memoized<PartDelta>((delta) =>
  sseFrame({ event: 'part.delta', data: JSON.stringify(delta) }),
);

/** How soon a client told to go away reconnects (EventSource's `retry:`). */
export const RECONNECT_AFTER_MS = 1_000;

/**
 * The last frame of a stream whose process is stopping: `retry:` for EventSource, and a
 * `server.going_away` event (no id) naming the revision to resume after.
 */
export const goingAwayFrame = (cursor: number) =>
  sseFrame({
    retry: RECONNECT_AFTER_MS,
    event: 'server.going_away',
    data: JSON.stringify({ reason: 'shutting_down', resume_after: cursor }),
  });

/**
 * Tails one session over SSE: stored events after the resume point (each once, `id:` = revision),
 * then live ones, plus live `part.delta` without ids, and a heartbeat comment every 15 s.
 */
export async function streamSession(
  res: ServerResponse,
  deps: {
    events: EventStore;
    hub: StreamHub;
    live: LiveBus;
    sessionId: string;
    after: number;
    heartbeatMs: number;
    /** Registers how to end this stream when the process drains (`Drain.onBegin`). */
    onDrain?: (goAway: () => void) => () => void;
  },
): Promise<void> {
  const { sessionId } = deps;
  const streamId = sessionStreamId(sessionId);
  let cursor = deps.after;
  let caughtUp = false;
  const waiting: (readonly StoredEvent[])[] = [];
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
    res.end(sseComment(`too slow, resume with Last-Event-ID ${cursor}`));
  };
  const write = (text: string) => {
    if (closed) return;
    res.write(text);
    if (!checkScheduled && res.writableLength > MAX_PENDING_BYTES) {
      checkScheduled = true;
      setImmediate(checkBacklog);
    }
  };
  /** Writes the events after the cursor, in one write (revisions ascend within a batch). */
  const send = (events: readonly StoredEvent[]) => {
    const first = events[0];
    const fresh =
      first !== undefined && first.revision > cursor ? events : events.filter((e) => e.revision > cursor);
    const last = fresh.at(-1);
    if (last === undefined) return;
    cursor = last.revision;
    write(framesOf(fresh));
  };

  // Join the live tail first, then read what is stored: nothing can fall between the two.
  const leave = deps.hub.listen(streamId, cursor, (events) =>
    caughtUp ? send(events) : waiting.push(events),
  );
  const unsubscribeDeltas = deps.live.subscribe(sessionId, (delta) => write(deltaFrameOf(delta)));
  const stopHeartbeat = onHeartbeat(deps.heartbeatMs, () => write(sseComment('heartbeat')));
  // Draining: the client is told to reconnect (to another process) from its last id, and let go.
  const forgetDrain = deps.onDrain?.(() => {
    write(goingAwayFrame(cursor));
    closed = true;
    res.end();
  });
  const stop = () => {
    closed = true;
    stopHeartbeat();
    leave();
    unsubscribeDeltas();
    forgetDrain?.();
  };
  res.on('close', stop);

  try {
    for (;;) {
      const page = await deps.events.readStream(streamId, { after: cursor, limit: PAGE });
      send(page);
      if (page.length < PAGE || closed) break;
    }
    for (const events of waiting.splice(0)) send(events);
    caughtUp = true;
  } catch (error) {
    stop();
    res.end();
    throw error;
  }
}
