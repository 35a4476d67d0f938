import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { newUserToken, sha256Hex } from '../../shared/crypto.ts';
import { defineAction, defineService } from '../../shared/http/action.ts';
import { createHttpApp } from '../../shared/http/app.ts';
import { Authenticator, type TokenLookup } from '../../shared/http/identity.ts';
import { ActionRegistry } from '../../shared/http/registry.ts';
import { createLogger } from '../../shared/logger.ts';
import type { ApiResponse } from '../support/gateway.ts';
import { expectApiError } from '../support/gateway.ts';

// When a request carries a studio_id, it must be the studio bound to the token; otherwise 403
// `studio_mismatch`. No user route of the gateway takes a studio_id yet, so this drives
// shared/http/app.ts directly with a tiny test service, over real HTTP.

const ADMIN_KEY = 'test-admin-key-0123456789-0123456789';
const tokenA = newUserToken();
const tokenB = newUserToken();
const tokens: Record<string, { tokenId: string; studioId: string }> = {
  [sha256Hex(tokenA)]: { tokenId: 'tok_a', studioId: 'studio-a' },
  [sha256Hex(tokenB)]: { tokenId: 'tok_b', studioId: 'studio-b' },
};
const lookup: TokenLookup = {
  findByHash(hash) {
    const token = tokens[hash];
    return token && { ...token, revoked: false, expiresAt: null, studioStatus: 'active', models: null };
  },
};

const calls: { studio_id?: string; actor: string }[] = [];
const probe = defineService({
  id: 'probe',
  name: 'Probe',
  env: [],
  actions: [
    defineAction({
      service: 'probe',
      action: 'echo',
      method: 'POST',
      identities: ['user'],
      input: z.object({ studio_id: z.string().optional(), text: z.string().optional() }),
      handler: (input, ctx) => {
        calls.push({ studio_id: input.studio_id, actor: ctx.metadata.actor });
        return { ok: true, studio_id: input.studio_id ?? null };
      },
    }),
    defineAction({
      service: 'probe',
      action: 'read',
      method: 'GET',
      identities: ['user', 'admin'],
      input: z.object({ studio_id: z.string().optional() }),
      handler: (input) => ({ ok: true, studio_id: input.studio_id ?? null }),
    }),
  ],
});

let server: Server;
let url: string;

beforeAll(async () => {
  const app = createHttpApp({
    registry: new ActionRegistry().register(probe),
    authenticator: new Authenticator(ADMIN_KEY, lookup),
    logger: createLogger('silent'),
    health: async () => ({ status: 'ok' }),
  });
  server = await new Promise<Server>((resolve) => {
    const s = createServer(app).listen(0, '127.0.0.1', () => resolve(s));
  });
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => {
    server?.close(() => resolve());
    server?.closeIdleConnections();
  });
});

async function call(method: string, path: string, token: string, body?: unknown): Promise<ApiResponse> {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  expect(res.headers.get('x-request-id')).toBeTruthy();
  return { status: res.status, headers: res.headers, json: JSON.parse(text), text };
}

describe('studio_id in a user request body', () => {
  it('matching the token’s studio → 200', async () => {
    const res = await call('POST', '/v1/probe/echo', tokenA, { studio_id: 'studio-a', text: 'hi' });
    expect(res.status, res.text).toBe(200);
    expect(res.json).toEqual({ ok: true, studio_id: 'studio-a' });
  });

  it('absent → 200', async () => {
    const res = await call('POST', '/v1/probe/echo', tokenA, { text: 'hi' });
    expect(res.status, res.text).toBe(200);
    expect(res.json).toEqual({ ok: true, studio_id: null });
  });

  it('another studio → 403 studio_mismatch, and the handler never runs', async () => {
    const before = calls.length;
    const res = await call('POST', '/v1/probe/echo', tokenA, { studio_id: 'studio-b', text: 'hi' });
    const error = expectApiError(res, 403, 'studio_mismatch');
    expect(error.param).toBe('studio_id');
    expect(calls.length).toBe(before);
  });

  it('the other studio’s token is bound to its own studio', async () => {
    expect((await call('POST', '/v1/probe/echo', tokenB, { studio_id: 'studio-b' })).status).toBe(200);
    expectApiError(
      await call('POST', '/v1/probe/echo', tokenB, { studio_id: 'studio-a' }),
      403,
      'studio_mismatch',
    );
  });

  it('an empty studio_id is a mismatch too', async () => {
    expectApiError(await call('POST', '/v1/probe/echo', tokenA, { studio_id: '' }), 403, 'studio_mismatch');
  });

  it('the handler saw the token as the actor', () => {
    expect(calls).toContainEqual({ studio_id: 'studio-a', actor: 'token:tok_a' });
    expect(calls).toContainEqual({ studio_id: undefined, actor: 'token:tok_a' });
  });
});

describe('studio_id in a user query string', () => {
  it('matching → 200, absent → 200, another → 403 studio_mismatch', async () => {
    expect((await call('GET', '/v1/probe/read?studio_id=studio-a', tokenA)).json).toEqual({
      ok: true,
      studio_id: 'studio-a',
    });
    expect((await call('GET', '/v1/probe/read', tokenA)).status).toBe(200);
    expectApiError(await call('GET', '/v1/probe/read?studio_id=studio-b', tokenA), 403, 'studio_mismatch');
  });

  it('the admin is bound to no studio', async () => {
    const res = await call('GET', '/v1/probe/read?studio_id=studio-b', ADMIN_KEY);
    expect(res.status, res.text).toBe(200);
  });
});
