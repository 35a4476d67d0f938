/**
 * The reference beside Studio in the SSE fan-out benchmark: about the least a Node server can do to
 * fan an event out over SSE. A bare `node:http` server keeps every open response in a Set; an
 * "append" stamps the time, serializes the event once (the same frame Studio sends: `id:`, `event:`,
 * `data: {type, data, revision, time}`) and writes it to every response in one loop. No store, no
 * Express, no per-client serialization, no slow-consumer guard.
 *
 * BENCH_SSE_REFERENCE_MODE (an experiment, not part of `npm run bench`): `string` (default: the frame
 * as a string, like Studio), `buffer` (encoded once into one Buffer shared by every write), `unchunked`
 * (the shared Buffer, and no chunked transfer encoding: the body ends with the connection, so each
 * write is one buffer instead of four: size line, CRLF, data, CRLF), `per-client` (the frame built and
 * serialized again for every client, as services/sessions/event-stream.ts does).
 *
 * Speaks the same IPC protocol as bench/sse/server.ts (see ./protocol.ts) and serves the two routes
 * the benchmark's clients use: `POST /api/sdk/sessions` and `GET /api/sdk/sessions/:id/events`.
 */
import http, { type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type AppendReport, type Command, type Marks, now, type Ready, type Stamp } from './protocol.ts';

const MODE = process.env.BENCH_SSE_REFERENCE_MODE ?? 'string';
const sessions = new Map<string, { revision: number; clients: Set<ServerResponse> }>();
const marks = new Map<string, Marks>();

const server = http.createServer((req, res) => {
  const url = req.url ?? '';
  if (req.method === 'POST' && url === '/api/sdk/sessions') {
    req.resume();
    const id = `ref_${sessions.size + 1}`;
    sessions.set(id, { revision: 0, clients: new Set() });
    res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ id }));
    return;
  }
  const match = /^\/api\/sdk\/sessions\/([^/]+)\/events$/.exec(url);
  const session = match ? sessions.get(match[1]!) : undefined;
  if (req.method !== 'GET' || !session) {
    res.writeHead(404).end();
    return;
  }
  if (MODE === 'unchunked') res.useChunkedEncodingByDefault = false;
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
  });
  res.flushHeaders();
  session.clients.add(res);
  res.on('close', () => session.clients.delete(res));
});

function fanOut(sessionId: string, stamp: Stamp): void {
  const session = sessions.get(sessionId);
  if (!session) throw new Error(`no session ${sessionId}`);
  const revision = ++session.revision;
  const view = {
    type: 'SystemUpdated',
    data: { system: JSON.stringify(stamp) },
    revision,
    time: new Date().toISOString(),
  };
  const frame = `id: ${revision}\nevent: SystemUpdated\ndata: ${JSON.stringify(view)}\n\n`;
  if (MODE === 'per-client') {
    // What services/sessions/event-stream.ts does: build and serialize the frame again for every client.
    for (const res of session.clients)
      res.write(`id: ${revision}\nevent: ${view.type}\ndata: ${JSON.stringify({ ...view })}\n\n`);
  } else {
    const chunk = MODE === 'string' ? frame : Buffer.from(frame);
    for (const res of session.clients) res.write(chunk);
  }
  const times = marks.get(stamp.tag) ?? { appendAt: [], handedAt: [], flushedAt: [] };
  marks.set(stamp.tag, times);
  times.appendAt[stamp.seq] = stamp.sentAt;
  times.handedAt[stamp.seq] = now();
  process.nextTick(() => (times.flushedAt[stamp.seq] = now()));
}

async function append(
  sessionId: string,
  tag: string,
  count: number,
  intervalMs: number,
  padBytes: number,
): Promise<AppendReport> {
  const pad = padBytes > 0 ? 'x'.repeat(padBytes) : undefined;
  let timerLagMaxMs = 0;
  const start = now() + 5;
  for (let seq = 0; seq < count; seq++) {
    const sched = intervalMs > 0 ? start + seq * intervalMs : start;
    const wait = sched - now();
    if (intervalMs > 0 && wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const sentAt = now();
    timerLagMaxMs = Math.max(timerLagMaxMs, sentAt - sched);
    fanOut(sessionId, { bench: 1, tag, seq, sched, sentAt, ...(pad ? { pad } : {}) });
  }
  return { errors: [], lastRevision: sessions.get(sessionId)?.revision ?? -1, timerLagMaxMs };
}

const reply = (message: object) => process.send?.(message);

process.on('message', (message: Command) => {
  void (async () => {
    try {
      switch (message.cmd) {
        case 'now':
          reply({ id: message.id, now: now() });
          break;
        case 'mem': {
          const gc = (globalThis as { gc?: () => void }).gc;
          gc?.();
          gc?.();
          reply({ id: message.id, ...process.memoryUsage(), gc: gc !== undefined });
          break;
        }
        case 'marks':
          reply({
            id: message.id,
            ...(marks.get(message.tag) ?? { appendAt: [], handedAt: [], flushedAt: [] }),
          });
          marks.delete(message.tag);
          break;
        case 'append':
          reply({
            id: message.id,
            ...(await append(
              message.sessionId,
              message.tag,
              message.count,
              message.intervalMs,
              message.padBytes ?? 0,
            )),
          });
          break;
        case 'profile-start':
        case 'profile-stop':
        case 'heap-snapshot':
          throw new Error('the reference server does not profile');
        case 'stop':
          server.closeAllConnections();
          server.close();
          reply({ id: message.id });
          setImmediate(() => process.exit(0));
          break;
      }
    } catch (error) {
      reply({
        id: message.id,
        error: error instanceof Error ? (error.stack ?? error.message) : String(error),
      });
    }
  })();
});
process.on('disconnect', () => process.exit(0));

server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  const ready: Ready = { url: `http://127.0.0.1:${port}`, gateway: '', pid: process.pid, store: 'reference' };
  process.stdout.write(`${JSON.stringify(ready)}\n`);
  reply({ id: 0, ...ready });
});
