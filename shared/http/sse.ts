import type { Response } from 'express';

/** Starts an SSE answer: no buffering by proxies, headers flushed at once. */
export function openSse(res: Response): void {
  res.status(200);
  res.setHeader('content-type', 'text/event-stream; charset=utf-8');
  res.setHeader('cache-control', 'no-cache, no-transform');
  res.setHeader('connection', 'keep-alive');
  res.setHeader('x-accel-buffering', 'no');
  res.flushHeaders();
}

/** Writes one event; each `res.write` goes to the socket at once (no compression, no buffering). */
export function writeSse(res: Response, data: string, event?: string): boolean {
  return res.write(`${event ? `event: ${event}\n` : ''}data: ${data}\n\n`);
}
