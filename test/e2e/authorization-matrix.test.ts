import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../shared/crypto.ts';
import { type GithubMock, startGithubMock } from '../accounts/support/github-mock.ts';
import { expectAnthropicError } from '../support/anthropic-errors.ts';
import { type ApiResponse, expectApiError, startTestGateway, type TestGateway } from '../support/gateway.ts';

// Every route of the gateway × every identity (guest, user, admin; shared/http/identity.ts), over real HTTP.

type Who = 'guest' | 'user' | 'other' | 'paused' | 'revoked' | 'admin';
const WHO: readonly Who[] = ['guest', 'user', 'other', 'paused', 'revoked', 'admin'];
const DESCRIBE: Record<Who, string> = {
  guest: 'guest (no Authorization)',
  user: 'user of studio A',
  other: 'user of another studio (B)',
  paused: 'user of a paused studio (C)',
  revoked: 'revoked token of studio A',
  admin: 'admin',
};

// The expected status of every cell. Errors carry these codes (shared/errors.ts):
// 401 → unauthenticated; 403 → studio_paused for the paused studio's token, else forbidden.
type Row = readonly [
  route: string,
  guest: number,
  user: number,
  other: number,
  paused: number,
  revoked: number,
  admin: number,
];
// biome-ignore format: a table reads best aligned
const MATRIX: readonly Row[] = [
  // route                             guest  user  other  paused  revoked  admin
  ['GET /v1/studios/list',             401,   403,  403,   403,    401,     200],
  ['POST /v1/studios/create',          401,   403,  403,   403,    401,     201],
  ['POST /v1/studios/pause',           401,   403,  403,   403,    401,     200],
  ['POST /v1/studios/activate',        401,   403,  403,   403,    401,     200],
  ['POST /v1/studios/remove',          401,   403,  403,   403,    401,     200],
  ['POST /v1/studios/settings',        401,   403,  403,   403,    401,     200],
  ['POST /v1/studios/tokens/apply',    401,   403,  403,   403,    401,     201],
  // the tokens of studio A: its own user lists them, another studio's token names a studio not its own
  ['GET /v1/studios/tokens/list',      401,   200,  403,   403,    401,     200],
  ['POST /v1/studios/tokens/revoke',   401,   403,  403,   403,    401,     200],
  ['POST /v1/studios/budgets/set',     401,   403,  403,   403,    401,     200],
  ['GET /v1/studios/budgets/list',     401,   403,  403,   403,    401,     200],
  ['POST /v1/studios/budgets/remove',  401,   403,  403,   403,    401,     200],
  ['POST /v1/studios/limits/set',      401,   403,  403,   403,    401,     200],
  ['GET /v1/studios/limits/list',      401,   403,  403,   403,    401,     200],
  ['POST /v1/studios/limits/remove',   401,   403,  403,   403,    401,     200],
  // what studio A's request log keeps: its own user may read it, only the admin sets or erases
  ['GET /v1/studios/capture',          401,   200,  403,   403,    401,     200],
  ['POST /v1/studios/capture/set',     401,   403,  403,   403,    401,     200],
  ['POST /v1/studios/erase-payloads',  401,   403,  403,   403,    401,     200],
  ['GET /v1/env/list',                 401,   403,  403,   403,    401,     200],
  ['POST /v1/env/upsert',              401,   403,  403,   403,    401,     200],
  ['POST /v1/env/remove',              401,   403,  403,   403,    401,     200],
  ['POST /v1/env/import',              401,   403,  403,   403,    401,     200],
  ['GET /v1/services',                 401,   200,  200,   403,    401,     200],
  ['GET /v1/audit/events',             401,   403,  403,   403,    401,     200],
  ['GET /v1/audit/verify',             401,   403,  403,   403,    401,     200],
  // a live tail (SSE) of studio A's usage: the admin may follow any stream, a user its studio's usage only
  ['GET /v1/audit/events/follow',      401,   200,  403,   403,    401,     200],
  ['GET /health',                      200,   200,  200,   200,    200,     200],
  ['GET /ready',                       200,   200,  200,   200,    200,     200],
  // the API's description and its reference page: for anyone (a credential, if sent, is still checked on /v1)
  ['GET /v1/openapi.json',             200,   200,  200,   403,    401,     200],
  ['GET /docs',                        200,   200,  200,   200,    200,     200],
  ['GET /v1/ai/models',                401,   200,  200,   403,    401,     200],
  ['GET /v1/ai/models/*id',            401,   200,  200,   403,    401,     200],
  ['GET /v1/ai/anthropic/v1/models',   401,   200,  200,   403,    401,     200],
  ['POST /v1/ai/completions',          401,   200,  200,   403,    401,     403],
  ['POST /v1/ai/images/generations',   401,   200,  200,   403,    401,     403],
  ['POST /v1/ai/audio/speech',         401,   200,  200,   403,    401,     403],
  ['POST /v1/ai/audio/transcriptions', 401,   200,  200,   403,    401,     403],
  ['POST /v1/ai/text',                 401,   200,  200,   403,    401,     403],
  ['POST /v1/ai/stream',               401,   200,  200,   403,    401,     403],
  ['POST /v1/ai/chat/completions',     401,   200,  200,   403,    401,     403],
  // Anthropic's Messages API: its errors in Anthropic's shape (ANTHROPIC_SHAPED)
  ['POST /v1/ai/anthropic/v1/messages', 401,  200,  200,   403,    401,     403],
  ['POST /v1/ai/anthropic/v1/messages/count_tokens', 401, 200, 200, 403, 401,  403],
  ['POST /v1/ai/responses',            401,   200,  200,   403,    401,     403],
  // a response of studio A: another studio's token is told it does not exist
  ['GET /v1/ai/responses/:id',         401,   200,  404,   403,    401,     200],
  ['POST /v1/ai/image',                401,   200,  200,   403,    401,     403],
  ['POST /v1/ai/tts',                  401,   200,  200,   403,    401,     403],
  ['POST /v1/ai/asr',                  401,   200,  200,   403,    401,     403],
  ['POST /v1/ai/embeddings',           401,   200,  200,   403,    401,     403],
  ['POST /v1/ai/video',                401,   202,  202,   403,    401,     403],
  // a job of studio A: another studio's token is told it does not exist
  ['GET /v1/ai/jobs/get',              401,   200,  404,   403,    401,     200],
  ['GET /v1/ai/jobs/content',          401,   200,  404,   403,    401,     200],
  // usage of studio A: another studio's token names a studio that is not its own
  ['GET /v1/ai/usage',                 401,   200,  403,   403,    401,     200],
  ['GET /v1/ai/prices',                401,   200,  200,   403,    401,     200],
  ['POST /v1/ai/prices/upsert',        401,   403,  403,   403,    401,     200],
  ['POST /v1/ai/prices/remove',        401,   403,  403,   403,    401,     200],
  ['POST /v1/ai/routes/upsert',        401,   403,  403,   403,    401,     200],
  ['GET /v1/ai/routes/list',           401,   403,  403,   403,    401,     200],
  ['POST /v1/ai/routes/remove',        401,   403,  403,   403,    401,     200],
  ['POST /v1/ai/providers/upsert',     401,   403,  403,   403,    401,     200],
  ['GET /v1/ai/providers/list',        401,   403,  403,   403,    401,     200],
  ['POST /v1/ai/providers/remove',     401,   403,  403,   403,    401,     200],
  // the request log of studio A: another studio's token names a studio not its own, or is told A's request does not exist
  ['GET /v1/ai/requests',              401,   200,  403,   403,    401,     200],
  ['GET /v1/ai/requests/summary',      401,   200,  403,   403,    401,     200],
  ['GET /v1/ai/requests/:id',          401,   200,  404,   403,    401,     200],
  ['POST /v1/accounts/create',         401,   403,  403,   403,    401,     201],
  ['GET /v1/accounts/list',            401,   403,  403,   403,    401,     200],
  ['POST /v1/accounts/remove',         401,   403,  403,   403,    401,     200],
  // guests may sign in; a token in the header must still name the studio signed in to (A: "other" may not)
  ['POST /v1/accounts/login',          200,   200,  403,   403,    401,     200],
  ['POST /v1/accounts/oauth/start',    200,   200,  403,   403,    401,     200],
  ['GET /v1/accounts/oauth/result',    200,   200,  200,   403,    401,     200],
  // which OAuth providers a sign-in page may offer: for anyone, a token in the header still checked
  ['GET /v1/accounts/oauth/providers', 200,   200,  200,   403,    401,     200],
  // the provider's redirect back (a flow of studio A, through a GitHub stand-in); answers an HTML page
  ['GET /v1/accounts/oauth/callback',  200,   200,  200,   403,    401,     200],
  // the MCP gateway: its servers are the admin's; /v1/mcp is for user tokens (initialize opens a session,
  // GET is a session's stream: without one it is a 400), its resource metadata for anyone
  ['GET /v1/mcp/servers/list',         401,   403,  403,   403,    401,     200],
  ['POST /v1/mcp/servers/upsert',      401,   403,  403,   403,    401,     200],
  ['POST /v1/mcp/servers/remove',      401,   403,  403,   403,    401,     200],
  ['POST /v1/mcp',                     401,   200,  200,   403,    401,     403],
  ['GET /v1/mcp',                      401,   400,  400,   403,    401,     403],
  ['GET /.well-known/oauth-protected-resource', 200, 200, 200, 200,  200,     200],
  ['GET /.well-known/oauth-protected-resource/v1/mcp', 200, 200, 200, 200, 200, 200],
  // alerts: the webhooks, error-rate settings and deliveries are the admin's; a user reads its studio's alerts
  ['POST /v1/alerts/webhooks/upsert',  401,   403,  403,   403,    401,     200],
  ['GET /v1/alerts/webhooks/list',     401,   403,  403,   403,    401,     200],
  ['POST /v1/alerts/webhooks/remove',  401,   403,  403,   403,    401,     200],
  ['POST /v1/alerts/error-rate/set',   401,   403,  403,   403,    401,     200],
  ['GET /v1/alerts/deliveries',        401,   403,  403,   403,    401,     200],
  ['GET /v1/alerts',                   401,   200,  403,   403,    401,     200],
];

/** Cells whose error is not the default of their status. */
const CODES: Record<string, Partial<Record<Who, string>>> = {
  'GET /v1/ai/usage': { other: 'studio_mismatch' },
  'GET /v1/ai/requests': { other: 'studio_mismatch' },
  'GET /v1/ai/requests/summary': { other: 'studio_mismatch' },
  'GET /v1/alerts': { other: 'studio_mismatch' },
  'GET /v1/studios/capture': { other: 'studio_mismatch' },
  'GET /v1/studios/tokens/list': { other: 'studio_mismatch' },
  'POST /v1/accounts/login': { other: 'studio_mismatch' },
  'POST /v1/accounts/oauth/start': { other: 'studio_mismatch' },
  'GET /v1/mcp': { user: 'validation_failed', other: 'validation_failed' },
};

/** Routes whose success is a stream that stays open: judged by status and headers, then closed. */
const STREAMS: ReadonlySet<string> = new Set(['GET /v1/audit/events/follow']);

/** A request whose answer may be an endless stream: the body is read only when it is not one. */
async function openOrCall(fx: Fixture, path: string, token: string | undefined): Promise<ApiResponse> {
  const res = await fetch(`${fx.gw.url}${path}`, {
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
  });
  expect(res.headers.get('x-request-id')).toBeTruthy();
  if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    await res.body?.cancel();
    return { status: res.status, headers: res.headers, json: undefined, text: '' };
  }
  const text = await res.text();
  return { status: res.status, headers: res.headers, json: JSON.parse(text), text };
}

/** Routes that answer errors in Anthropic's shape rather than the one envelope. */
const ANTHROPIC_SHAPED: ReadonlySet<string> = new Set([
  'GET /v1/ai/anthropic/v1/models',
  'POST /v1/ai/anthropic/v1/messages',
  'POST /v1/ai/anthropic/v1/messages/count_tokens',
]);

interface Fixture {
  gw: TestGateway;
  /** Admin call that must succeed. */
  admin(method: string, path: string, body?: unknown): Promise<ApiResponse>;
  studio: Record<'A' | 'B' | 'C', string>;
  credential: Record<Who, string | undefined>;
  /** A completed video job of studio A. */
  jobOfA: string;
  /** A stored response of studio A. */
  responseOfA: string;
}

/** The studio a call is about: for users their own (or, for "other", studio A); for admin and guest a fresh one. */
async function subjectStudio(fx: Fixture, who: Who): Promise<string> {
  switch (who) {
    case 'user':
    case 'other':
    case 'revoked':
      return fx.studio.A;
    case 'paused':
      return fx.studio.C;
    default: {
      const res = await fx.admin('POST', '/v1/studios/create', { name: `target for ${who}` });
      return res.json.id;
    }
  }
}

let keySeq = 0;

let githubMock: Promise<GithubMock> | undefined;
/** Sign-in with GitHub, configured once (through the env store) against a GitHub stand-in. */
async function githubSignIn(fx: Fixture): Promise<void> {
  if (!githubMock) {
    githubMock = startGithubMock({
      id: 1,
      login: 'matrix',
      name: 'Matrix',
      email: null,
      emails: [{ email: 'matrix@example.com', primary: true, verified: true }],
    });
    const mock = await githubMock;
    const env = {
      ...mock.env(),
      STUDIO_OAUTH_SIGNUP: 'open',
      STUDIO_PUBLIC_URL: fx.gw.url,
    };
    for (const [key, value] of Object.entries(env)) {
      await fx.admin('POST', '/v1/env/upsert', { key, value });
    }
  }
  await githubMock;
}
afterAll(async () => {
  await (await githubMock)?.close();
});

/** An OAuth flow of studio A started by the admin: its state. */
async function oauthStateOfA(fx: Fixture): Promise<string> {
  await githubSignIn(fx);
  const res = await fx.admin('POST', '/v1/accounts/oauth/start', {
    provider: 'github',
    studio_id: fx.studio.A,
  });
  return res.json.state;
}

/** An account with a password, in the studio the call is about. */
async function accountFor(fx: Fixture, who: Who) {
  const email = `matrix${++keySeq}@example.com`;
  const password = 'matrix-password';
  const studio_id = await subjectStudio(fx, who);
  const res = await fx.admin('POST', '/v1/accounts/create', { studio_id, email, password });
  return { studio_id, email, password, id: res.json.id as string };
}

/** A valid request for each route: valid enough that admin gets 2xx, so any refusal is about the identity. */
/** What a cell sends: JSON `body`, or a body of its own (`rawBody` with its `headers`: a multipart form). */
interface CellRequest {
  path: string;
  body?: unknown;
  rawBody?: Uint8Array;
  headers?: Record<string, string>;
}

/** A `multipart/form-data` body as a browser or OpenAI's client sends it. */
async function multipart(form: FormData): Promise<Pick<CellRequest, 'rawBody' | 'headers'>> {
  const request = new Request('http://form.invalid/', { method: 'POST', body: form });
  return {
    rawBody: new Uint8Array(await request.arrayBuffer()),
    headers: { 'content-type': request.headers.get('content-type')! },
  };
}

/** An MCP `initialize`, as the MCP SDK's client sends it over Streamable HTTP. */
const mcpInitialize = (): Pick<CellRequest, 'rawBody' | 'headers'> => ({
  rawBody: new TextEncoder().encode(
    JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'matrix', version: '1' },
      },
    }),
  ),
  headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
});

const REQUESTS: Record<string, (fx: Fixture, who: Who) => Promise<CellRequest>> = {
  'POST /v1/alerts/webhooks/upsert': async () => ({
    path: '/v1/alerts/webhooks/upsert',
    body: { id: 'matrix-hook', url: 'http://127.0.0.1:9/hook' },
  }),
  'GET /v1/alerts/webhooks/list': async () => ({ path: '/v1/alerts/webhooks/list' }),
  'POST /v1/alerts/webhooks/remove': async (fx) => {
    const id = `matrix-hook-gone${++keySeq}`;
    await fx.admin('POST', '/v1/alerts/webhooks/upsert', { id, url: 'http://127.0.0.1:9/hook' });
    return { path: '/v1/alerts/webhooks/remove', body: { id } };
  },
  'POST /v1/alerts/error-rate/set': async (fx, who) => ({
    path: '/v1/alerts/error-rate/set',
    body: { studio_id: await subjectStudio(fx, who), threshold: 0.5, window_minutes: 5, min_requests: 10 },
  }),
  'GET /v1/alerts/deliveries': async () => ({ path: '/v1/alerts/deliveries' }),
  'GET /v1/alerts': async (fx) => ({ path: `/v1/alerts?studio_id=${fx.studio.A}` }),
  'GET /v1/mcp/servers/list': async () => ({ path: '/v1/mcp/servers/list' }),
  'POST /v1/mcp/servers/upsert': async () => ({
    path: '/v1/mcp/servers/upsert',
    body: { id: 'matrix-web', transport: 'http', url: 'http://127.0.0.1:9/mcp' },
  }),
  'POST /v1/mcp/servers/remove': async (fx) => {
    const id = `matrix-gone${++keySeq}`;
    await fx.admin('POST', '/v1/mcp/servers/upsert', {
      id,
      transport: 'http',
      url: 'http://127.0.0.1:9/mcp',
    });
    return { path: '/v1/mcp/servers/remove', body: { id } };
  },
  'POST /v1/mcp': async () => ({ path: '/v1/mcp', ...mcpInitialize() }),
  'GET /v1/mcp': async () => ({ path: '/v1/mcp' }),
  'GET /.well-known/oauth-protected-resource': async () => ({
    path: '/.well-known/oauth-protected-resource',
  }),
  'GET /.well-known/oauth-protected-resource/v1/mcp': async () => ({
    path: '/.well-known/oauth-protected-resource/v1/mcp',
  }),
  'GET /v1/studios/list': async () => ({ path: '/v1/studios/list' }),
  'POST /v1/studios/create': async () => ({ path: '/v1/studios/create', body: { name: 'matrix' } }),
  'POST /v1/studios/pause': async (fx, who) => ({
    path: '/v1/studios/pause',
    body: { studio_id: await subjectStudio(fx, who), reason: 'matrix' },
  }),
  'POST /v1/studios/activate': async (fx, who) => ({
    path: '/v1/studios/activate',
    body: { studio_id: await subjectStudio(fx, who) },
  }),
  'POST /v1/studios/remove': async (fx, who) => ({
    path: '/v1/studios/remove',
    body: { studio_id: await subjectStudio(fx, who) },
  }),
  'POST /v1/studios/settings': async (fx, who) => ({
    path: '/v1/studios/settings',
    body: { studio_id: await subjectStudio(fx, who), cache_ttl_s: 60 },
  }),
  'POST /v1/studios/tokens/apply': async (fx, who) => ({
    path: '/v1/studios/tokens/apply',
    body: { studio_id: await subjectStudio(fx, who), name: 'matrix' },
  }),
  'GET /v1/studios/tokens/list': async (fx, who) => ({
    path: `/v1/studios/tokens/list?studio_id=${await subjectStudio(fx, who)}`,
  }),
  'POST /v1/studios/tokens/revoke': async (fx, who) => {
    const issued = await fx.admin('POST', '/v1/studios/tokens/apply', {
      studio_id: await subjectStudio(fx, who),
    });
    return { path: '/v1/studios/tokens/revoke', body: { token_id: issued.json.token.id } };
  },
  'POST /v1/studios/limits/set': async (fx, who) => ({
    path: '/v1/studios/limits/set',
    body: { studio_id: await subjectStudio(fx, who), rpm: 1000 },
  }),
  'GET /v1/studios/limits/list': async (fx, who) => ({
    path: `/v1/studios/limits/list?studio_id=${await subjectStudio(fx, who)}`,
  }),
  'POST /v1/studios/limits/remove': async (fx, who) => {
    const studio_id = await subjectStudio(fx, who);
    if (who === 'admin') await fx.admin('POST', '/v1/studios/limits/set', { studio_id, rpm: 1000 });
    return { path: '/v1/studios/limits/remove', body: { studio_id } };
  },
  'GET /v1/env/list': async () => ({ path: '/v1/env/list' }),
  'POST /v1/env/upsert': async () => ({
    path: '/v1/env/upsert',
    body: { key: `MATRIX_${++keySeq}`, value: 'x' },
  }),
  'POST /v1/env/remove': async (fx) => {
    const key = `MATRIX_${++keySeq}`;
    await fx.admin('POST', '/v1/env/upsert', { key, value: 'x' });
    return { path: '/v1/env/remove', body: { key } };
  },
  'POST /v1/env/import': async () => ({
    path: '/v1/env/import',
    body: { content: `MATRIX_${++keySeq}=imported\n` },
  }),
  'GET /v1/services': async () => ({ path: '/v1/services' }),
  'GET /v1/audit/events': async () => ({ path: '/v1/audit/events?limit=5' }),
  'GET /v1/audit/verify': async () => ({ path: '/v1/audit/verify' }),
  'GET /v1/audit/events/follow': async (fx) => ({
    path: `/v1/audit/events/follow?stream=usage-${fx.studio.A}`,
  }),
  'GET /health': async () => ({ path: '/health' }),
  'GET /ready': async () => ({ path: '/ready' }),
  'GET /v1/openapi.json': async () => ({ path: '/v1/openapi.json' }),
  'GET /docs': async () => ({ path: '/docs' }),
  'GET /v1/ai/models': async () => ({ path: '/v1/ai/models' }),
  'GET /v1/ai/models/*id': async () => ({ path: '/v1/ai/models/dev/echo' }),
  'GET /v1/ai/anthropic/v1/models': async () => ({ path: '/v1/ai/anthropic/v1/models' }),
  'POST /v1/ai/completions': async () => ({
    path: '/v1/ai/completions',
    body: { model: 'dev/echo', prompt: 'hi' },
  }),
  'POST /v1/ai/images/generations': async () => ({
    path: '/v1/ai/images/generations',
    body: { model: 'dev/image', prompt: 'a cat' },
  }),
  'POST /v1/ai/audio/transcriptions': async () => {
    const form = new FormData();
    form.set('model', 'dev/asr');
    form.set('file', new Blob([Buffer.from('RIFF')], { type: 'audio/wav' }), 'speech.wav');
    return { path: '/v1/ai/audio/transcriptions', ...(await multipart(form)) };
  },
  'POST /v1/ai/audio/speech': async () => ({
    path: '/v1/ai/audio/speech',
    body: { model: 'dev/tts', input: 'hi', voice: 'alloy' },
  }),
  'POST /v1/ai/text': async () => ({ path: '/v1/ai/text', body: { model: 'dev/echo', prompt: 'hi' } }),
  'POST /v1/ai/stream': async () => ({ path: '/v1/ai/stream', body: { model: 'dev/echo', prompt: 'hi' } }),
  'POST /v1/ai/chat/completions': async () => ({
    path: '/v1/ai/chat/completions',
    body: { model: 'dev/echo', messages: [{ role: 'user', content: 'hi' }] },
  }),
  'POST /v1/ai/anthropic/v1/messages': async () => ({
    path: '/v1/ai/anthropic/v1/messages',
    body: { model: 'dev/echo', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] },
  }),
  'POST /v1/ai/anthropic/v1/messages/count_tokens': async () => ({
    path: '/v1/ai/anthropic/v1/messages/count_tokens',
    body: { model: 'dev/echo', messages: [{ role: 'user', content: 'hi' }] },
  }),
  'POST /v1/ai/responses': async () => ({
    path: '/v1/ai/responses',
    body: { model: 'dev/echo', input: 'hi' },
  }),
  'GET /v1/ai/responses/:id': async (fx) => ({ path: `/v1/ai/responses/${fx.responseOfA}` }),
  'GET /v1/ai/requests': async (fx) => ({ path: `/v1/ai/requests?studio_id=${fx.studio.A}` }),
  'GET /v1/studios/capture': async (fx) => ({ path: `/v1/studios/capture?studio_id=${fx.studio.A}` }),
  'GET /v1/ai/requests/summary': async (fx) => ({ path: `/v1/ai/requests/summary?studio_id=${fx.studio.A}` }),
  'POST /v1/studios/capture/set': async (fx) => ({
    path: '/v1/studios/capture/set',
    body: { studio_id: fx.studio.A, capture: 'metadata' },
  }),
  'POST /v1/studios/erase-payloads': async (fx) => ({
    path: '/v1/studios/erase-payloads',
    body: { studio_id: fx.studio.A },
  }),
  'GET /v1/ai/requests/:id': async (fx) => {
    const log = await fx.admin('GET', `/v1/ai/requests?studio_id=${fx.studio.A}&status=answered&limit=1`);
    return { path: `/v1/ai/requests/${log.json.items[0].id}` };
  },
  'POST /v1/ai/image': async () => ({ path: '/v1/ai/image', body: { model: 'dev/image', prompt: 'a cat' } }),
  'POST /v1/ai/tts': async () => ({ path: '/v1/ai/tts', body: { model: 'dev/tts', input: 'hi' } }),
  'POST /v1/ai/asr': async () => ({
    path: '/v1/ai/asr',
    body: { model: 'dev/asr', audio: Buffer.from('RIFF').toString('base64'), mime_type: 'audio/wav' },
  }),
  'POST /v1/ai/embeddings': async () => ({
    path: '/v1/ai/embeddings',
    body: { model: 'dev/embed', input: ['hi', 'there'] },
  }),
  'POST /v1/ai/video': async () => ({ path: '/v1/ai/video', body: { model: 'dev/video', prompt: 'waves' } }),
  'GET /v1/ai/jobs/get': async (fx) => ({ path: `/v1/ai/jobs/get?id=${fx.jobOfA}` }),
  'GET /v1/ai/jobs/content': async (fx) => ({ path: `/v1/ai/jobs/content?id=${fx.jobOfA}` }),
  'GET /v1/ai/usage': async (fx) => ({ path: `/v1/ai/usage?studio_id=${fx.studio.A}` }),
  'GET /v1/ai/prices': async () => ({ path: '/v1/ai/prices' }),
  'POST /v1/ai/prices/upsert': async () => ({
    path: '/v1/ai/prices/upsert',
    body: { model: 'dev/echo', input_per_mtok: 1 },
  }),
  'POST /v1/studios/budgets/set': async (fx) => ({
    path: '/v1/studios/budgets/set',
    body: { studio_id: fx.studio.A, amount_usd: 100, window: 'month', mode: 'soft' },
  }),
  'GET /v1/studios/budgets/list': async (fx) => ({
    path: `/v1/studios/budgets/list?studio_id=${fx.studio.A}`,
  }),
  'POST /v1/studios/budgets/remove': async (fx) => {
    await fx.admin('POST', '/v1/studios/budgets/set', {
      studio_id: fx.studio.B,
      amount_usd: 100,
      window: 'month',
      mode: 'soft',
    });
    return { path: '/v1/studios/budgets/remove', body: { studio_id: fx.studio.B } };
  },
  'POST /v1/ai/prices/remove': async (fx) => {
    await fx.admin('POST', '/v1/ai/prices/upsert', { model: 'dev/image', per_image: 0.02 });
    return { path: '/v1/ai/prices/remove', body: { model: 'dev/image' } };
  },
  'POST /v1/ai/routes/upsert': async () => ({
    path: '/v1/ai/routes/upsert',
    body: { id: 'matrix/echo', strategy: 'fallback', targets: [{ model: 'dev/echo' }] },
  }),
  'GET /v1/ai/routes/list': async () => ({ path: '/v1/ai/routes/list' }),
  'POST /v1/ai/providers/upsert': async () => ({
    path: '/v1/ai/providers/upsert',
    body: { id: 'matrix', preset: 'ollama', models: [{ id: 'm' }] },
  }),
  'GET /v1/ai/providers/list': async () => ({ path: '/v1/ai/providers/list' }),
  'POST /v1/ai/providers/remove': async (fx) => {
    const id = `matrix-gone${++keySeq}`;
    await fx.admin('POST', '/v1/ai/providers/upsert', { id, preset: 'ollama', models: [{ id: 'm' }] });
    return { path: '/v1/ai/providers/remove', body: { id } };
  },
  'POST /v1/ai/routes/remove': async (fx) => {
    const id = `matrix/gone${++keySeq}`;
    await fx.admin('POST', '/v1/ai/routes/upsert', {
      id,
      strategy: 'fallback',
      targets: [{ model: 'dev/echo' }],
    });
    return { path: '/v1/ai/routes/remove', body: { id } };
  },
  'POST /v1/accounts/create': async (fx, who) => ({
    path: '/v1/accounts/create',
    body: { studio_id: await subjectStudio(fx, who), email: `matrix${++keySeq}@example.com` },
  }),
  'GET /v1/accounts/list': async (fx, who) => ({
    path: `/v1/accounts/list?studio_id=${await subjectStudio(fx, who)}`,
  }),
  'POST /v1/accounts/remove': async (fx, who) => ({
    path: '/v1/accounts/remove',
    body: { account_id: (await accountFor(fx, who)).id },
  }),
  'POST /v1/accounts/login': async (fx, who) => {
    const { studio_id, email, password } = await accountFor(fx, who);
    return { path: '/v1/accounts/login', body: { studio_id, email, password } };
  },
  'POST /v1/accounts/oauth/start': async (fx, who) => {
    await githubSignIn(fx);
    return {
      path: '/v1/accounts/oauth/start',
      body: { provider: 'github', studio_id: await subjectStudio(fx, who) },
    };
  },
  'GET /v1/accounts/oauth/providers': async () => ({ path: '/v1/accounts/oauth/providers' }),
  'GET /v1/accounts/oauth/result': async (fx) => ({
    path: `/v1/accounts/oauth/result?state=${await oauthStateOfA(fx)}`,
  }),
  'GET /v1/accounts/oauth/callback': async (fx) => {
    const state = await oauthStateOfA(fx);
    const mock = await githubMock!;
    // the browser at GitHub: it sends the browser back to the callback with a code
    const authorize = await fetch(
      `${mock.url}/login/oauth/authorize?${new URLSearchParams({
        client_id: mock.clientId,
        redirect_uri: `${fx.gw.url}/v1/accounts/oauth/callback`,
        state,
      })}`,
      { redirect: 'manual' },
    );
    const back = new URL(authorize.headers.get('location')!);
    return { path: `${back.pathname}${back.search}` };
  },
};

const fx = {} as Fixture;

beforeAll(async () => {
  const gw = await startTestGateway({ store: 'memory', logLevel: 'silent' });
  fx.gw = gw;
  fx.admin = async (method, path, body) => {
    const res = await gw.api(method, path, { token: gw.adminKey, body });
    if (res.status >= 300) throw new Error(`fixture: ${method} ${path} → ${res.status} ${res.text}`);
    return res;
  };
  const studio = async (id: string) =>
    (await fx.admin('POST', '/v1/studios/create', { name: id, studio_id: id })).json.id;
  const token = async (studioId: string) =>
    (await fx.admin('POST', '/v1/studios/tokens/apply', { studio_id: studioId })).json;
  fx.studio = { A: await studio('matrix-a'), B: await studio('matrix-b'), C: await studio('matrix-c') };
  const user = await token(fx.studio.A);
  const other = await token(fx.studio.B);
  const paused = await token(fx.studio.C);
  const revoked = await token(fx.studio.A);
  await fx.admin('POST', '/v1/studios/pause', { studio_id: fx.studio.C });
  await fx.admin('POST', '/v1/studios/tokens/revoke', { token_id: revoked.token.id });
  fx.credential = {
    guest: undefined,
    user: user.user_token,
    other: other.user_token,
    paused: paused.user_token,
    revoked: revoked.user_token,
    admin: gw.adminKey,
  };
  const video = await gw.api('POST', '/v1/ai/video', {
    token: user.user_token,
    body: { model: 'dev/video', prompt: 'x' },
  });
  fx.jobOfA = video.json.job.id;
  const response = await gw.api('POST', '/v1/ai/responses', {
    token: user.user_token,
    body: { model: 'dev/echo', input: 'x' },
  });
  fx.responseOfA = response.json.id;
  for (let i = 0; i < 200; i++) {
    const job = await gw.api('GET', `/v1/ai/jobs/get?id=${fx.jobOfA}`, { token: user.user_token });
    if (job.json.job.status === 'completed') break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
});

afterAll(async () => {
  await fx.gw?.close();
});

it('the matrix covers every route the gateway serves, each once', () => {
  const routes = MATRIX.map(([route]) => route);
  expect(new Set(routes).size).toBe(routes.length);
  expect(Object.keys(REQUESTS).sort()).toEqual([...routes].sort());
  const served = fx.gw.running.registry
    .services()
    .flatMap((s) => s.actions.map((a) => `${a.method} /v1/${s.id}/${a.action}`));
  expect(served.length).toBeGreaterThan(10);
  const own = [
    'GET /health',
    'GET /ready',
    'GET /v1/services',
    'GET /v1/openapi.json',
    'GET /docs',
    'POST /v1/mcp',
    'GET /v1/mcp',
    'GET /.well-known/oauth-protected-resource',
    'GET /.well-known/oauth-protected-resource/v1/mcp',
    'GET /v1/alerts',
  ];
  expect([...routes].sort()).toEqual([...own, ...served].sort());
});

for (const [route, ...statuses] of MATRIX) {
  describe(route, () => {
    WHO.forEach((who, i) => {
      const status = statuses[i]!;
      it(`${DESCRIBE[who]} → ${status}`, async () => {
        const [method, path] = route.split(' ') as [string, string];
        expect(fx.credential[who] === undefined).toBe(who === 'guest');
        const request = await REQUESTS[route]!(fx, who);
        // `:id` in a route stands for the id its request names.
        expect(request.path.split('?')[0]).toMatch(
          new RegExp(`^${path.replace(/:[a-z]+/g, '[^/]+').replace(/\*[a-z]+/g, '.+')}$`),
        );
        const res = STREAMS.has(route)
          ? await openOrCall(fx, request.path, fx.credential[who])
          : await fx.gw.api(method, request.path, {
              token: fx.credential[who],
              ...(request.rawBody
                ? { rawBody: request.rawBody, headers: request.headers }
                : { body: request.body }),
            });
        if (status < 300) {
          expect(res.status, res.text).toBe(status);
          expect(res.headers.get('content-type'), res.text).toMatch(
            /^(application\/json|text\/event-stream|image\/|audio\/|text\/html)/,
          );
          // (a Responses API object says `error: null`)
          expect(res.json?.error ?? undefined).toBeUndefined();
        } else {
          const byStatus = status === 401 ? 'unauthenticated' : status === 404 ? 'not_found' : 'forbidden';
          const code = CODES[route]?.[who] ?? (who === 'paused' ? 'studio_paused' : byStatus);
          if (ANTHROPIC_SHAPED.has(route)) expectAnthropicError(res, status, code);
          else expectApiError(res, status, code);
        }
      });
    });
  });
}

describe('refused calls change nothing', () => {
  it('the fixture studios and tokens are as they were set up', async () => {
    const studios = (await fx.admin('GET', '/v1/studios/list')).json.items as {
      id: string;
      status: string;
    }[];
    const status = (id: string) => studios.find((s) => s.id === id)?.status;
    expect([status(fx.studio.A), status(fx.studio.B), status(fx.studio.C)]).toEqual([
      'active',
      'active',
      'paused',
    ]);
    const services = async (who: Who) =>
      (await fx.gw.api('GET', '/v1/services', { token: fx.credential[who] })).status;
    expect(await services('user')).toBe(200);
    expect(await services('other')).toBe(200);
    expect(await services('paused')).toBe(403);
    // Only the admin and the two live users acted (the gateway records their usage); refused callers left no trace.
    const events = (await fx.admin('GET', '/v1/audit/events?limit=1000')).json.items as {
      actor: string;
      type: string;
    }[];
    expect(events.length).toBeGreaterThan(0);
    const tokenId = async (token: string | undefined) =>
      (await fx.admin('GET', '/v1/audit/events?type=TokenIssued&limit=1000')).json.items.find(
        (e: { data: { tokenHash: string } }) => e.data.tokenHash === sha256Hex(token ?? ''),
      )?.data.tokenId;
    const allowed = new Set([
      'admin',
      'gateway',
      'system', // the log sealer
      `token:${await tokenId(fx.credential.user)}`,
      `token:${await tokenId(fx.credential.other)}`,
    ]);
    // Guests may sign in (login, OAuth start, callback and result): those events, and only those, are theirs.
    const signIn = new Set([
      'TokenIssued',
      'LoggedIn',
      'OAuthStarted',
      'AccountCreated',
      'OAuthLinked',
      'OAuthCompleted',
      'OAuthResultClaimed',
    ]);
    for (const event of events) {
      if (event.actor === 'guest') expect(signIn, event.type).toContain(event.type);
      else expect(allowed, event.actor).toContain(event.actor);
    }
    expect(events.some((e) => e.actor === 'guest')).toBe(true);
  });
});
