import type { EventStore } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/**
 * What one session of `/v1/mcp` sent on its SSE streams, kept in memory (one store per session: the
 * SDK names every session's GET stream alike) so a client that lost a stream resumes it
 * with `Last-Event-ID` (the SDK's `EventStore`). Bounded: past `maxEvents` the oldest are
 * forgotten, and a client resuming from one of those gets only what is still kept. Event ids are
 * `<stream id>:<sequence>`, so the stream of an id is read from it.
 */
export class ResumeStore implements EventStore {
  readonly #events = new Map<string, { streamId: string; message: JSONRPCMessage }>();
  #sequence = 0;

  constructor(private readonly maxEvents = 10_000) {}

  async storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    const eventId = `${streamId}:${++this.#sequence}`;
    this.#events.set(eventId, { streamId, message });
    if (this.#events.size > this.maxEvents) {
      const oldest = this.#events.keys().next().value;
      if (oldest !== undefined) this.#events.delete(oldest);
    }
    return eventId;
  }

  async getStreamIdForEventId(eventId: string): Promise<string | undefined> {
    const colon = eventId.lastIndexOf(':');
    return colon > 0 ? eventId.slice(0, colon) : undefined;
  }

  async replayEventsAfter(
    lastEventId: string,
    { send }: { send: (eventId: string, message: JSONRPCMessage) => Promise<void> },
  ): Promise<string> {
    const streamId = (await this.getStreamIdForEventId(lastEventId)) ?? '';
    const after = Number(lastEventId.slice(streamId.length + 1));
    for (const [eventId, event] of this.#events) {
      if (event.streamId !== streamId) continue;
      if (Number(eventId.slice(streamId.length + 1)) > after) await send(eventId, event.message);
    }
    return streamId;
  }
}
