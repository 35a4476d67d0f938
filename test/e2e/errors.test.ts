import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BODY_LIMIT_BYTES } from '../../shared/http/app.ts';
import { type ApiResponse, expectApiError, startTestGateway, type TestGateway } from '../support/gateway.ts';

// The one error envelope (`ApiError`, shared/errors.ts), over real HTTP: every failure is a 4xx with
// {error: {type, code, message, request_id, param?, details?}} and request_id = x-request-id.

let gw: TestGateway;
let studioId: string;
let userToken: string;

beforeAll(async () => {
  gw = await startTestGateway({ store: 'memory', logLevel: 'silent' });
  const created = await gw.api('POST', '/v1/studios/create', {
    token: gw.adminKey,
    body: { name: 'Errors' },
  });
  studioId = created.json.id;
  userToken = (
    await gw.api('POST', '/v1/studios/tokens/apply', { token: gw.adminKey, body: { studio_id: studioId } })
  ).json.user_token;
});
afterAll(async () => {
  await gw?.close();
});

const admin = (method: string, path: string, request: Parameters<TestGateway['api']>[2] = {}) =>
  gw.api(method, path, { token: gw.adminKey, ...request });

describe('invalid JSON → 400 invalid_json', () => {
  it.each([
    ['truncated', '{"name":'],
    ['not JSON at all', 'name=Acme'],
    ['trailing comma', '{"name":"Acme",}'],
    ['single quotes', "{'name':'Acme'}"],
  ])('%s', async (_label, rawBody) => {
    const res = await admin('POST', '/v1/studios/create', { rawBody });
    expectApiError(res, 400, 'invalid_json');
  });

  it('a JSON scalar where an object is expected is a validation error, not a crash', async () => {
    for (const rawBody of ['"Acme"', '42', 'null', '[]']) {
      const res = await admin('POST', '/v1/studios/create', { rawBody });
      expect(res.status, `${rawBody}: ${res.text}`).toBe(400);
      expect(['invalid_json', 'validation_failed']).toContain(res.json.error.code);
      expectApiError(res, 400, res.json.error.code);
    }
  });
});

describe('wrong types → 400 validation_failed with param and details', () => {
  it.each([
    ['POST', '/v1/studios/create', { name: 123 }, 'name'],
    ['POST', '/v1/studios/create', { name: 'ok', studio_id: 'has spaces' }, 'studio_id'],
    ['POST', '/v1/studios/pause', { studio_id: ['x'] }, 'studio_id'],
    ['POST', '/v1/studios/tokens/apply', { studio_id: 'x', expires_in_s: 'soon' }, 'expires_in_s'],
    ['POST', '/v1/studios/tokens/apply', { studio_id: 'x', expires_in_s: -5 }, 'expires_in_s'],
    ['POST', '/v1/env/upsert', { key: 'lower_case', value: 'v' }, 'key'],
    ['POST', '/v1/env/upsert', { key: 'OK', value: 1 }, 'value'],
    ['POST', '/v1/env/upsert', { key: 'OK', value: 'v', secret: 'yes' }, 'secret'],
    ['POST', '/v1/env/import', { content: 5 }, 'content'],
    ['POST', '/v1/studios/create', {}, 'name'],
  ])('%s %s %j → param %s', async (method, path, body, param) => {
    const res = await admin(method, path, { body });
    const error = expectApiError(res, 400, 'validation_failed');
    expect(error.param).toBe(param);
    expect(Array.isArray(error.details)).toBe(true);
    expect(error.details.length).toBeGreaterThan(0);
    expect(error.details).toContainEqual(
      expect.objectContaining({ path: param, code: expect.any(String), message: expect.any(String) }),
    );
  });
});

describe('unknown fields on admin commands → 400', () => {
  it.each([
    ['/v1/studios/create', { name: 'x' }],
    ['/v1/studios/pause', { studio_id: 'x' }],
    ['/v1/studios/activate', { studio_id: 'x' }],
    ['/v1/studios/remove', { studio_id: 'x' }],
    ['/v1/studios/tokens/apply', { studio_id: 'x' }],
    ['/v1/studios/tokens/revoke', { token_id: 'x' }],
    ['/v1/env/upsert', { key: 'X', value: 'v' }],
    ['/v1/env/remove', { key: 'X' }],
    ['/v1/env/import', { content: 'X=1' }],
  ])('POST %s', async (path, body) => {
    const res = await admin('POST', path, { body: { ...body, bogus_field: true } });
    const error = expectApiError(res, 400, 'validation_failed');
    expect(JSON.stringify(error.details)).toContain('bogus_field');
  });

  it.each([
    '/v1/studios/list?bogus=1',
    '/v1/env/list?bogus=1',
    `/v1/studios/tokens/list?studio_id=x&bogus=1`,
    '/v1/audit/events?bogus=1',
  ])('GET %s', async (path) => {
    const error = expectApiError(await admin('GET', path), 400, 'validation_failed');
    expect(JSON.stringify(error.details)).toContain('bogus');
  });
});

describe('body over 1 MiB → 413 payload_too_large', () => {
  const huge = () => `{"name":"${'a'.repeat(BODY_LIMIT_BYTES + 1024)}"}`;

  it('with a Content-Length', async () => {
    expectApiError(await admin('POST', '/v1/studios/create', { rawBody: huge() }), 413, 'payload_too_large');
  });

  it('a guest is refused (401) before the body is read', async () => {
    expectApiError(await gw.api('POST', '/v1/studios/create', { rawBody: huge() }), 401, 'unauthenticated');
  });

  it('chunked, without a Content-Length', async () => {
    const body = Buffer.from(huge());
    const res = await rawRequest('POST', '/v1/studios/create', {
      headers: {
        authorization: `Bearer ${gw.adminKey}`,
        'content-type': 'application/json',
        'transfer-encoding': 'chunked',
      },
      chunks: [body.subarray(0, 512 * 1024), body.subarray(512 * 1024)],
    });
    expectApiError(res, 413, 'payload_too_large');
  });

  it('a body just under the limit is parsed (and then validated)', async () => {
    const rawBody = `{"name":"${'a'.repeat(BODY_LIMIT_BYTES - 100)}"}`;
    const error = expectApiError(
      await admin('POST', '/v1/studios/create', { rawBody }),
      400,
      'validation_failed',
    );
    expect(error.param).toBe('name');
  });
});

describe('unknown service or action → 404 not_found', () => {
  it.each([
    ['GET', '/v1/nope/list', 'admin'],
    ['POST', '/v1/nope/create', 'admin'],
    ['GET', '/v1/studios/nope', 'admin'],
    ['POST', '/v1/studios/tokens/nope', 'admin'],
    ['GET', '/v1/env/list/extra', 'admin'],
    ['GET', '/v1/nope/list', 'user'],
    ['GET', '/v1/nope/list', 'guest'],
    ['GET', '/v2/studios/list', 'admin'],
    ['GET', '/nothing-here', 'guest'],
  ])('%s %s as %s', async (method, path, who) => {
    const token = who === 'admin' ? gw.adminKey : who === 'user' ? userToken : undefined;
    expectApiError(await gw.api(method, path, { token }), 404, 'not_found');
  });
});

describe('wrong method → 405 method_not_allowed with Allow', () => {
  it.each([
    ['GET', '/v1/studios/create', 'POST'],
    ['GET', '/v1/env/upsert', 'POST'],
    ['POST', '/v1/studios/list', 'GET'],
    ['POST', '/v1/audit/events', 'GET'],
    ['PUT', '/v1/studios/create', 'POST'],
    ['DELETE', '/v1/studios/remove', 'POST'],
    ['PATCH', '/v1/env/list', 'GET'],
    ['POST', '/v1/services', 'GET'],
    ['DELETE', '/v1/services', 'GET'],
  ])('%s %s → Allow: %s', async (method, path, allow) => {
    const res = await admin(method, path, method === 'GET' || method === 'DELETE' ? {} : { body: {} });
    expectApiError(res, 405, 'method_not_allowed');
    expect(res.headers.get('allow')).toBe(allow);
  });
});

describe('a body that is not JSON → 400', () => {
  it.each([
    ['text/plain', '{"name":"Acme"}'],
    ['application/x-www-form-urlencoded', 'name=Acme'],
    [
      'multipart/form-data; boundary=x',
      '--x\r\nContent-Disposition: form-data; name="name"\r\n\r\nAcme\r\n--x--\r\n',
    ],
    ['application/xml', '<name>Acme</name>'],
  ])('%s', async (contentType, rawBody) => {
    const res = await admin('POST', '/v1/studios/create', {
      rawBody,
      headers: { 'content-type': contentType },
    });
    expect(res.status, res.text).toBe(400);
    expectApiError(res, 400, res.json.error.code);
    expect(['invalid_json', 'validation_failed']).toContain(res.json.error.code);
    // nothing was created from it
    const studios = (await admin('GET', '/v1/studios/list')).json.items as { name: string }[];
    expect(studios.map((s) => s.name)).not.toContain('Acme');
  });

  it('a body with no Content-Type at all', async () => {
    const res = await admin('POST', '/v1/studios/create', {
      rawBody: new TextEncoder().encode('{"name":"Acme"}'),
    });
    expect(res.status, res.text).toBe(400);
    expectApiError(res, 400, res.json.error.code);
  });
});

describe('requests that cannot be decoded → 400', () => {
  it('a path with broken percent-encoding', async () => {
    expectApiError(await admin('GET', '/v1/%E0%A4%A/x'), 400, 'validation_failed');
  });

  it.each(['gzip', 'deflate', 'br'])(
    'a body that claims Content-Encoding %s but is plain',
    async (encoding) => {
      const res = await admin('POST', '/v1/studios/create', {
        rawBody: '{"name":"Encoded"}',
        headers: { 'content-encoding': encoding },
      });
      expectApiError(res, 400, 'invalid_json');
    },
  );
});

describe('malformed Authorization → 401 unauthenticated', () => {
  it.each([
    ['Basic', 'Basic dXNlcjpwYXNz'],
    ['bare token', 'stk_abc'],
    ['Bearer alone', 'Bearer'],
    ['two credentials', 'Bearer a b'],
    ['unknown admin-looking key', 'Bearer not-the-admin-key-not-the-admin-key'],
    ['unknown user token', `Bearer stk_${'A'.repeat(43)}`],
    ['token with a typo', 'Bearer stk_'],
  ])('%s', async (_label, authorization) => {
    const res = await gw.api('GET', '/v1/services', { headers: { authorization } });
    expectApiError(res, 401, 'unauthenticated');
  });

  it('the admin key with a different case of the scheme still works', async () => {
    expect(
      (await gw.api('GET', '/v1/services', { headers: { authorization: `bearer ${gw.adminKey}` } })).status,
    ).toBe(200);
  });
});

describe('audit query with a bad limit → 400', () => {
  it.each(['limit=0', 'limit=-1', 'limit=abc', 'limit=1.5', 'limit=100000', 'after=-3', 'type=bad type'])(
    '?%s',
    async (query) => {
      const res = await admin('GET', `/v1/audit/events?${encodeURI(query)}`);
      const error = expectApiError(res, 400, 'validation_failed');
      expect(error.param).toBe(query.split('=')[0]);
    },
  );

  it('a repeated parameter is a 400, not a 500', async () => {
    const res = await admin('GET', '/v1/audit/events?limit=1&limit=2');
    expect(res.status, res.text).toBe(400);
    expectApiError(res, 400, res.json.error.code);
  });

  it('a good limit is 200', async () => {
    const res = await admin('GET', '/v1/audit/events?limit=1');
    expect(res.status).toBe(200);
    expect(res.json.items).toHaveLength(1);
  });
});

describe('request ids', () => {
  it('a valid incoming x-request-id is echoed in the header and the error', async () => {
    const res = await gw.api('GET', '/v1/studios/list', { headers: { 'x-request-id': 'client-req-42' } });
    expect(res.headers.get('x-request-id')).toBe('client-req-42');
    expectApiError(res, 401, 'unauthenticated');
  });

  it('an invalid incoming x-request-id is replaced', async () => {
    const res = await gw.api('GET', '/v1/nope/x', { headers: { 'x-request-id': 'bad id with spaces' } });
    expect(res.headers.get('x-request-id')).not.toBe('bad id with spaces');
    expectApiError(res, 404, 'not_found');
  });

  it('successes carry one too, each different', async () => {
    const a = await gw.api('GET', '/health');
    const b = await gw.api('GET', '/health');
    expect(a.status).toBe(200);
    expect(a.headers.get('x-request-id')).not.toBe(b.headers.get('x-request-id'));
  });
});

describe('never a 500', () => {
  it('no response of this file was a 5xx', () => {
    expect(gw.responses.length).toBeGreaterThan(80);
    expect(gw.responses.filter((r) => r.status >= 500)).toEqual([]);
  });
});

/** A request written by hand (node:http), for bodies fetch will not send, e.g. chunked ones. */
function rawRequest(
  method: string,
  path: string,
  options: { headers: Record<string, string>; chunks: Buffer[] },
): Promise<ApiResponse> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${gw.url}${path}`, { method, headers: options.headers }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (chunk: Buffer) => parts.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(parts).toString('utf8');
        const headers = new Headers();
        for (const [name, value] of Object.entries(res.headers)) {
          if (typeof value === 'string') headers.set(name, value);
        }
        gw.responses.push({ method, path, status: res.statusCode ?? 0, text });
        resolve({ status: res.statusCode ?? 0, headers, json: JSON.parse(text), text });
      });
      res.on('error', reject);
    });
    // The server may answer (and close) before it has read everything: that is fine.
    req.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE' && error.code !== 'ECONNRESET') reject(error);
    });
    for (const chunk of options.chunks) req.write(chunk);
    req.end();
  });
}
