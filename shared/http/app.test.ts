import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger, type Logger } from '../logger.ts';
import { endExpressApp, expressApp } from './app.ts';
import { frontDoor } from './front-door.ts';

let server: Server | undefined;
afterEach(() => {
  server?.close();
  server = undefined;
});

/** The front door and an express app with a few routes, listening on loopback; its log lines parsed. */
async function start(level: string) {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger(level, { write: (line: string) => lines.push(JSON.parse(line)) });
  const app = expressApp();
  app.post('/echo', (_req, res) => {
    res.json({ ok: true });
  });
  app.get('/fail', (_req, res) => {
    res.status(503).json({ error: 'down' });
  });
  app.get('/hang', () => undefined);
  endExpressApp(app, logger);
  const listening = await new Promise<Server>((resolve) => {
    const s = createServer(frontDoor({ logger, rest: app })).listen(0, '127.0.0.1', () => resolve(s));
  });
  server = listening;
  const url = `http://127.0.0.1:${(listening.address() as AddressInfo).port}`;
  return { url, lines, logger };
}

/** The line is written once the response has closed, just after the client has its answer. */
async function settled(lines: unknown[], count: number): Promise<void> {
  for (let i = 0; i < 100 && lines.length < count; i++) await new Promise((r) => setTimeout(r, 5));
  await new Promise((r) => setTimeout(r, 20));
}

describe('request log', () => {
  it('one line per request: id, method, path with query names only, status; never headers or bodies', async () => {
    const { url, lines } = await start('info');
    const res = await fetch(`${url}/echo?code=s3cr3t-code&state=s3cr3t-state`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-secret-key', 'content-type': 'application/json', cookie: 'c=1' },
      body: JSON.stringify({ password: 'hunter2' }),
    });
    await res.text();
    await settled(lines, 1);

    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 30,
      msg: 'request completed',
      req: { id: res.headers.get('x-request-id'), method: 'POST', url: '/echo?code=…&state=…' },
      res: { statusCode: 200 },
      responseTime: expect.any(Number),
    });
    expect(Object.keys(lines[0]!.req as object)).toEqual(['id', 'method', 'url']);
    expect(Object.keys(lines[0]!.res as object)).toEqual(['statusCode']);
    expect(JSON.stringify(lines)).not.toMatch(/s3cr3t|sk-secret|hunter2|authorization|cookie/i);
  });

  it('a 5xx is logged at error, with the status as its error', async () => {
    const { url, lines } = await start('info');
    await (await fetch(`${url}/fail?x=1`)).text();
    await settled(lines, 1);
    expect(lines).toEqual([
      expect.objectContaining({
        level: 50,
        msg: 'request errored',
        req: expect.objectContaining({ method: 'GET', url: '/fail?x=…' }),
        res: { statusCode: 503 },
        err: expect.objectContaining({ type: 'Error', message: 'failed with status code 503' }),
      }),
    ]);
  });

  it('at warn: nothing for a 2xx, and no per-request logger is made; a 5xx is still logged', async () => {
    const { url, lines, logger } = await start('warn');
    const child = vi.spyOn(logger as Logger, 'child');
    await (await fetch(`${url}/echo`, { method: 'POST' })).text();
    await (await fetch(`${url}/fail`)).text();
    await settled(lines, 1);
    expect(lines.map((l) => [l.level, l.msg])).toEqual([[50, 'request errored']]);
    expect(child).not.toHaveBeenCalled();
  });

  it('a request whose client left before the answer is logged too', async () => {
    const { url, lines } = await start('info');
    const controller = new AbortController();
    const pending = fetch(`${url}/hang`, { signal: controller.signal }).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 50));
    controller.abort();
    await pending;
    await settled(lines, 1);
    expect(lines).toEqual([
      expect.objectContaining({
        level: 30,
        msg: 'request aborted',
        req: expect.objectContaining({ url: '/hang' }),
        res: { statusCode: null },
      }),
    ]);
  });
});
