import type { ServerResponse } from 'node:http';
import { noteSseOpened } from '../observability/http.ts';

/**
 * Starts an SSE answer: no buffering by proxies. The headers leave with the first event, in the same
 * write; when no event was written by the end of this tick of the event loop, they are flushed
 * alone, so that a client waiting for the first event still sees the answer start at once.
 * (The events written in one tick already leave in one write: a response's write corks its socket
 * and uncorks it on the next tick.)
 */
export function openSse(res: ServerResponse): void {
  res.statusCode = 200;
  res.setHeader('content-type', 'text/event-stream; charset=utf-8');
  res.setHeader('cache-control', 'no-cache, no-transform');
  res.setHeader('connection', 'keep-alive');
  res.setHeader('x-accel-buffering', 'no');
  noteSseOpened(res.req, res);
  setImmediate(() => {
    if (!res.headersSent && !res.destroyed) res.flushHeaders();
  });
}

/** Writes one event; each `res.write` goes to the socket at once (no compression, no buffering). */
export function writeSse(res: ServerResponse, data: string, event?: string): boolean {
  return res.write(`${event ? `event: ${event}\n` : ''}data: ${data}\n\n`);
}
