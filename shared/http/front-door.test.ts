import { createServer, IncomingMessage, type Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createLogger } from '../logger.ts';
import { defineAction, defineEndpoint, defineService, noInput } from './action.ts';
import { createHttpApp } from './app.ts';
import { Authenticator } from './identity.ts';
import { ActionRegistry } from './registry.ts';

/** Whether a request and its response are Node's own objects, as made, or were given other prototypes. */
const prototypesOf = (req: object, res: object) => ({
  req: Object.getPrototypeOf(req) === IncomingMessage.prototype,
  res: Object.getPrototypeOf(res) === ServerResponse.prototype,
});

const service = defineService({
  id: 'probe',
  name: 'Probe',
  env: [],
  actions: [
    defineAction({
      service: 'probe',
      action: 'broken-dialect',
      method: 'POST',
      identities: [],
      // A dialect whose error shape cannot be made: answering any refusal fails.
      dialect: {
        name: 'broken',
        errorBody: () => {
          throw new Error('no error shape');
        },
      },
      input: z.object({ text: z.string() }),
      handler: ({ text }) => ({ text }),
    }),
    defineAction({
      service: 'probe',
      action: 'spoken',
      method: 'POST',
      identities: ['user'],
      dialect: {
        name: 'probe',
        errorBody: (error, requestId) => ({ probe: { code: error.code, requestId } }),
      },
      input: z.object({ text: z.string() }),
      handler: ({ text }) => ({ text }),
    }),
    defineAction({
      service: 'probe',
      action: 'prototypes',
      method: 'POST',
      identities: [],
      input: z.object({ text: z.string() }),
      handler: ({ text }, { req, res }) => ({ text, nodes: prototypesOf(req, res) }),
    }),
  ],
});

let server: Server;
let url: string;
beforeAll(async () => {
  const listener = createHttpApp({
    registry: new ActionRegistry().register(service),
    authenticator: new Authenticator('test-admin-key-0123456789-0123456789', { findByHash: () => undefined }),
    logger: createLogger('silent'),
    health: async () => ({ status: 'ok' }),
    routes: [
      defineEndpoint({
        method: 'GET',
        path: '/outside',
        identities: [],
        input: noInput,
        handler: (_input, { req, res }) => ({ nodes: prototypesOf(req, res) }),
      }),
    ],
  });
  server = await new Promise<Server>((resolve) => {
    const s = createServer(listener).listen(0, '127.0.0.1', () => resolve(s));
  });
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('the front door', () => {
  it("serves the API's actions on Node's own request and response: express never touches them", async () => {
    const res = await fetch(`${url}/v1/probe/prototypes`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': 'req-front-1' },
      body: JSON.stringify({ text: 'hi' }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.headers.get('x-request-id')).toBe('req-front-1');
    expect(await res.json()).toEqual({ text: 'hi', nodes: { req: true, res: true } });
  });

  it('serves endpoints at paths of their own the same way, however the path is spelled', async () => {
    for (const path of ['/outside', '/OUTSIDE', '/outside/']) {
      const res = await fetch(`${url}${path}`, { headers: { 'x-request-id': 'req-front-2' } });
      expect(res.headers.get('x-request-id'), path).toBe('req-front-2');
      expect(await res.json(), path).toEqual({ nodes: { req: true, res: true } });
    }
    const posted = await fetch(`${url}/outside`, { method: 'POST' });
    expect(posted.status).toBe(405);
    expect(posted.headers.get('allow')).toBe('GET');
  });

  it("hands what is nobody's to express (files, then the 404), behind the same first steps", async () => {
    const res = await fetch(`${url}/nowhere`, { headers: { 'x-request-id': 'req-front-3' } });
    expect(res.status).toBe(404);
    expect(res.headers.get('x-request-id')).toBe('req-front-3');
    expect((await res.json()) as unknown).toMatchObject({ error: { code: 'not_found' } });
  });

  it('cuts the connection when even an error cannot be answered, and goes on serving', async () => {
    const broken = fetch(`${url}/v1/probe/broken-dialect`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{',
    });
    await expect(broken).rejects.toThrow();
    const next = await fetch(`${url}/v1/probe/prototypes`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'still here' }),
    });
    expect(await next.json()).toMatchObject({ text: 'still here' });
  });

  it('answers in the dialect of the action a path names, however the path is spelled', async () => {
    // express's rules, kept by the front door: `/v1` in any case, each segment percent-decoded.
    for (const path of ['/v1/probe/spoken', '/V1/probe/spoken', '/v1/probe/%73poken']) {
      const res = await fetch(`${url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ text: 'hi' }),
      });
      expect(res.status, path).toBe(401);
      expect(await res.json(), path).toEqual({
        probe: { code: 'unauthenticated', requestId: res.headers.get('x-request-id') },
      });
    }
    const badEscape = await fetch(`${url}/v1/probe/%E0spoken`, { method: 'POST' });
    expect(badEscape.status).toBe(400);
    expect(await badEscape.json()).toMatchObject({ error: { code: 'validation_failed' } });
  });

  it('answers errors of both in the one envelope', async () => {
    const bad = await fetch(`${url}/v1/probe/prototypes`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"text":',
    });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { code: 'invalid_json' } });
    const missing = await fetch(`${url}/nowhere`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({
      error: {
        code: 'not_found',
        message: 'no route GET /nowhere',
        request_id: missing.headers.get('x-request-id'),
      },
    });
  });
});
