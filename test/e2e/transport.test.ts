import { connect } from 'node:net';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectApiError } from '../support/gateway.ts';
import { startTestStack, type TestStack } from '../support/runtime.ts';

// What reaches a server below express (the HTTP parser) or beside JSON (compressed bodies) gets the
// same envelope as everything else, on the gateway, the runtime and the session API alike.

let stack: TestStack;
let sessionId: string;

beforeAll(async () => {
  stack = await startTestStack();
  sessionId = ((await stack.call('POST', '/api/sdk/sessions', {})).json as { id: string }).id;
});
afterAll(async () => {
  await stack?.close();
});

/** Sends bytes as they are and reads the whole answer (the server closes the connection). */
function rawExchange(url: string, bytes: string | Buffer): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(bytes));
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      answer += chunk;
    });
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
    socket.setTimeout(5_000, () => reject(new Error(`no answer; got ${JSON.stringify(answer)}`)));
  });
}

function parseRaw(answer: string) {
  const [head = '', body = ''] = answer.split('\r\n\r\n');
  const [statusLine = '', ...headerLines] = head.split('\r\n');
  const headers = Object.fromEntries(
    headerLines.map((line) => [
      line.slice(0, line.indexOf(':')).toLowerCase(),
      line.slice(line.indexOf(':') + 1).trim(),
    ]),
  );
  return { status: Number(statusLine.split(' ')[1]), headers, json: JSON.parse(body) };
}

const servers = () => [
  ['gateway', stack.gw.url],
  ['runtime', stack.runtime.url],
];

describe('requests the HTTP parser refuses are answered in the envelope, with a request id', () => {
  it.each(['gateway', 'runtime'])('%s: headers larger than the limit → 431', async (which) => {
    const url = servers().find(([name]) => name === which)![1]!;
    const answer = parseRaw(
      await rawExchange(
        url,
        `GET /health HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
      ),
    );
    expect(answer.status).toBe(431);
    expect(answer.json.error.code).toBe('headers_too_large');
    expect(answer.json.error.request_id).toBe(answer.headers['x-request-id']);
    expect(answer.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it.each(['gateway', 'runtime'])('%s: an over-long URL → 431', async (which) => {
    const url = servers().find(([name]) => name === which)![1]!;
    const answer = parseRaw(
      await rawExchange(url, `GET /v1/${'x'.repeat(20_000)} HTTP/1.1\r\nHost: localhost\r\n\r\n`),
    );
    expect(answer.status).toBe(431);
    expect(answer.json.error.type).toBe('invalid_request_error');
  });

  it.each(['gateway', 'runtime'])('%s: a malformed request line → 400', async (which) => {
    const url = servers().find(([name]) => name === which)![1]!;
    for (const line of [
      'GARBAGE\r\n\r\n',
      'GET / HTTP/9.9 extra\r\n\r\n',
      'GET /\x00 HTTP/1.1\r\nHost: x\r\n\r\n',
    ]) {
      const answer = parseRaw(await rawExchange(url, line));
      expect(answer.status, line).toBe(400);
      expect(answer.json.error.code).toBe('malformed_request');
      expect(answer.json.error.request_id).toBe(answer.headers['x-request-id']);
    }
  });
});

describe('compressed bodies: gzip, deflate and br are decoded with the limit applied to the decoded bytes', () => {
  const post = (url: string, body: Buffer, encoding: string, auth?: string) =>
    fetch(url, {
      method: 'POST',
      body,
      headers: {
        'content-type': 'application/json',
        'content-encoding': encoding,
        ...(auth ? { authorization: `Bearer ${auth}` } : {}),
      },
      signal: AbortSignal.timeout(5_000),
    });
  const encoders = { gzip: gzipSync, deflate: deflateSync, br: brotliCompressSync };

  it.each(Object.keys(encoders))(
    '%s is read on the gateway, the runtime and the session API',
    async (name) => {
      const encode = encoders[name as keyof typeof encoders];
      const created = await post(
        `${stack.gw.url}/v1/studios/create`,
        encode(JSON.stringify({ name: `Encoded ${name}` })),
        name,
        stack.gw.adminKey,
      );
      expect(created.status).toBe(201);
      const session = await post(`${stack.runtime.url}/api/sdk/sessions`, encode('{"title":"zipped"}'), name);
      expect(session.status).toBe(201);
      expect(((await session.json()) as { title: string }).title).toBe('zipped');
      const prompt = await post(
        `${stack.runtime.url}/api/sdk/sessions/${sessionId}/prompt`,
        encode(JSON.stringify({ text: 'hello' })),
        name,
      );
      expect(prompt.status).toBe(200);
    },
  );

  it('a small bomb is refused with 413 at once on every server', async () => {
    const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024, 32));
    expect(bomb.length).toBeLessThan(100_000);
    for (const url of [
      `${stack.gw.url}/v1/studios/create`,
      `${stack.runtime.url}/api/execute`,
      `${stack.runtime.url}/api/sdk/sessions`,
      `${stack.runtime.url}/api/sdk/sessions/${sessionId}/prompt`,
    ]) {
      const res = await post(url, bomb, 'gzip', stack.gw.adminKey);
      expect(res.status, url).toBe(413);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('payload_too_large');
    }
  });

  it.each(['zstd', 'compress', 'gzip, br', 'x-unknown'])(
    'Content-Encoding %s is 415 on every server, before the body is read',
    async (encoding) => {
      for (const url of [
        `${stack.gw.url}/v1/studios/create`,
        `${stack.gw.url}/v1/nothing-here`,
        `${stack.runtime.url}/api/execute`,
        `${stack.runtime.url}/api/sdk/sessions`,
        `${stack.runtime.url}/api/sdk/sessions/${sessionId}/prompt`,
      ]) {
        const res = await post(url, Buffer.from('{}'), encoding, stack.gw.adminKey);
        const body = (await res.json()) as { error: { code: string; request_id: string } };
        expect(res.status, url).toBe(415);
        expect(body.error.code).toBe('unsupported_media_type');
        expect(body.error.request_id).toBe(res.headers.get('x-request-id'));
      }
    },
  );
});

it('the gateway and runtime still answer after all of the above', async () => {
  expect((await fetch(`${stack.gw.url}/health`)).status).toBe(200);
  expect((await fetch(`${stack.runtime.url}/health`)).status).toBe(200);
  const res = await stack.call('POST', '/api/sdk/sessions', { title: 'after' });
  expect(res.status).toBe(201);
  expectApiError(await stack.call('GET', '/api/sdk/sessions/nope'), 404, 'not_found');
});
