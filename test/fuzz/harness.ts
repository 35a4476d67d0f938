import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { expect } from 'vitest';
import { asAdmin } from '../support/admin.ts';
import { freshPostgresDatabase } from '../support/postgres.ts';
import { startTestStack, type TestStack } from '../support/runtime.ts';
import { contentEncoding, contentType, id, jsonValue, text } from './arbitraries.ts';
import { fromSchema } from './from-schema.ts';
import { type FuzzRoute, gatewayRoutes, runtimeRoutes } from './routes.ts';

/** How long any answer may take. */
export const ANSWER_WITHIN_MS = 10_000;
const SECRET_ENV_VALUE = `sk-fuzz-${'s3cr3t'.repeat(4)}`;
const FIXTURE_FILE = 'fixture/notes.txt';
const FIXTURE_CONTENT = 'made before the run';

type Caller = 'admin' | 'user' | 'guest' | 'bogus';

export interface FuzzRequest {
  route: FuzzRoute;
  caller: Caller;
  pathId: string;
  input: unknown;
  extraQuery: [string, string][];
  contentType: string;
  encoding: string | undefined;
}

export interface Fixtures {
  studioId: string;
  userToken: string;
  sessionId: string;
  /** What the fixtures looked like before the run. */
  before: Snapshot;
}

interface Snapshot {
  studio: unknown;
  envKeys: unknown;
  session: unknown;
  firstMessages: unknown;
  file: unknown;
}

/**
 * A gateway on SQLite (the embedded default), or on PostgreSQL with `FUZZ_STORE=postgres` (a fresh
 * database, dropped on close), and a runtime beside it.
 */
export async function startFuzzTarget(): Promise<{
  stack: TestStack;
  fixtures: Fixtures;
  routes: FuzzRoute[];
}> {
  const database = process.env.FUZZ_STORE === 'postgres' ? await freshPostgresDatabase() : undefined;
  const started = await startTestStack({
    gateway: database
      ? { store: 'postgres', databaseUrl: database.url, logLevel: 'trace' }
      : { store: 'sqlite', logLevel: 'trace' },
    runtimeLogLevel: 'trace',
  });
  const stack: TestStack = {
    ...started,
    close: async () => {
      await started.close();
      await database?.drop();
    },
  };
  const studio = await asAdmin(stack.gw, 'POST', '/v1/studios/create', {
    name: 'Fixture',
    studio_id: 'fixture',
  });
  expect(studio.status).toBe(201);
  const token = await asAdmin(stack.gw, 'POST', '/v1/studios/tokens/apply', {
    studio_id: 'fixture',
    name: 'fixture',
  });
  expect(
    (
      await asAdmin(stack.gw, 'POST', '/v1/env/upsert', {
        key: 'FUZZ_SECRET',
        value: SECRET_ENV_VALUE,
        secret: true,
      })
    ).status,
  ).toBe(200);
  const session = await stack.call('POST', '/api/sdk/sessions', { title: 'fixture' });
  const sessionId = (session.json as { id: string }).id;
  expect((await stack.call('POST', `/api/sdk/sessions/${sessionId}/prompt`, { text: 'first' })).status).toBe(
    200,
  );
  expect(
    (await stack.call('POST', '/api/files/write', { path: FIXTURE_FILE, content: FIXTURE_CONTENT })).status,
  ).toBe(200);
  const fixtures = { studioId: 'fixture', userToken: token.json.user_token as string, sessionId };
  return {
    stack,
    fixtures: { ...fixtures, before: await snapshot(stack, fixtures) },
    routes: [...gatewayRoutes(stack.gw.running.registry), ...runtimeRoutes(stack.runtime.routes)],
  };
}

async function snapshot(
  stack: TestStack,
  f: { studioId: string; userToken: string; sessionId: string },
): Promise<Snapshot> {
  const studios = (await asAdmin(stack.gw, 'GET', '/v1/studios/list')).json.items as { id: string }[];
  const env = (await asAdmin(stack.gw, 'GET', '/v1/env/list')).json.items as {
    key: string;
    value: string;
    secret: boolean;
  }[];
  const messages = (await stack.call('GET', `/api/sdk/sessions/${f.sessionId}/messages`)).json as {
    items: unknown[];
  };
  const session = (await stack.call('GET', `/api/sdk/sessions/${f.sessionId}`)).json as Record<
    string,
    unknown
  >;
  return {
    studio: studios.find((s) => s.id === f.studioId),
    envKeys: env.filter((e) => e.key === 'FUZZ_SECRET'),
    session: { id: session.id, title: session.title, created_at: session.created_at },
    firstMessages: messages.items.slice(0, 2),
    file: (await stack.call('POST', '/api/files/read', { path: FIXTURE_FILE })).json,
  };
}

const KNOWN_PLUGINS = ['files', 'chat', 'mcp'];

/** One request to any route: a path id, inputs shaped like the route's and hostile ones, any caller, odd headers. */
export function fuzzRequest(routes: readonly FuzzRoute[], fixtures: Fixtures): fc.Arbitrary<FuzzRequest> {
  const known = [fixtures.studioId, fixtures.sessionId, ...KNOWN_PLUGINS];
  return fc.constantFrom(...routes).chain((route) => {
    const ids = route.destructive ? [] : known;
    return fc.record({
      route: fc.constant(route),
      caller: fc.constantFrom<Caller>('admin', 'user', 'user', 'guest', 'bogus'),
      pathId: id(ids),
      input: fc.oneof(
        { weight: 8, arbitrary: fromSchema(route.input, ids) },
        { weight: 1, arbitrary: jsonValue },
      ),
      extraQuery: fc.array(fc.tuple(text, text), { maxLength: 2 }),
      contentType,
      encoding: contentEncoding,
    });
  });
}

/** Percent-encodes any string, lone surrogates included (as the bytes a careless client would send). */
function encodeAny(value: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    return [...value]
      .map((ch) => {
        const code = ch.codePointAt(0)!;
        if (code >= 0xd800 && code <= 0xdfff) {
          return [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)]
            .map((b) => `%${b.toString(16).toUpperCase()}`)
            .join('');
        }
        return encodeURIComponent(ch);
      })
      .join('');
  }
}

function queryOf(request: FuzzRequest): string {
  const pairs: [string, string][] = [...request.extraQuery];
  if (
    request.route.method !== 'POST' &&
    typeof request.input === 'object' &&
    request.input !== null &&
    !Array.isArray(request.input)
  ) {
    for (const [key, value] of Object.entries(request.input)) {
      pairs.push([key, typeof value === 'string' ? value : (JSON.stringify(value) ?? '')]);
    }
  }
  return pairs.length === 0 ? '' : `?${pairs.map(([k, v]) => `${encodeAny(k)}=${encodeAny(v)}`).join('&')}`;
}

function bodyOf(request: FuzzRequest): Uint8Array | undefined {
  if (request.route.method !== 'POST') return undefined;
  const json = Buffer.from(JSON.stringify(request.input) ?? 'null');
  switch (request.encoding) {
    case 'gzip':
      return gzipSync(json);
    case 'deflate':
      return deflateSync(json);
    case 'br':
      return brotliCompressSync(json);
    default:
      return json;
  }
}

export interface Exchange {
  status: number;
  requestId: string | null;
  text: string;
  ms: number;
  describe: string;
  /** The route answers with an HTML page rather than JSON. */
  page: boolean;
  /** The route answers errors in this dialect's shape. */
  dialect: string | undefined;
}

export async function send(stack: TestStack, fixtures: Fixtures, request: FuzzRequest): Promise<Exchange> {
  const base = request.route.server === 'gateway' ? stack.gw.url : stack.runtime.url;
  const path = request.route.path.replace(':id', encodeAny(request.pathId));
  const url = `${base}${path}${queryOf(request)}`;
  const headers: Record<string, string> = {};
  if (request.caller === 'admin') headers.authorization = `Bearer ${stack.gw.adminKey}`;
  if (request.caller === 'user') headers.authorization = `Bearer ${fixtures.userToken}`;
  if (request.caller === 'bogus') headers.authorization = 'Bearer stk_not-a-token';
  const body = bodyOf(request);
  if (body) headers['content-type'] = request.contentType;
  if (body && request.encoding) headers['content-encoding'] = request.encoding;
  const started = Date.now();
  const describe = `${request.route.method} ${url.slice(0, 300)} as ${request.caller}`;
  const res = await fetch(url, {
    method: request.route.method,
    headers,
    body,
    signal: AbortSignal.timeout(ANSWER_WITHIN_MS),
  });
  // A stream that was accepted stays open: its status and headers are the answer.
  const streaming = (res.headers.get('content-type') ?? '').startsWith('text/event-stream');
  const text = streaming ? '' : await res.text();
  if (streaming) await res.body?.cancel();
  return {
    status: res.status,
    requestId: res.headers.get('x-request-id'),
    text,
    ms: Date.now() - started,
    describe,
    page: request.route.page === true && (res.headers.get('content-type') ?? '').startsWith('text/html'),
    dialect: request.route.dialect,
  };
}

/** Secrets that no answer (beyond the one that issued them) and no log line may hold. */
export function secretsOf(stack: TestStack, fixtures: Fixtures): string[] {
  return [stack.gw.adminKey, fixtures.userToken, SECRET_ENV_VALUE];
}

/** The invariants every answer keeps. */
export function checkExchange(exchange: Exchange, secrets: readonly string[]): void {
  const what = `${exchange.describe} → ${exchange.status} ${exchange.text.slice(0, 300)}`;
  expect(exchange.status, what).toBeLessThan(500);
  expect(exchange.requestId, what).toBeTruthy();
  // Headers too large are refused by Node's parser, below any route: in the one envelope.
  if (exchange.status >= 400 && exchange.dialect === 'anthropic' && exchange.status !== 431) {
    expect(JSON.parse(exchange.text), what).toMatchObject({
      type: 'error',
      error: {
        type: expect.any(String),
        message: expect.any(String),
        details: { error_code: expect.any(String) },
      },
      request_id: exchange.requestId,
    });
  } else if (exchange.status >= 400 && !exchange.page) {
    const body = JSON.parse(exchange.text) as { error?: Record<string, unknown> };
    expect(body.error, what).toMatchObject({
      type: expect.any(String),
      code: expect.any(String),
      message: expect.any(String),
      request_id: exchange.requestId,
    });
  }
  for (const secret of secrets) expect(exchange.text.includes(secret), `${what} echoes a secret`).toBe(false);
}

/** After the run: both servers healthy, the fixtures as they were, no prototype touched, no secret logged. */
export async function checkAfterRun(stack: TestStack, fixtures: Fixtures): Promise<void> {
  expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(PROTOTYPE_PROPERTIES);
  expect((await fetch(`${stack.gw.url}/health`)).status).toBe(200);
  expect((await fetch(`${stack.runtime.url}/health`)).status).toBe(200);
  expect(await snapshot(stack, fixtures)).toEqual(fixtures.before);
  const created = await stack.gw.api('POST', '/v1/studios/create', {
    token: stack.gw.adminKey,
    body: { name: 'After' },
  });
  expect(created.status).toBe(201);
  const chat = await stack.gw.api('POST', '/v1/ai/chat/completions', {
    token: fixtures.userToken,
    body: { model: 'dev/echo', messages: [{ role: 'user', content: 'still here' }] },
  });
  expect(chat.status).toBe(200);
  expect((await stack.call('POST', '/api/sdk/sessions', { title: 'after' })).status).toBe(201);
  const logs = [...stack.gw.logs, ...stack.runtimeLogs].join('\n');
  for (const secret of secretsOf(stack, fixtures))
    expect(logs.includes(secret), 'a log line holds a secret').toBe(false);
}

export const PROTOTYPE_PROPERTIES = Object.getOwnPropertyNames(Object.prototype).sort();
