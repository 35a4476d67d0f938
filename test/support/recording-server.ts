import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Recorded {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
  /** Set when the client went away before the answer ended. */
  aborted: boolean;
}

export type MockHandler = (req: Recorded, res: ServerResponse) => unknown;

/** A plain node:http server on loopback that records every request and answers with `handler`. */
export async function recordingServer(
  handler: MockHandler,
): Promise<{ url: string; requests: Recorded[]; setHandler(h: MockHandler): void; close(): Promise<void> }> {
  let current = handler;
  const requests: Recorded[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const recorded: Recorded = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks),
        aborted: false,
      };
      requests.push(recorded);
      res.on('close', () => {
        if (!res.writableFinished) recorded.aborted = true;
      });
      void Promise.resolve(current(recorded, res)).catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    setHandler(h) {
      current = h;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

export function startSse(res: ServerResponse): (data: string, event?: string) => void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  return (data, event) => {
    res.write(`${event ? `event: ${event}\n` : ''}data: ${data}\n\n`);
  };
}
