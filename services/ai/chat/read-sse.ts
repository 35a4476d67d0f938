import { StringDecoder } from 'node:string_decoder';
import { createParser, type EventSourceMessage } from 'eventsource-parser';

/** Most bytes read from a body after its reader stopped early; beyond, it is destroyed after all. */
const REST_LIMIT_BYTES = 256 * 1024;

/**
 * Server-sent events from an upstream body, parsed as they arrive (no buffering of the whole body).
 * A reader that stops early (at `[DONE]`) leaves the rest of the body to be read in the background:
 * destroying it instead would abort the upstream request, lose its keep-alive connection and build
 * an AbortError. Cancelling goes through the request's signal, which still ends the body at once.
 */
export async function* readSse(body: AsyncIterable<Buffer>): AsyncGenerator<EventSourceMessage> {
  const pending: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (event) => pending.push(event) });
  // Not TextDecoder, which opens an ICU converter for every body: a short streamed answer read in
  // 5.4–6.1 µs with it, 3.6–3.7 µs with this. A byte order mark opening the body is dropped, as the
  // SSE standard says.
  const decoder = new StringDecoder('utf8');
  let first = true;
  const chunks = body[Symbol.asyncIterator]();
  let yielding = false;
  try {
    for (;;) {
      const next = await chunks.next();
      if (next.done) break;
      let text = decoder.write(next.value);
      if (first && text.length > 0) {
        first = false;
        if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      }
      parser.feed(text);
      yielding = true;
      while (pending.length > 0) yield pending.shift()!;
      yielding = false;
    }
  } finally {
    // Only when the reader stopped at a yield: after an error or the end there is nothing left.
    if (yielding) void readRest(chunks);
  }
  parser.feed(decoder.end());
  while (pending.length > 0) yield pending.shift()!;
}

/** Reads what is left of a body the reader stopped early, up to `REST_LIMIT_BYTES`, and drops it. */
async function readRest(chunks: AsyncIterator<Buffer>): Promise<void> {
  let read = 0;
  try {
    for (;;) {
      const next = await chunks.next();
      if (next.done) return;
      read += next.value.length;
      if (read > REST_LIMIT_BYTES) {
        await chunks.return?.();
        return;
      }
    }
  } catch {
    // The upstream broke off or was cancelled: nobody is waiting for the rest any more.
  }
}
