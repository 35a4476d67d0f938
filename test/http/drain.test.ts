import type { Server } from 'node:http';
import { Agent } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { defineEndpoint, noInput } from '../../shared/http/action.ts';
import { endExpressApp, expressApp } from '../../shared/http/app.ts';
import { Drain, finishDraining } from '../../shared/http/drain.ts';
import { EndpointTable } from '../../shared/http/endpoint-table.ts';
import { frontDoor } from '../../shared/http/front-door.ts';
import { sendJson } from '../../shared/http/request.ts';
import { listen } from '../../shared/http/server.ts';
import { openSse } from '../../shared/http/sse.ts';
import { createLogger } from '../../shared/logger.ts';
import { waitUntil } from '../../shared/testing/wait.ts';
import { nodeGet } from '../support/node-get.ts';

function gate() {
  let open = () => {};
  const wait = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { wait, open };
}

let server: Server | undefined;
afterEach(() => {
  server?.closeAllConnections();
  server?.close();
  server = undefined;
});

/** An app with a drain: a quick route, a stream held until `streamEnd`, an answer whose handler goes on until `afterAnswer`. */
async function start() {
  const logger = createLogger('silent');
  const drain = new Drain();
  const app = expressApp();
  const streamEnd = gate();
  const afterAnswer = gate();
  const done: string[] = [];
  const endpoints = new EndpointTable().add(
    [
      defineEndpoint({ method: 'GET', path: '/quick', input: noInput, handler: () => ({ ok: true }) }),
      defineEndpoint({ method: 'GET', path: '/health', input: noInput, handler: () => ({ status: 'ok' }) }),
      defineEndpoint({
        method: 'GET',
        path: '/stream',
        input: noInput,
        handler: async (_input, { res }) => {
          openSse(res);
          res.write('data: first\n\n');
          await streamEnd.wait;
          res.end('data: last\n\n');
          return undefined;
        },
      }),
      defineEndpoint({
        method: 'GET',
        path: '/record-after',
        input: noInput,
        handler: async (_input, { res }) => {
          sendJson(res, 200, { ok: true });
          await afterAnswer.wait;
          done.push('recorded');
          return undefined;
        },
      }),
    ],
    { identities: [] },
  );
  endExpressApp(app, logger);
  const listening = await listen(
    frontDoor({ logger, drain, endpoints: (req, res, path) => endpoints.serve(req, res, path), rest: app }),
    '127.0.0.1',
    0,
    logger,
  );
  server = listening.server;
  return { drain, server: listening.server, url: listening.url, streamEnd, afterAnswer, done };
}

const get = nodeGet;

describe('Drain', () => {
  it('refuses a new request on a kept-alive connection with 503 unavailable, Connection: close and Retry-After; probes still answer', async () => {
    const { drain, server, url, streamEnd } = await start();
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const probes = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      expect((await get(`${url}/quick`, agent)).status).toBe(200);
      expect((await get(`${url}/quick`, probes)).status).toBe(200);
      // Something in flight, or the drain would be over at once.
      const streamed = get(`${url}/stream`, false);
      await waitUntil(() => drain.inFlight === 1, 'one request is in flight');
      const outcome = finishDraining(server, drain, AbortSignal.timeout(30_000), {
        stop: async () => ({ durable: true }),
      });

      const refused = await get(`${url}/quick`, agent);
      expect(refused.reusedSocket).toBe(true);
      expect(refused.status).toBe(503);
      expect(refused.headers.connection).toBe('close');
      expect(refused.headers['retry-after']).toBe('1');
      expect(JSON.parse(refused.body)).toMatchObject({ error: { code: 'unavailable' } });

      const health = await get(`${url}/health`, probes);
      expect(health.reusedSocket).toBe(true);
      expect(health.status).toBe(200);
      expect(health.headers.connection).toBe('close');
      streamEnd.open();
      await streamed;
      expect(await outcome).toEqual({ finished: true, durable: true });
    } finally {
      agent.destroy();
      probes.destroy();
    }
  });

  it('only announced, it still serves (and says it drains)', async () => {
    const { drain, url } = await start();
    drain.announce();
    expect(drain.draining).toBe(true);
    expect((await get(`${url}/quick`, false)).status).toBe(200);
  });

  it('tells long-lived answers to go when the drain begins, or at once after', () => {
    const drain = new Drain();
    const told: string[] = [];
    drain.onBegin(() => told.push('a'));
    const forget = drain.onBegin(() => told.push('b'));
    forget();
    drain.begin();
    expect(told).toEqual(['a']);
    drain.onBegin(() => told.push('late'));
    expect(told).toEqual(['a', 'late']);
  });
});

describe('finishDraining', () => {
  it('lets a stream in flight end whole, refuses new connections, and waits for handlers that outlive their answer', async () => {
    const { drain, server, url, streamEnd, afterAnswer, done } = await start();
    const streamed = get(`${url}/stream`, false);
    const answered = await get(`${url}/record-after`, false);
    expect(answered.status).toBe(200);
    await waitUntil(() => drain.inFlight === 2, 'two requests are in flight');

    let stopped = false;
    const outcome = finishDraining(server, drain, AbortSignal.timeout(30_000), {
      stop: async () => {
        stopped = true;
        return { durable: done.includes('recorded') };
      },
    });
    await expect(get(`${url}/quick`, false)).rejects.toMatchObject({ code: 'ECONNREFUSED' });

    streamEnd.open();
    expect((await streamed).body).toBe('data: first\n\ndata: last\n\n');
    await new Promise((r) => setTimeout(r, 50));
    expect(stopped).toBe(false); // the other handler has not returned yet
    afterAnswer.open();
    expect(await outcome).toEqual({ finished: true, durable: true });
  });

  it('at the deadline cuts what is left, runs `cut`, then stops', async () => {
    const { drain, server, url, streamEnd } = await start();
    const streamed = get(`${url}/stream`, false).catch((error: NodeJS.ErrnoException) => error.code);
    await waitUntil(() => drain.inFlight === 1, 'one request is in flight');
    let cut = false;
    const outcome = await finishDraining(server, drain, AbortSignal.timeout(200), {
      settled: (deadline) =>
        new Promise((resolve) => deadline.addEventListener('abort', () => resolve(false))),
      cut: () => {
        cut = true;
        streamEnd.open(); // its handler returns once cut: no need to wait for the grace
      },
      stop: async () => ({ durable: true }),
    });
    expect(outcome).toEqual({ finished: false, durable: true });
    expect(cut).toBe(true);
    expect(await streamed).toBe('ECONNRESET');
  });
});
