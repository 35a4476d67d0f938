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

/** One server-sent event: `data` is JSON text (one line); `id`, `event` and `retry` when given. */
export interface SseEvent {
  data: string;
  event?: string;
  id?: number | string;
  /** How long EventSource waits before reconnecting, in ms. */
  retry?: number;
}

/** The one way every answer here frames a server-sent event. */
export function sseFrame({ data, event, id, retry }: SseEvent): string {
  return `${retry === undefined ? '' : `retry: ${retry}\n`}${id === undefined ? '' : `id: ${id}\n`}${event === undefined ? '' : `event: ${event}\n`}data: ${data}\n\n`;
}

/** A comment line: clients ignore it (heartbeats, a reason to stop). */
export const sseComment = (text: string): string => `: ${text}\n\n`;

/** Writes one event; each `res.write` goes to the socket at once (no compression, no buffering). */
export function writeSse(res: ServerResponse, data: string, event?: string): boolean {
  return res.write(sseFrame(event === undefined ? { data } : { data, event }));
}
