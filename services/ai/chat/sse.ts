import { createParser, type EventSourceMessage } from 'eventsource-parser';

/** Server-sent events from an upstream body, parsed as they arrive (no buffering of the whole body). */
export async function* readSse(body: AsyncIterable<Buffer>): AsyncGenerator<EventSourceMessage> {
  const pending: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (event) => pending.push(event) });
  const decoder = new TextDecoder();
  for await (const chunk of body) {
    parser.feed(decoder.decode(chunk, { stream: true }));
    while (pending.length > 0) yield pending.shift()!;
  }
  parser.feed(decoder.decode());
  while (pending.length > 0) yield pending.shift()!;
}
