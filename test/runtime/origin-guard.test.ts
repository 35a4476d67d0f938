import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../support/runtime.ts';

// A web page the user visits must not reach the loopback runtime: not by DNS rebinding (a foreign
// Host), not by a cross-origin request, unless its origin is listed.

let stack: TestStack;
const LISTED = 'http://console.example:3000';

beforeAll(async () => {
  stack = await startTestStack({ config: { STUDIO_ALLOWED_ORIGINS: LISTED } });
  await stack.call('POST', '/api/files/write', { path: 'notes.txt', content: 'private' });
});
afterAll(async () => {
  await stack?.close();
});

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  json: { error?: { code: string; request_id: string } } & Record<string, unknown>;
}

function send(
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<Answer> {
  const { hostname, port } = new URL(stack.runtime.url);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: hostname,
        port,
        method,
        path,
        headers: { ...(payload ? { 'content-type': 'application/json' } : {}), ...headers },
      },
      (res) => {
        let text = '';
        res.on('data', (chunk) => {
          text += chunk;
        });
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, json: text ? JSON.parse(text) : {} }),
        );
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

describe('Host', () => {
  it.each([
    'evil.example',
    'evil.example:8601',
    '192.0.2.10:8601',
    'localhost.evil.example',
    '127.0.0.1.nip.io',
  ])('a foreign Host (%s, DNS rebinding) is refused on every route', async (host) => {
    for (const [method, path] of [
      ['POST', '/api/files/read'],
      ['GET', '/api/sdk/sessions'],
      ['GET', '/api/status'],
      ['GET', '/health'],
    ] as const) {
      const res = await send(method, path, { host }, method === 'POST' ? { path: 'notes.txt' } : undefined);
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.json.error?.code).toBe('host_not_allowed');
    }
  });

  it.each(['127.0.0.1', 'localhost', 'LOCALHOST:8601', '[::1]:8601', '127.0.0.2'])(
    'loopback Host %s is served',
    async (host) => {
      const res = await send('POST', '/api/files/read', { host }, { path: 'notes.txt' });
      expect(res.status).toBe(200);
      expect(res.json.content).toBe('private');
    },
  );
});

describe('Origin', () => {
  it('a cross-origin POST from an unlisted page is refused before it runs', async () => {
    const res = await send(
      'POST',
      '/api/files/write',
      { host: 'localhost:8601', origin: 'https://evil.example' },
      { path: 'planted.txt', content: 'x' },
    );
    expect(res.status).toBe(403);
    expect(res.json.error?.code).toBe('origin_not_allowed');
    const read = await stack.call('POST', '/api/files/read', { path: 'planted.txt' });
    expect(read.status).toBe(404);
  });

  it('the "null" origin (sandboxed frames, files) is refused', async () => {
    const res = await send('GET', '/api/sdk/sessions', { host: 'localhost', origin: 'null' });
    expect(res.status).toBe(403);
  });

  it('a cross-site no-cors request (an <img> or <script> tag) is refused', async () => {
    const res = await send('GET', '/api/sdk/sessions', {
      host: 'localhost',
      'sec-fetch-site': 'cross-site',
      'sec-fetch-mode': 'no-cors',
    });
    expect(res.status).toBe(403);
    expect(res.json.error?.code).toBe('origin_not_allowed');
  });

  it('a listed origin gets CORS: preflight answered, the request served with its headers', async () => {
    const preflight = await send('OPTIONS', '/api/files/read', {
      host: 'localhost',
      origin: LISTED,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'content-type',
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe(LISTED);
    expect(String(preflight.headers['access-control-allow-methods'])).toContain('POST');
    const res = await send(
      'POST',
      '/api/files/read',
      { host: 'localhost', origin: LISTED },
      { path: 'notes.txt' },
    );
    expect(res.status).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe(LISTED);
  });

  it('a preflight from an unlisted origin gets no CORS grant', async () => {
    const res = await send('OPTIONS', '/api/files/read', {
      host: 'localhost',
      origin: 'https://evil.example',
      'access-control-request-method': 'POST',
    });
    expect(res.status).toBe(403);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('a page served by the runtime itself (same origin) and clients without Origin are served', async () => {
    const { port } = new URL(stack.runtime.url);
    const same = await send('GET', '/api/sdk/sessions', {
      host: `127.0.0.1:${port}`,
      origin: `http://127.0.0.1:${port}`,
    });
    expect(same.status).toBe(200);
    const plain = await send('GET', '/api/sdk/sessions', { host: `127.0.0.1:${port}` });
    expect(plain.status).toBe(200);
  });
});
