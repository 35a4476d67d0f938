import { createServer, type Server } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import express, { type Response } from 'express';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { openSse, sseComment, sseFrame, writeSse } from './sse.ts';

let server: Server | undefined;
afterEach(() => {
  server?.closeAllConnections();
  server?.close();
  server = undefined;
});

/** Serves GET / with `handler`; `flushes` counts the responses' separate header flushes. */
async function serve(handler: (res: Response) => void) {
  const flushes = { count: 0 };
  const app = express();
  app.get('/', (_req, res) => {
    const flush = res.flushHeaders.bind(res);
    vi.spyOn(res, 'flushHeaders').mockImplementation(() => {
      flushes.count++;
      flush();
    });
    handler(res);
  });
  server = createServer(app);
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, flushes };
}

/** The bytes of the first read on a raw connection that asked for GET /. */
function firstRead(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () =>
      socket.write('GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n'),
    );
    socket.once('data', (data) => {
      resolve(data.toString());
      socket.destroy();
    });
    socket.once('error', reject);
  });
}

describe('openSse', () => {
  it('headers leave with the first event, in one write, when it is written in the same tick', async () => {
    const { port, flushes } = await serve((res) => {
      openSse(res);
      writeSse(res, '"first"');
    });
    const read = await firstRead(port);
    expect(read).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(read).toContain('content-type: text/event-stream; charset=utf-8');
    expect(read).toContain('data: "first"\n\n');
    expect(flushes.count).toBe(0);
  });

  it('a stream with no event yet gets its headers at once all the same', async () => {
    const { port, flushes } = await serve((res) => openSse(res));
    const started = Date.now();
    const response = await fetch(`http://127.0.0.1:${port}/`);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(response.headers.get('cache-control')).toBe('no-cache, no-transform');
    expect(response.headers.get('x-accel-buffering')).toBe('no');
    expect(flushes.count).toBe(1);
    await response.body?.cancel();
  });

  it('an event written in a later turn comes after headers already flushed alone', async () => {
    const { port, flushes } = await serve((res) => {
      openSse(res);
      setTimeout(() => {
        writeSse(res, '"late"', 'tick');
        res.end();
      }, 30);
    });
    const response = await fetch(`http://127.0.0.1:${port}/`);
    expect(await response.text()).toBe('event: tick\ndata: "late"\n\n');
    expect(flushes.count).toBe(1);
  });
});

describe('sseFrame', () => {
  it('writes retry, id, event and data in that order, each on its line, ending with a blank line', () => {
    expect(sseFrame({ data: '{"a":1}' })).toBe('data: {"a":1}\n\n');
    expect(sseFrame({ data: '[DONE]', event: 'done', id: 7, retry: 1000 })).toBe(
      'retry: 1000\nid: 7\nevent: done\ndata: [DONE]\n\n',
    );
    expect(sseComment('heartbeat')).toBe(': heartbeat\n\n');
  });
});
