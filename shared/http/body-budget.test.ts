import { type ClientRequest, createServer, type IncomingMessage, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createLogger } from '../logger.ts';
import { defineAction, defineService } from './action.ts';
import { createHttpApp } from './app.ts';
import { Authenticator } from './identity.ts';
import { ActionRegistry } from './registry.ts';

const MiB = 1024 * 1024;
const bodies = defineService({
  id: 'bodies',
  name: 'Large bodies',
  env: [],
  actions: [
    defineAction({
      service: 'bodies',
      action: 'large',
      method: 'POST',
      identities: [],
      bodyLimitBytes: 34 * MiB,
      input: z.object({ text: z.string() }),
      handler: ({ text }) => ({ length: text.length }),
    }),
  ],
});

let server: Server;
let port: number;
beforeAll(async () => {
  const app = createHttpApp({
    registry: new ActionRegistry().register(bodies),
    authenticator: new Authenticator('test-admin-key-0123456789-0123456789', { findByHash: () => undefined }),
    logger: createLogger('silent'),
    health: async () => ({ status: 'ok' }),
    largeBodiesBudgetBytes: 5 * MiB,
  });
  server = await new Promise<Server>((resolve) => {
    const s = createServer(app).listen(0, '127.0.0.1', () => resolve(s));
  });
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** A JSON body of exactly `bytes` bytes. */
const jsonOf = (bytes: number) => `{"text":"${'x'.repeat(bytes - 11)}"}`;

interface Pending {
  req: ClientRequest;
  response: Promise<{ res: IncomingMessage; body: string }>;
  answered: boolean;
}

/** A POST whose headers (declaring `bytes`) go out at once; its body is written by the caller, or never. */
function startPost(bytes: number): Pending {
  const req = request({
    host: '127.0.0.1',
    port,
    method: 'POST',
    path: '/v1/bodies/large',
    headers: { 'content-type': 'application/json', 'content-length': String(bytes) },
  });
  req.on('error', () => undefined); // a refused request's socket is closed under it
  req.flushHeaders();
  const pending: Pending = {
    req,
    answered: false,
    response: new Promise((resolve) => {
      req.on('response', (res) => {
        pending.answered = true;
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          body += chunk;
        });
        // A refused request's socket closes with its body unsent: `close` comes, maybe without `end`.
        res.on('close', () => resolve({ res, body }));
      });
    }),
  };
  return pending;
}

/** A POST of unknown length (chunked); resolves with the response. */
function chunkedPost(body?: string): { req: ClientRequest; response: Promise<IncomingMessage> } {
  const req = request({
    host: '127.0.0.1',
    port,
    method: 'POST',
    path: '/v1/bodies/large',
    headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
  });
  req.on('error', () => undefined);
  if (body === undefined) req.flushHeaders();
  else req.end(body);
  return { req, response: new Promise((resolve) => req.on('response', resolve)) };
}

const within = <T>(ms: number, promise: Promise<T>, what = 'an answer') =>
  Promise.race([
    promise,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no ${what} within ${ms} ms`)), ms)),
  ]);

describe('large request bodies share one budget', () => {
  it('beyond the budget a request is a 503 overloaded with Retry-After at once, before its body is sent; the others are served', async () => {
    // A budget of 5 MiB holds two bodies of 2 MiB: of three, one is refused.
    const posts = [startPost(2 * MiB), startPost(2 * MiB), startPost(2 * MiB)];
    const first = await within(
      5_000,
      Promise.race(posts.map((p) => p.response.then((answer) => ({ ...answer, p })))),
    );
    expect(first.res.statusCode).toBe(503);
    expect(first.res.headers['retry-after']).toMatch(/^\d+$/);
    expect(first.res.headers.connection).toBe('close');
    expect(JSON.parse(first.body).error.code).toBe('overloaded');

    const held = posts.filter((p) => p !== first.p);
    expect(held.map((p) => p.answered)).toEqual([false, false]);
    // A small body on the same route does not count.
    const small = startPost(100);
    small.req.end(jsonOf(100));
    expect((await within(5_000, small.response, 'small')).res.statusCode).toBe(200);

    for (const p of held) p.req.end(jsonOf(2 * MiB));
    for (const p of held) {
      const { res, body } = await within(10_000, p.response, 'held');
      expect(res.statusCode).toBe(200);
      expect(JSON.parse(body)).toEqual({ length: 2 * MiB - 11 });
    }

    // Their room is given back once they are answered.
    const later = startPost(4 * MiB);
    later.req.end(jsonOf(4 * MiB));
    expect((await within(10_000, later.response)).res.statusCode).toBe(200);
  });

  it('a body of unknown length (chunked) counts as the route’s whole limit (at most the whole budget)', async () => {
    const held = startPost(2 * MiB);
    await new Promise((resolve) => setTimeout(resolve, 100)); // its room is taken
    const answer = await within(5_000, chunkedPost().response);
    expect(answer.statusCode).toBe(503);
    answer.resume();
    held.req.end(jsonOf(2 * MiB));
    expect((await within(10_000, held.response, 'held')).res.statusCode).toBe(200);

    const served = await within(5_000, chunkedPost(jsonOf(1000)).response);
    expect(served.statusCode).toBe(200);
    served.resume();
  });
});
