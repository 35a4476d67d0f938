import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { UpstreamClient } from '../upstream.ts';
import { readSse, readSseAs, SSE_END } from './read-sse.ts';

const pause = (ms = 20) => new Promise((r) => setTimeout(r, ms));

/** A body of `chunks`, noting how far it was read and whether it was cut off (destroyed) early. */
function body(chunks: Iterable<string>) {
  const state = { read: 0, ended: false, cutOff: false };
  const iterable = (async function* () {
    try {
      for (const chunk of chunks) {
        state.read++;
        yield Buffer.from(chunk);
      }
      state.ended = true;
    } finally {
      state.cutOff = !state.ended;
    }
  })();
  return { iterable, state };
}

describe('readSse', () => {
  it('a reader that stops early leaves the rest of the body to be read to its end, not destroyed', async () => {
    const { iterable, state } = body(['data: 1\n\n', 'data: [DONE]\n\n', ': trailing\n\n', 'data: 2\n\n']);
    for await (const event of readSse(iterable)) if (event.data === '[DONE]') break;
    await pause();
    expect(state).toEqual({ read: 4, ended: true, cutOff: false });
  });

  it('a body that goes on and on after the reader stopped is destroyed after all', async () => {
    const { iterable, state } = body(
      (function* () {
        yield 'data: [DONE]\n\n';
        for (;;) yield `: ${'x'.repeat(64 * 1024)}\n\n`;
      })(),
    );
    for await (const event of readSse(iterable)) if (event.data === '[DONE]') break;
    await pause();
    expect(state.cutOff).toBe(true);
    expect(state.read).toBeLessThan(10);
  });

  it('a body read to its end gives every event, split across chunks or not', async () => {
    const { iterable, state } = body(['data: a\n\nda', 'ta: b\n', '\n']);
    const events: string[] = [];
    for await (const event of readSse(iterable)) events.push(event.data);
    expect(events).toEqual(['a', 'b']);
    expect(state).toEqual({ read: 3, ended: true, cutOff: false });
  });
});

describe('readSseAs', () => {
  it('makes each event what its reader says, and stops at SSE_END with the rest of the body read, not destroyed', async () => {
    const { iterable, state } = body([
      'data: 1\n\ndata: 2\n\n',
      'data: [DONE]\n\ndata: 3\n\n',
      ': trailing\n\n',
    ]);
    const read: number[] = [];
    for await (const n of readSseAs(iterable, (event) =>
      event.data === '[DONE]' ? SSE_END : Number(event.data),
    ))
      read.push(n);
    expect(read).toEqual([1, 2]);
    await pause();
    expect(state).toEqual({ read: 3, ended: true, cutOff: false });
  });

  it('a reader that throws on an event fails the read with its error, and the rest of the body is still read', async () => {
    const { iterable, state } = body(['data: ok\n\n', 'data: bad\n\n', 'data: after\n\n']);
    const read: string[] = [];
    const reading = (async () => {
      for await (const data of readSseAs(iterable, (event) => {
        if (event.data === 'bad') throw new Error('not an event we take');
        return event.data;
      }))
        read.push(data);
    })();
    await expect(reading).rejects.toThrow('not an event we take');
    expect(read).toEqual(['ok']);
    await pause();
    expect(state).toEqual({ read: 3, ended: true, cutOff: false });
  });

  it('a body that fails fails the read with what bodyError makes of it', async () => {
    const failing = (async function* () {
      yield Buffer.from('data: 1\n\n');
      throw new Error('socket hang up');
    })();
    const read: string[] = [];
    const reading = (async () => {
      for await (const event of readSseAs(
        failing,
        (event) => event.data,
        (error) => new Error(`mapped: ${(error as Error).message}`),
      ))
        read.push(event);
    })();
    await expect(reading).rejects.toThrow('mapped: socket hang up');
    expect(read).toEqual(['1']);
  });
});

describe('readSse decoding', () => {
  const read = async (chunks: Buffer[]) => {
    const events: string[] = [];
    for await (const event of readSse(
      (async function* () {
        yield* chunks;
      })(),
    ))
      events.push(event.data);
    return events;
  };

  it('a character split between two reads of the body arrives whole', async () => {
    const bytes = Buffer.from('data: {"content":"héllo 👋"}\n\n');
    const cut = bytes.indexOf(Buffer.from('👋')) + 2;
    expect(await read([bytes.subarray(0, cut), bytes.subarray(cut)])).toEqual(['{"content":"héllo 👋"}']);
  });

  it('a byte order mark opening the body is dropped, even split over reads; one later is text', async () => {
    const bom = Buffer.from([0xef, 0xbb, 0xbf]);
    const body = Buffer.concat([bom, Buffer.from('data: a\n\ndata: \ufeffb\n\n')]);
    expect(await read([body.subarray(0, 2), body.subarray(2)])).toEqual(['a', '\ufeffb']);
  });
});

describe('readSse over an upstream connection', () => {
  let server: Server | undefined;
  let upstream: UpstreamClient | undefined;
  afterEach(async () => {
    await upstream?.close();
    server?.close();
  });

  it('stopping at [DONE] ends the body cleanly and keeps the connection for the next request', async () => {
    const sockets = new Set<Socket>();
    server = createServer((req, res) => {
      sockets.add(req.socket);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"n":1}\n\ndata: [DONE]\n\n');
      setTimeout(() => res.end(), 30); // the end of the body comes a little after [DONE]
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    upstream = new UpstreamClient();
    const call = () =>
      upstream!.send({
        url,
        headers: {},
        signal: new AbortController().signal,
        secrets: [],
        tenant: 't',
        baseUrlVariable: 'TEST_BASE_URL',
      });

    const first = await call();
    const events: string[] = [];
    for await (const event of readSse(first.body)) {
      events.push(event.data);
      if (event.data === '[DONE]') break;
    }
    expect(events).toEqual(['{"n":1}', '[DONE]']);
    await pause(80);
    const stream = first.body as unknown as { readableEnded: boolean; errored: Error | null };
    expect(stream.errored).toBeNull();
    expect(stream.readableEnded).toBe(true);

    const second = await call();
    await second.body.text();
    expect(sockets.size).toBe(1);
  });
});
