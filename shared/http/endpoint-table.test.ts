import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createLogger } from '../logger.ts';
import { defineEndpoint, noInput } from './action.ts';
import { endExpressApp, expressApp } from './app.ts';
import { EndpointTable } from './endpoint-table.ts';
import { frontDoor } from './front-door.ts';

const endpoint = (method: 'GET' | 'POST', path: string) =>
  defineEndpoint({
    method,
    path,
    identities: [],
    input: noInput,
    ...(path.includes(':id') ? { params: z.strictObject({ id: z.string() }) } : {}),
    handler: (_input, ctx) => ({ path, params: ctx.params ?? {} }),
  });

const table = new EndpointTable().add([
  endpoint('GET', '/api/sdk/sessions'),
  endpoint('POST', '/api/sdk/sessions'),
  endpoint('GET', '/api/sdk/sessions/:id'),
  endpoint('GET', '/api/sdk/sessions/:id/events'),
  endpoint('GET', '/api/sdk/sessions/latest'),
]);

let server: Server;
let url: string;
beforeAll(async () => {
  const logger = createLogger('silent');
  const rest = expressApp();
  endExpressApp(rest, logger);
  const listener = frontDoor({ logger, endpoints: (req, res, path) => table.serve(req, res, path), rest });
  server = await new Promise<Server>((resolve) => {
    const s = createServer(listener).listen(0, '127.0.0.1', () => resolve(s));
  });
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});

const ask = async (method: string, path: string) => {
  const res = await fetch(`${url}${path}`, { method });
  return {
    status: res.status,
    allow: res.headers.get('allow'),
    body: method === 'HEAD' ? null : await res.json(),
  };
};

describe('the endpoint table', () => {
  it('finds an endpoint by its path, in any case, with a trailing slash, under GET and HEAD', async () => {
    expect((await ask('GET', '/api/sdk/sessions')).body).toEqual({ path: '/api/sdk/sessions', params: {} });
    expect((await ask('GET', '/API/SDK/Sessions/')).body).toEqual({ path: '/api/sdk/sessions', params: {} });
    expect((await ask('HEAD', '/api/sdk/sessions')).status).toBe(200);
    expect((await ask('POST', '/api/sdk/sessions')).status).toBe(200);
  });

  it('a `:name` segment takes one segment, percent-decoded; an exact path wins over the pattern', async () => {
    expect((await ask('GET', '/api/sdk/sessions/s%201/events')).body).toEqual({
      path: '/api/sdk/sessions/:id/events',
      params: { id: 's 1' },
    });
    expect((await ask('GET', '/api/sdk/sessions/latest')).body).toEqual({
      path: '/api/sdk/sessions/latest',
      params: {},
    });
    expect((await ask('GET', '/api/sdk/sessions/%E0%A4%A')).status).toBe(400);
  });

  it('a path served under another method is a 405 naming the ones it takes; any other path goes on', async () => {
    expect(await ask('POST', '/api/sdk/sessions/s1')).toMatchObject({ status: 405, allow: 'GET' });
    expect(await ask('DELETE', '/api/sdk/sessions')).toMatchObject({ status: 405, allow: 'GET, POST' });
    expect(await ask('GET', '/api/sdk/sessions/a/b/c')).toMatchObject({
      status: 404,
      body: { error: { code: 'not_found' } },
    });
  });
});
