import { createParser, type EventSourceMessage } from 'eventsource-parser';

export interface Follow {
  status: number;
  headers: Headers;
  /** Every event received so far (comments excluded). */
  events: EventSourceMessage[];
  /** Comments received (heartbeats). */
  comments: string[];
  /** Resolves with the first event that matches, waiting for it if need be. */
  next(match: (event: EventSourceMessage) => boolean, timeoutMs?: number): Promise<EventSourceMessage>;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  close(): void;
}

/** Opens `url` as an SSE stream and reads it in the background, as a browser page would. */
export async function follow(url: string, headers: Record<string, string>): Promise<Follow> {
  const controller = new AbortController();
  const res = await fetch(url, { headers, signal: controller.signal });
  const events: EventSourceMessage[] = [];
  const comments: string[] = [];
  const waiters = new Set<() => void>();
  const parser = createParser({
    onEvent: (event) => {
      events.push(event);
      for (const wake of waiters) wake();
    },
    onComment: (comment) => comments.push(comment),
  });
  const ended = (async () => {
    if (!res.body || !(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) return;
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body) parser.feed(decoder.decode(chunk, { stream: true }));
    } catch {
      // closed by us
    }
  })();
  return {
    status: res.status,
    headers: res.headers,
    events,
    comments,
    ended,
    close: () => controller.abort(),
    next(match, timeoutMs = 5_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = events.find(match);
          if (!found) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(found);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no matching event within ${timeoutMs} ms; got ${events.map((e) => e.event)}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
  };
}
