import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeApiDocuments } from '../../bin/openapi.ts';
import { openApiPath } from '../../shared/http/openapi.ts';
import { expectApiError } from '../support/gateway.ts';
import { startTestStack, type TestStack } from '../support/runtime.ts';

// The API's documents against the servers that serve them: every action and route is described,
// with who may call it and what it answers, and what the gateway answers is what its document says.

interface Operation {
  operationId: string;
  parameters?: Record<string, unknown>[];
  security: Record<string, string[]>[];
  responses: Record<string, { content?: Record<string, { schema?: Record<string, unknown> }> }>;
  'x-identities'?: string[];
  'x-error-codes': string[];
}
interface Document {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
}

const RUNTIME_TOKEN = 'rt_'.padEnd(40, 'x');
let stack: TestStack;
let gatewayDoc: Document;
let runtimeDoc: Document;
let userToken: string;

beforeAll(async () => {
  stack = await startTestStack({ config: { STUDIO_RUNTIME_TOKEN: RUNTIME_TOKEN } });
  userToken = stack.token;
  const gateway = await stack.gw.api('GET', '/v1/openapi.json');
  expect(gateway.status).toBe(200);
  gatewayDoc = gateway.json;
  const runtime = await stack.call('GET', '/api/openapi.json');
  expect(runtime.status).toBe(200);
  runtimeDoc = runtime.json as Document;
});
afterAll(() => stack?.close());

const operationAt = (doc: Document, method: string, path: string) =>
  doc.paths[openApiPath(path)]?.[method.toLowerCase()];

async function expectValidOpenApi31(doc: Document) {
  const validator = new Validator();
  const result = await validator.validate(structuredClone(doc) as unknown as Record<string, unknown>);
  expect(result.errors, JSON.stringify(result.errors)?.slice(0, 2000)).toBeUndefined();
  expect(result.valid).toBe(true);
  expect(validator.version).toBe('3.1');
}

describe('the gateway document', () => {
  it('is valid OpenAPI 3.1', async () => {
    await expectValidOpenApi31(gatewayDoc);
  });

  it('describes every registered action, with who may call it and the codes that follow from that', () => {
    const actions = stack.gw.running.registry.services().flatMap((s) => s.actions);
    expect(actions.length).toBeGreaterThan(40);
    for (const action of actions) {
      const where = `${action.method} /v1/${action.service}/${action.action}`;
      const op = operationAt(gatewayDoc, action.method, `/v1/${action.service}/${action.action}`);
      expect(op, where).toBeDefined();
      const identities = action.identities ?? ['user'];
      const who = identities.length === 0 ? ['guest', 'user', 'admin'] : [...identities];
      expect(op!['x-identities'], where).toEqual(who);
      // Guests need no credential; everyone else a bearer (or the dialect's own header).
      expect(
        op!.security.some((requirement) => Object.keys(requirement).length === 0),
        where,
      ).toBe(who.includes('guest'));
      expect(op!.security, where).toContainEqual({ bearer: [] });
      if (action.dialect?.credentialHeader)
        expect(op!.security, where).toContainEqual({ [action.dialect.credentialHeader]: [] });
      // Every /v1 request is authenticated first and refused while the read models are stale.
      for (const code of ['unauthenticated', 'studio_paused', 'unavailable'])
        expect(op!['x-error-codes'], where).toContain(code);
      expect(Object.keys(op!.responses), where).toEqual(expect.arrayContaining(['401', '403', '503']));
      if (!who.includes('user') || !who.includes('admin'))
        expect(op!['x-error-codes'], where).toContain('forbidden');
      if (action.method === 'POST')
        for (const code of [
          'invalid_json',
          'validation_failed',
          'payload_too_large',
          'unsupported_media_type',
        ])
          expect(op!['x-error-codes'], where).toContain(code);
      if (action.params) expect(op!.responses['404'], where).toBeDefined();
      const errorSchema = op!.responses['401']!.content!['application/json']!.schema;
      expect(errorSchema, where).toEqual({
        $ref: action.dialect ? '#/components/schemas/AnthropicError' : '#/components/schemas/Error',
      });
    }
  });

  it('describes the routes beside the registry, the Anthropic dialect routes and the reference itself', () => {
    for (const [method, path] of [
      ['GET', '/health'],
      ['GET', '/ready'],
      ['GET', '/v1/services'],
      ['GET', '/v1/openapi.json'],
      ['GET', '/docs'],
      ['POST', '/v1/ai/anthropic/v1/messages'],
      ['POST', '/v1/ai/anthropic/v1/messages/count_tokens'],
    ] as const)
      expect(operationAt(gatewayDoc, method, path), `${method} ${path}`).toBeDefined();
    // outside /v1 no credential is read; /v1/services needs one
    for (const path of ['/health', '/ready', '/docs'])
      expect(operationAt(gatewayDoc, 'GET', path)?.security).toEqual([]);
    expect(operationAt(gatewayDoc, 'GET', '/v1/services')?.security).toEqual([{ bearer: [] }]);
    expect(operationAt(gatewayDoc, 'GET', '/v1/openapi.json')?.security).toEqual([{}, { bearer: [] }]);
    // exactly what the gateway serves: its actions and its own routes (the console's session among them)
    const own = [
      'get /health',
      'get /ready',
      'get /v1/services',
      'get /v1/openapi.json',
      'get /docs',
      'get /metrics',
      'post /console/session',
      'get /console/session',
      'post /console/session/sign-out',
      'post /v1/mcp',
      'get /v1/mcp',
      'delete /v1/mcp',
      'get /.well-known/oauth-protected-resource',
      'get /.well-known/oauth-protected-resource/v1/mcp',
      'get /v1/alerts',
    ];
    const actions = stack.gw.running.registry
      .services()
      .flatMap((s) =>
        s.actions.map((a) => `${a.method.toLowerCase()} ${openApiPath(`/v1/${s.id}/${a.action}`)}`),
      );
    const described = Object.entries(gatewayDoc.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((method) => `${method} ${path}`),
    );
    expect(described.sort()).toEqual([...own, ...actions].sort());
    // a `:param` of an action's name is a path parameter
    expect(operationAt(gatewayDoc, 'GET', '/v1/ai/responses/:id')?.parameters).toContainEqual(
      expect.objectContaining({ name: 'id', in: 'path', required: true }),
    );
  });

  it('tells the truth: what a guest, a user and the admin are answered is among the documented statuses', async () => {
    const calls: Promise<void>[] = [];
    const wrong: string[] = [];
    for (const [path, ops] of Object.entries(gatewayDoc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const concrete = path.replace(/\{[^}]+\}/g, 'no-such-id');
        const who = op['x-identities'];
        const callers = [
          { name: 'guest', token: undefined as string | undefined },
          // the identities an action refuses are told so before anything else happens
          ...(who && !who.includes('admin') ? [{ name: 'admin', token: stack.gw.adminKey }] : []),
          ...(who && !who.includes('user') ? [{ name: 'user', token: userToken }] : []),
        ];
        for (const caller of callers) {
          calls.push(
            (async () => {
              const res = await stack.gw.api(method.toUpperCase(), concrete, {
                token: caller.token,
                ...(method === 'post' ? { body: {} } : {}),
              });
              const refused = caller.name === 'guest' ? (who?.includes('guest') ? undefined : 401) : 403;
              if (!(String(res.status) in op.responses) || (refused !== undefined && res.status !== refused))
                wrong.push(
                  `${caller.name}: ${method.toUpperCase()} ${path} → ${res.status} ${res.text.slice(0, 120)}`,
                );
            })(),
          );
        }
      }
    }
    await Promise.all(calls);
    expect(calls.length).toBeGreaterThan(60);
    expect(wrong).toEqual([]);
  });

  it('is readable by guests; a credential the gateway refuses is still a 401', async () => {
    expect((await stack.gw.api('GET', '/v1/openapi.json')).status).toBe(200);
    expectApiError(
      await stack.gw.api('GET', '/v1/openapi.json', { token: 'stk_nope' }),
      401,
      'unauthenticated',
    );
    expectApiError(await stack.gw.api('POST', '/v1/openapi.json', { body: {} }), 405, 'method_not_allowed');
  });

  it('turns into TypeScript with openapi-typescript', async () => {
    const source = astToString(await openapiTS(structuredClone(gatewayDoc) as never));
    expect(source).toContain('"/v1/studios/create"');
    expect(source).toContain('AnthropicError');
  });
});

describe('the runtime document', () => {
  it('is valid OpenAPI 3.1', async () => {
    await expectValidOpenApi31(runtimeDoc);
  });

  it('describes every route the runtime serves, session routes included, behind its token where they are', () => {
    const { routes } = stack.runtime;
    expect(routes.some((r) => r.path.startsWith('/api/sdk/'))).toBe(true);
    for (const route of routes) {
      const where = `${route.method} ${route.path}`;
      const op = operationAt(runtimeDoc, route.method, route.path);
      expect(op, where).toBeDefined();
      expect(op!['x-identities'], where).toBeUndefined();
      const open = !route.path.startsWith('/api/') || route.path === '/api/openapi.json';
      expect(op!.security, where).toEqual(open ? [] : [{ bearer: [] }]);
      // A route that checks its own credential (GET /metrics) says so in its errors.
      const ownCheck = route.errors?.includes('unauthenticated') ?? false;
      expect(op!['x-error-codes'].includes('unauthenticated'), where).toBe(!open || ownCheck);
      for (const code of ['host_not_allowed', 'origin_not_allowed'])
        expect(op!['x-error-codes'], where).toContain(code);
      if (route.params) expect(op!.responses['404'], where).toBeDefined();
    }
    const described = Object.values(runtimeDoc.paths).flatMap((ops) => Object.keys(ops)).length;
    expect(described).toBe(routes.length);
  });

  it('describes the session routes’ answers with their shapes', () => {
    const session = operationAt(runtimeDoc, 'GET', '/api/sdk/sessions/:id')!.responses['200']!;
    expect(session.content!['application/json']!.schema).toMatchObject({
      type: 'object',
      required: expect.arrayContaining(['id', 'title', 'model', 'status', 'revision']),
    });
    const created = operationAt(runtimeDoc, 'POST', '/api/sdk/sessions')!.responses['201']!;
    expect(created.content!['application/json']!.schema).toEqual(
      session.content!['application/json']!.schema,
    );
    const events = operationAt(runtimeDoc, 'GET', '/api/sdk/sessions/:id/events')!.responses['200']!;
    expect(Object.keys(events.content!)).toEqual(['text/event-stream']);
  });

  it('is readable without the runtime token, which every other /api route needs', async () => {
    expect((await stack.call('GET', '/api/openapi.json')).status).toBe(200);
    expectApiError(await stack.call('GET', '/api/status'), 401, 'unauthenticated');
    const status = await stack.call('GET', '/api/status', undefined, {
      authorization: `Bearer ${RUNTIME_TOKEN}`,
    });
    expect(status.status).toBe(200);
  });
});

describe('GET /docs', () => {
  const servers = () =>
    [
      { name: 'gateway', get: (path: string) => stack.gw.api('GET', path), document: '/v1/openapi.json' },
      { name: 'runtime', get: (path: string) => stack.call('GET', path), document: '/api/openapi.json' },
    ] as const;

  it('serves a page and its assets from this origin only, under a strict CSP', async () => {
    for (const server of servers()) {
      const page = await server.get('/docs');
      expect(page.status, server.name).toBe(200);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      const csp = page.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toMatch(/https?:|unsafe-eval/);
      expect(page.text).not.toMatch(/https?:\/\//);
      expect(page.text).not.toMatch(/<script>[^<]/); // no inline script: the CSP would refuse it
      // the icon is empty and inline (no request for /favicon.ico)
      const assets = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)]
        .map(([, url]) => url!)
        .filter((url) => url !== 'data:,');
      expect(assets.length).toBe(3);
      for (const asset of assets) {
        expect(asset).toMatch(/^\/docs\/assets\/[\w.-]+$/);
        const res = await server.get(asset);
        expect(res.status, asset).toBe(200);
        expect(res.headers.get('content-type')).toMatch(/^(application\/javascript|text\/css)/);
        expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      }
      const init = await server.get('/docs/assets/docs.js');
      expect(init.text).toContain(JSON.stringify(server.document));
      expect(init.text).not.toMatch(/https?:\/\//);
      expectApiError(await server.get('/docs/assets/index.html'), 404, 'not_found');
      expectApiError(await server.get('/docs/assets/..%2Fpackage.json'), 404, 'not_found');
    }
  });
});

describe('npm run openapi (bin/openapi.ts)', () => {
  it('writes the documents the servers serve, without a server', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'studio-openapi-test-'));
    try {
      const written = await writeApiDocuments(dir);
      expect(written.map((path) => path.slice(dir.length + 1)).sort()).toEqual([
        'gateway.openapi.json',
        'runtime.openapi.json',
      ]);
      const read = async (name: string) => JSON.parse(await readFile(join(dir, name), 'utf8')) as Document;
      expect(await read('gateway.openapi.json')).toEqual(gatewayDoc);
      // The served runtime has a token, so its routes' security differs; the routes are the same.
      const runtime = await read('runtime.openapi.json');
      const operations = (doc: Document) =>
        Object.entries(doc.paths).flatMap(([path, ops]) =>
          Object.keys(ops).map((method) => `${method} ${path}`),
        );
      expect(operations(runtime).sort()).toEqual(operations(runtimeDoc).sort());
      await expectValidOpenApi31(runtime);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
