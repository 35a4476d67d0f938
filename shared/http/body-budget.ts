import type { IncomingMessage, ServerResponse } from 'node:http';
import { overloaded } from '../errors.ts';

/** Bodies up to this size are not counted: every route takes them, and they are cheap. */
export const SMALL_BODY_BYTES = 1024 * 1024;
export const DEFAULT_LARGE_BODIES_BUDGET_BYTES = 256 * 1024 * 1024;

/**
 * Bounds the memory held by large request bodies (a 32 MiB JSON body costs several times that once
 * parsed): bodies over 1 MiB being received or handled share one budget of bytes, and a request
 * that does not fit is refused before a byte of its body is read.
 */
export class LargeBodyBudget {
  #inFlight = 0;

  constructor(readonly totalBytes: number = DEFAULT_LARGE_BODIES_BUDGET_BYTES) {}

  get inFlight(): number {
    return this.#inFlight;
  }

  /**
   * Reserves room for `req`'s body until its response closes; a 503 `overloaded` (and the
   * connection closed, its body unread) when the budget is spent.
   */
  hold(req: IncomingMessage, res: ServerResponse, limit: number): void {
    // A body may not need more than the whole budget: it is then alone, but never always refused.
    const bytes = Math.min(largeBodyBytes(req, limit), this.totalBytes);
    if (bytes === 0) return;
    if (this.#inFlight + bytes > this.totalBytes) {
      res.setHeader('Connection', 'close');
      throw overloaded('too many large request bodies are being handled at once: retry shortly');
    }
    if (res.closed) return; // its client has gone: no \`close\` is left to come and give the room back
    this.#inFlight += bytes;
    res.once('close', () => {
      this.#inFlight -= bytes;
    });
  }
}

/**
 * What a body may take: its declared length when that is over 1 MiB; the route's whole limit when
 * the length is unknown (chunked) or the body is compressed (it may inflate up to the limit).
 */
function largeBodyBytes(req: IncomingMessage, limit: number): number {
  if (limit <= SMALL_BODY_BYTES) return 0;
  const encoding = req.headers['content-encoding']?.trim().toLowerCase();
  const declared = req.headers['content-length'];
  if ((encoding === undefined || encoding === 'identity') && declared !== undefined) {
    const length = Number(declared);
    if (Number.isSafeInteger(length) && length >= 0)
      return length <= SMALL_BODY_BYTES ? 0 : Math.min(length, limit);
  }
  return req.headers['transfer-encoding'] === undefined && declared === undefined ? 0 : limit;
}
