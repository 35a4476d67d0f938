import type { ServerResponse } from 'node:http';

// A streamed answer meets a client that reads slower than it is written in one of two ways:
// - an answer read from a source of its own (a generation, a log follow, embeddings) is written at
//   the client's pace: `writeWithBackpressure` waits for the socket to drain, so the source is read
//   no faster than the client reads, and nothing piles up in memory;
// - an answer fed from a source shared by many clients (a session's stream, `StreamHub`) cannot
//   wait for one of them: a client too far behind is cut off with the position to resume from
//   (`services/sessions/event-stream.ts`).

/**
 * Writes to a response, waiting for it to drain when the client reads slower than we produce, or to
 * close when the client goes away meanwhile (then nothing will ever drain), or for `signal` to abort.
 */
export async function writeWithBackpressure(
  res: ServerResponse,
  text: string,
  signal?: AbortSignal,
): Promise<void> {
  if (res.write(text) || res.destroyed) return;
  await drainedOrClosed(res, signal);
}

/** Resolves once the response drains or closes (a client gone will never drain), or `signal` aborts. */
export function drainedOrClosed(res: ServerResponse, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
    signal?.addEventListener('abort', done, { once: true });
  });
}
