import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryEventStore } from '../../shared/event-store/memory.ts';
import { createLogger } from '../../shared/logger.ts';
import { streamSession } from './event-stream.ts';
import { LiveBus, type PartDelta } from './live.ts';
import { sessionStreamId } from './session.ts';
import { StreamHub } from './stream-hub.ts';

const events = new MemoryEventStore();
const live = new LiveBus();
const hub = new StreamHub(events, createLogger('silent'));
let server: Server | undefined;
afterEach(() => {
  server?.closeAllConnections();
  server?.close();
  hub.close();
});

/** `count` clients tailing session `s1` from the start, each read through a text reader. */
async function clients(count: number) {
  const app = express();
  app.get('/events', (_req, res) => {
    void streamSession(res, { events, hub, live, sessionId: 's1', after: -1, heartbeatMs: 60_000 });
  });
  server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`;
  const readers = await Promise.all(
    Array.from({ length: count }, async () =>
      (await fetch(url)).body!.pipeThrough(new TextDecoderStream()).getReader(),
    ),
  );
  await new Promise((r) => setTimeout(r, 20)); // every client has joined the live tail
  return {
    readUntil: (done: (text: string) => boolean) =>
      Promise.all(
        readers.map(async (reader) => {
          let text = '';
          while (!done(text)) text += (await reader.read()).value ?? '';
          return text;
        }),
      ),
  };
}

describe('streamSession', () => {
  it('every client gets the stored event and the live delta; the delta is serialized once for all', async () => {
    const { readUntil } = await clients(3);
    let serialized = 0;
    const plain: PartDelta = {
      type: 'part.delta',
      sessionId: 's1',
      messageId: 'm1',
      partId: 'p1',
      delta: 'Hel',
    };
    // JSON.stringify calls toJSON once per serialization; the prototype keeps it out of the output.
    const counting = {
      toJSON: () => {
        serialized++;
        return plain;
      },
    };
    const delta: PartDelta = Object.assign(Object.create(counting), plain);

    await events.append(sessionStreamId('s1'), [{ type: 'Noted', data: { n: 1 } }], {
      metadata: { actor: 'test' },
    });
    live.publish(delta);
    const texts = await readUntil(
      (text) => text.includes('event: part.delta') && text.includes('event: Noted'),
    );

    for (const text of texts) {
      expect(text).toContain('id: 0\nevent: Noted\ndata: {"type":"Noted","data":{"n":1},"revision":0,');
      expect(text).toContain(
        'event: part.delta\ndata: {"type":"part.delta","sessionId":"s1","messageId":"m1","partId":"p1","delta":"Hel"}\n\n',
      );
    }
    expect(serialized).toBe(1);
  });
});
