import { request as httpRequest } from 'node:http';
import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GOOGLE_ISSUER, googleProvider } from '../../services/accounts/providers/google.ts';
import { sha256Hex } from '../../shared/crypto.ts';
import { adminOk, createStudio } from '../support/admin.ts';
import {
  type ApiResponse,
  expectApiError,
  jsonOrUndefined,
  sleep,
  startTestGateway,
  type TestGateway,
} from '../support/gateway.ts';
import { auditLog, secretsIn } from './support/accounts.ts';
import { Browser } from './support/browser.ts';
import { CALLBACK_PATH, cancelAtProvider, shownSignInCode, signInAtProvider } from './support/flow.ts';
import { closeAgents, fromAddress, getFrom } from './support/from-address.ts';
import { type Person, startOidcProvider, type TestOidcProvider } from './support/oidc.ts';

// OAuth sign-in against a real OpenID provider (`oidc-provider`) on loopback, driven the way a
// browser drives it: redirects followed by hand, cookies kept, the login and consent forms posted.

const PUBLIC_URL = 'https://studio.example.com';
let gw: TestGateway;
let idp: TestOidcProvider;
const studio = 'oidc-main';

/** Every user token, code and state the tests saw: none may be in the log. */
const seen: Record<string, string> = {};
let seenCount = 0;
const remember = (kind: string, value: string) => {
  seen[`${kind}#${++seenCount}`] = value;
};

async function start(options: { studioId?: string; redirectTo?: string; token?: string } = {}) {
  const res = await gw.api('POST', '/v1/accounts/oauth/start', {
    token: options.token,
    body: {
      provider: 'oidc',
      studio_id: options.studioId ?? studio,
      ...(options.redirectTo ? { redirect_to: options.redirectTo } : {}),
    },
  });
  expect(res.status, res.text).toBe(200);
  remember('state', res.json.state);
  remember('nonce', new URL(res.json.authorization_url).searchParams.get('nonce')!);
  return res.json as { authorization_url: string; state: string; expires_at: string };
}

/** Signs in at the provider and returns the callback URL the provider sent the browser to. */
async function atProvider(authorizationUrl: string, person: Person): Promise<URL> {
  const callback = await signInAtProvider(new Browser(), authorizationUrl, person);
  const code = callback.searchParams.get('code');
  if (code) remember('code', code);
  return callback;
}

/** The one-time code each completed callback showed its browser, by state. */
const codes = new Map<string, string>();

/** What the browser shows for the callback: the gateway's page (or its redirect). */
async function openCallback(url: URL | string) {
  const res = await fetch(url, { redirect: 'manual', headers: { accept: 'text/html' } });
  const page = { status: res.status, headers: res.headers, body: await res.text() };
  const code = shownSignInCode(page);
  const state = new URL(url).searchParams.get('state');
  if (code && state) {
    codes.set(state, code);
    remember('signin-code', code);
  }
  return page;
}

/** Polls as the client that started the flow, with the code its person's browser was shown (if any). */
async function result(state: string, code: string | null = codes.get(state) ?? null) {
  const query = `state=${encodeURIComponent(state)}${code === null ? '' : `&code=${encodeURIComponent(code)}`}`;
  const res = await gw.api('GET', `/v1/accounts/oauth/result?${query}`);
  if (res.json?.user_token) remember('token', res.json.user_token);
  return res;
}

/** A JSON POST whose Host header names `host` (fetch does not let a caller set Host). */
function postWithHost(url: string, host: string, body: unknown) {
  return new Promise<Pick<ApiResponse, 'status' | 'text' | 'json'>>((resolve, reject) => {
    const payload = JSON.stringify(body);
    const req = httpRequest(
      url,
      {
        method: 'POST',
        headers: { host, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text, json: jsonOrUndefined(text) }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** What a poll with the state but no code sees of a completed sign-in. */
const COMPLETED_WITHOUT_CODE = {
  status: 'completed',
  provider: 'oidc',
  studio_id: studio,
  code_required: true,
};

async function flowEvents(state: string) {
  const res = await adminOk(gw, 'GET', `/v1/audit/events?stream=oauth-${sha256Hex(state)}&limit=100`);
  return res.json.items as { type: string; data: Record<string, unknown> }[];
}

async function setEnv(key: string, value: string | undefined) {
  if (value === undefined) await adminOk(gw, 'POST', '/v1/env/remove', { key });
  else await adminOk(gw, 'POST', '/v1/env/upsert', { key, value });
}

beforeAll(async () => {
  gw = await startTestGateway({
    store: 'memory',
    logLevel: 'trace',
    processEnv: { STUDIO_OAUTH_SIGNUP: 'open', STUDIO_OAUTH_REDIRECT_ALLOWLIST: 'http://127.0.0.1:9' },
  });
  idp = await startOidcProvider({
    redirectUris: [`${gw.url}${CALLBACK_PATH}`, `${PUBLIC_URL}${CALLBACK_PATH}`],
  });
  // Configured at run time, through the env store: no restart.
  await setEnv('STUDIO_PUBLIC_URL', gw.url);
  await setEnv('STUDIO_OIDC_ISSUER', idp.issuer);
  await setEnv('STUDIO_OIDC_CLIENT_ID', idp.clientId);
  await setEnv('STUDIO_OIDC_CLIENT_SECRET', idp.clientSecret);
  await createStudio(gw, studio);
});

afterAll(async () => {
  await closeAgents();
  await gw?.close();
  await idp?.close();
});

describe('configuration', () => {
  it('GET /v1/services lists the accounts service with the env keys of every provider', async () => {
    const res = await adminOk(gw, 'GET', '/v1/services');
    const accounts = res.json.items.find((s: { id: string }) => s.id === 'accounts');
    const keys = accounts.env.map((e: { key: string }) => e.key);
    expect(keys).toEqual(
      expect.arrayContaining([
        'STUDIO_OIDC_ISSUER',
        'STUDIO_OIDC_CLIENT_ID',
        'STUDIO_OIDC_CLIENT_SECRET',
        'GOOGLE_CLIENT_ID',
        'GOOGLE_CLIENT_SECRET',
        'GITHUB_CLIENT_ID',
        'GITHUB_CLIENT_SECRET',
        'GITHUB_OAUTH_URL',
        'GITHUB_API_URL',
        'STUDIO_PUBLIC_URL',
        'STUDIO_OAUTH_REDIRECT_ALLOWLIST',
        'STUDIO_OAUTH_SIGNUP',
      ]),
    );
  });

  it.each([
    ['google', /GOOGLE_CLIENT_ID, GOOGLE_CLIENT_SECRET/],
    ['github', /GITHUB_CLIENT_ID, GITHUB_CLIENT_SECRET/],
  ])('an unconfigured provider (%s) is a 404 naming the keys to set', async (provider, keys) => {
    const res = await gw.api('POST', '/v1/accounts/oauth/start', { body: { provider, studio_id: studio } });
    const error = expectApiError(res, 404, 'not_found');
    expect(error.message).toMatch(keys);
    expect(error.param).toBe('provider');
  });

  it('an unknown provider, a bad studio id or a redirect_to off the allow-list is a 400', async () => {
    const bad = async (body: unknown, param: string) =>
      expect(
        expectApiError(await gw.api('POST', '/v1/accounts/oauth/start', { body }), 400, 'validation_failed')
          .param,
      ).toBe(param);
    await bad({ provider: 'facebook', studio_id: studio }, 'provider');
    await bad({ provider: 'oidc', studio_id: '../x' }, 'studio_id');
    await bad({ provider: 'oidc', studio_id: studio, redirect_to: 'https://evil.example/' }, 'redirect_to');
    await bad({ provider: 'oidc', studio_id: studio, redirect_to: 'javascript:alert(1)' }, 'redirect_to');
  });

  it('a token in the header must still be valid (401), and of the named studio (403)', async () => {
    expectApiError(
      await gw.api('POST', '/v1/accounts/oauth/start', {
        token: `stk_${'x'.repeat(43)}`,
        body: { provider: 'oidc', studio_id: studio },
      }),
      401,
      'unauthenticated',
    );
    await createStudio(gw, 'oidc-other');
    const other = await adminOk(gw, 'POST', '/v1/studios/tokens/apply', { studio_id: 'oidc-other' });
    expectApiError(
      await gw.api('POST', '/v1/accounts/oauth/start', {
        token: other.json.user_token,
        body: { provider: 'oidc', studio_id: studio },
      }),
      403,
      'studio_mismatch',
    );
  });

  it('STUDIO_PUBLIC_URL builds the callback URL the provider is given, whatever Host the request names', async () => {
    expect(new URL((await start()).authorization_url).searchParams.get('redirect_uri')).toBe(
      `${gw.url}${CALLBACK_PATH}`,
    );
    await setEnv('STUDIO_PUBLIC_URL', `${PUBLIC_URL}/`);
    try {
      const spoofed = await postWithHost(`${gw.url}/v1/accounts/oauth/start`, 'evil.example', {
        provider: 'oidc',
        studio_id: studio,
      });
      expect(spoofed.status, spoofed.text).toBe(200);
      expect(new URL(spoofed.json.authorization_url).searchParams.get('redirect_uri')).toBe(
        `${PUBLIC_URL}${CALLBACK_PATH}`,
      );
      expect(spoofed.text).not.toContain('evil.example');
    } finally {
      await setEnv('STUDIO_PUBLIC_URL', gw.url);
    }
  });

  it('without STUDIO_PUBLIC_URL, OAuth is refused with a 503 naming it (never the Host header)', async () => {
    await setEnv('STUDIO_PUBLIC_URL', undefined);
    try {
      const res = await postWithHost(`${gw.url}/v1/accounts/oauth/start`, 'evil.example', {
        provider: 'oidc',
        studio_id: studio,
      });
      expect(res.status, res.text).toBe(503);
      expect(res.json.error.code).toBe('unavailable');
      expect(res.json.error.message).toContain('STUDIO_PUBLIC_URL');
      const plain = await gw.api('POST', '/v1/accounts/oauth/start', {
        body: { provider: 'oidc', studio_id: studio },
      });
      expect(expectApiError(plain, 503, 'unavailable').message).toContain('STUDIO_PUBLIC_URL');
    } finally {
      await setEnv('STUDIO_PUBLIC_URL', gw.url);
    }
  });
});

describe('the whole flow', () => {
  let first: { state: string; callback: URL; token: string; accountId: string };

  it('start → provider login and consent → callback page → result with a token that works', async () => {
    const started = await start();
    const url = new URL(started.authorization_url);
    expect(url.origin).toBe(idp.issuer);
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      client_id: idp.clientId,
      response_type: 'code',
      state: started.state,
      code_challenge_method: 'S256',
      redirect_uri: `${gw.url}${CALLBACK_PATH}`,
    });
    expect(url.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(url.searchParams.get('nonce')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(started.state).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const ttl = Date.parse(started.expires_at) - Date.now();
    expect(ttl).toBeGreaterThan(9 * 60_000);
    expect(ttl).toBeLessThanOrEqual(10 * 60_000);

    const pending = await result(started.state);
    expect(pending.status).toBe(200);
    expect(pending.json).toEqual({
      status: 'pending',
      provider: 'oidc',
      studio_id: studio,
      expires_at: started.expires_at,
    });

    const callback = await atProvider(started.authorization_url, 'alice');
    expect(callback.searchParams.get('state')).toBe(started.state);
    expect(callback.searchParams.get('code')).toBeTruthy();
    const page = await openCallback(callback);
    expect(page.status, page.body).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(page.body).toContain('Signed in');
    expect(page.body).toContain('close this window');
    const code = shownSignInCode(page);
    expect(code).toMatch(/^[A-HJ-NP-Z2-9]{4}-[A-HJ-NP-Z2-9]{4}$/);

    // The state alone says the sign-in completed, and no more: the result needs the code too.
    expect((await result(started.state, null)).json).toEqual(COMPLETED_WITHOUT_CODE);

    const done = await result(started.state);
    expect(done.status, done.text).toBe(200);
    expect(done.json).toMatchObject({
      status: 'completed',
      provider: 'oidc',
      studio_id: studio,
      user_token: expect.stringMatching(/^stk_[A-Za-z0-9_-]{43}$/),
      expires_at: expect.any(String),
      account: {
        studio_id: studio,
        email: 'alice@example.com',
        name: 'Alice Liddell',
        status: 'active',
        has_password: false,
        identities: [{ provider: 'oidc', subject: 'alice', linked_at: expect.any(String) }],
      },
    });
    const lifetime = Date.parse(done.json.expires_at) - Date.now();
    expect(lifetime).toBeGreaterThan(29 * 24 * 3600_000);
    expect(lifetime).toBeLessThanOrEqual(30 * 24 * 3600_000);
    first = {
      state: started.state,
      callback,
      token: done.json.user_token,
      accountId: done.json.account.id,
    };

    // The token is a user token like any other.
    const token = first.token;
    expect((await gw.api('GET', '/v1/services', { token })).status).toBe(200);
    expect((await gw.api('GET', '/v1/ai/models', { token })).status).toBe(200);
    const text = await gw.api('POST', '/v1/ai/text', { token, body: { model: 'dev/echo', prompt: 'hi' } });
    expect(text.status, text.text).toBe(200);
    const listed = await adminOk(gw, 'GET', `/v1/studios/tokens/list?studio_id=${studio}`);
    expect(listed.json.items.map((t: { prefix: string }) => t.prefix)).toContain(token.slice(0, 8));
  });

  it('the token is handed out once: the next poll says completed, without it', async () => {
    const again = await result(first.state);
    expect(again.status).toBe(200);
    expect(again.json).toMatchObject({
      status: 'completed',
      claimed: true,
      account: { id: first.accountId },
    });
    expect(again.json.user_token).toBeUndefined();
  });

  it('every step is an event, in order, under the right streams', async () => {
    const events = await flowEvents(first.state);
    expect(events.map((e) => e.type)).toEqual(['OAuthStarted', 'OAuthCompleted', 'OAuthResultClaimed']);
    expect(events[0]!.data).toMatchObject({
      flowId: sha256Hex(first.state),
      provider: 'oidc',
      studioId: studio,
      redirectUri: `${gw.url}${CALLBACK_PATH}`,
      sealedSecrets: expect.stringMatching(/^v1\./),
    });
    expect(events[1]!.data).toMatchObject({
      accountId: first.accountId,
      subject: 'alice',
      accountCreated: true,
    });
    const account = await adminOk(gw, 'GET', `/v1/audit/events?stream=account-${first.accountId}`);
    expect(account.json.items.map((e: { type: string }) => e.type)).toEqual([
      'AccountCreated',
      'OAuthLinked',
      'LoggedIn',
    ]);
    const tokenId = events[2]!.data.tokenId;
    expect(account.json.items[2].data).toMatchObject({ tokenId, method: 'oauth', provider: 'oidc' });
    const issued = await adminOk(gw, 'GET', `/v1/audit/events?stream=studio-${studio}&type=TokenIssued`);
    expect(issued.json.items.map((e: { data: { tokenId: string } }) => e.data.tokenId)).toContain(tokenId);
    expect(
      issued.json.items.find((e: { data: { tokenId: string } }) => e.data.tokenId === tokenId).data.tokenHash,
    ).toBe(sha256Hex(first.token));
  });

  it('signing in again finds the same account (linked by provider and subject)', async () => {
    const started = await start();
    const page = await openCallback(await atProvider(started.authorization_url, 'alice'));
    expect(page.status).toBe(200);
    const done = await result(started.state);
    expect(done.json).toMatchObject({ status: 'completed', account: { id: first.accountId } });
    expect(done.json.user_token).not.toBe(first.token);
    const list = await adminOk(gw, 'GET', `/v1/accounts/list?studio_id=${studio}`);
    expect(list.json.items.filter((a: { email: string }) => a.email === 'alice@example.com')).toHaveLength(1);
  });

  it('a replayed callback is refused with a page and an OAuthFailed event; the result stays as it was', async () => {
    const page = await openCallback(first.callback);
    expect(page.status).toBe(400);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.body).toContain('already been used');
    const events = await flowEvents(first.state);
    expect(events.at(-1)).toMatchObject({ type: 'OAuthFailed', data: { reason: 'state_replayed' } });
    expect((await result(first.state)).json).toMatchObject({ status: 'completed', claimed: true });
  });
});

describe('the result goes only to whoever has the code shown in the browser that signed in', () => {
  it('an attacker starts a flow and a member signs in with its link: polling with the state yields no token', async () => {
    const attacker = await start();
    // The member opens the genuine provider link in their own browser and signs in.
    const page = await openCallback(await atProvider(attacker.authorization_url, 'alice'));
    expect(page.status).toBe(200);
    const code = shownSignInCode(page)!;
    expect(page.body).toContain('Never give this code to anyone else');
    // The attacker polls with the state it holds: it learns that the sign-in completed, nothing more.
    expect((await result(attacker.state, null)).json).toEqual(COMPLETED_WITHOUT_CODE);
    // Guessing: every guess is counted, and the fifth wrong one ends the flow.
    for (let left = 4; left >= 1; left--) {
      const wrong = expectApiError(await result(attacker.state, 'AAAA-AAAA'), 403, 'forbidden');
      expect(wrong.param).toBe('code');
      expect(wrong.message).toContain(`${left} more tries`);
    }
    expect(expectApiError(await result(attacker.state, 'BBBB-BBBB'), 403, 'forbidden').message).toMatch(
      /ended/,
    );
    const after = await result(attacker.state, code);
    expect(after.json).toMatchObject({ status: 'failed', error: { code: 'claim_refused' } });
    expect(after.json.user_token).toBeUndefined();
    expect(after.json.account).toBeUndefined();
    const types = (await flowEvents(attacker.state)).map((e) => e.type);
    expect(types).not.toContain('OAuthResultClaimed');
    expect(types.filter((t) => t === 'OAuthClaimRefused')).toHaveLength(5);
  });

  it('parallel guesses are each counted before they are judged: 40 at once, at most 5 judged, no token', async () => {
    const started = await start();
    expect((await openCallback(await atProvider(started.authorization_url, 'alice'))).status).toBe(200);
    const guesses = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        result(started.state, `ZZZZ-${String(1000 + i).replace(/[01]/g, 'Z')}`),
      ),
    );
    expect(guesses.every((g) => g.json?.user_token === undefined)).toBe(true);
    expect(
      guesses.filter((g) => g.status === 403 && g.json.error.param === 'code').length,
    ).toBeLessThanOrEqual(5);
    const types = (await flowEvents(started.state)).map((e) => e.type);
    expect(types.filter((t) => t === 'OAuthClaimRefused')).toHaveLength(5);
    expect((await result(started.state)).json).toMatchObject({
      status: 'failed',
      error: { code: 'claim_refused' },
    });
  });

  it('the code is read without case, spaces or its dash', async () => {
    const started = await start();
    const code = shownSignInCode(await openCallback(await atProvider(started.authorization_url, 'alice')))!;
    const typed = ` ${code.replace('-', ' ').toLowerCase()} `;
    const done = await result(started.state, typed);
    expect(done.json).toMatchObject({ status: 'completed', user_token: expect.stringMatching(/^stk_/) });
  });
});

describe('each failure ends in a clear page, a failed result and an OAuthFailed event', () => {
  it('an unknown state', async () => {
    const state = 'never-started-0123456789abcdefghijklmnop';
    const page = await openCallback(`${gw.url}${CALLBACK_PATH}?code=forged&state=${state}`);
    expect(page.status).toBe(400);
    expect(page.body).toContain('not started here');
    expect(await flowEvents(state)).toMatchObject([
      { type: 'OAuthFailed', data: { reason: 'unknown_state' } },
    ]);
    const res = await result('no-such-state');
    expectApiError(res, 404, 'not_found');
  });

  it('a callback with no state at all is a 400 page (nothing to record it against)', async () => {
    const page = await openCallback(`${gw.url}${CALLBACK_PATH}?code=x`);
    expect(page.status).toBe(400);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
  });

  it('an expired state (STUDIO_OAUTH_STATE_TTL_S=1)', async () => {
    await setEnv('STUDIO_OAUTH_STATE_TTL_S', '1');
    let started: Awaited<ReturnType<typeof start>>;
    try {
      started = await start();
    } finally {
      await setEnv('STUDIO_OAUTH_STATE_TTL_S', undefined);
    }
    const callback = await atProvider(started.authorization_url, 'alice');
    await sleep(Math.max(0, Date.parse(started.expires_at) - Date.now()) + 50);
    expect((await result(started.state)).json).toMatchObject({ status: 'expired' });
    const page = await openCallback(callback);
    expect(page.status).toBe(400);
    expect(page.body).toContain('expired');
    expect((await result(started.state)).json).toEqual({
      status: 'expired',
      provider: 'oidc',
      studio_id: studio,
    });
    expect((await flowEvents(started.state)).at(-1)).toMatchObject({
      type: 'OAuthFailed',
      data: { reason: 'state_expired' },
    });
  });

  it('the provider answers error= (the person cancelled)', async () => {
    const started = await start();
    const callback = await cancelAtProvider(new Browser(), started.authorization_url);
    expect(callback.searchParams.get('error')).toBe('access_denied');
    const page = await openCallback(callback);
    expect(page.status).toBe(400);
    expect(page.body).toContain('access_denied');
    const done = await result(started.state);
    expect(done.json).toMatchObject({ status: 'failed', error: { code: 'provider_error' } });
    expect(done.json.user_token).toBeUndefined();
    expect((await flowEvents(started.state)).at(-1)).toMatchObject({
      type: 'OAuthFailed',
      data: { reason: 'provider_error', providerError: 'access_denied' },
    });
  });

  it('the studio was paused meanwhile', async () => {
    const paused = await createStudio(gw, 'oidc-paused');
    const started = await start({ studioId: paused });
    const callback = await atProvider(started.authorization_url, 'bob');
    await adminOk(gw, 'POST', '/v1/studios/pause', { studio_id: paused });
    const page = await openCallback(callback);
    expect(page.status).toBe(403);
    expect(page.body).toContain('paused');
    expect((await result(started.state)).json).toMatchObject({
      status: 'failed',
      error: { code: 'studio_paused' },
    });
    // nothing was created in the paused studio
    expect((await adminOk(gw, 'GET', `/v1/accounts/list?studio_id=${paused}`)).json.items).toEqual([]);
  });

  it("a code delivered with another flow's state (PKCE verifier mismatch)", async () => {
    const victim = await start();
    const attacker = await start();
    const callback = await atProvider(attacker.authorization_url, 'bob');
    // The attacker's code, injected into the victim's flow: the victim's verifier does not match it.
    callback.searchParams.set('state', victim.state);
    const page = await openCallback(callback);
    expect(page.status).toBe(400);
    expect(page.body).toContain('refused');
    expect((await result(victim.state)).json).toMatchObject({
      status: 'failed',
      error: { code: 'code_rejected' },
    });
    const failed = (await flowEvents(victim.state)).at(-1);
    expect(failed).toMatchObject({
      type: 'OAuthFailed',
      data: { reason: 'code_rejected', providerError: 'invalid_grant' },
    });
    // Control: the same code with its own flow's state (and so its own verifier) is accepted, so the
    // verifier was the only thing wrong (oidc-provider checks PKCE before it spends a code).
    callback.searchParams.set('state', attacker.state);
    expect((await openCallback(callback)).status).toBe(200);
    expect((await result(attacker.state)).json.status).toBe('completed');
  });

  it('the exchange fails (the provider refuses our client secret)', async () => {
    await setEnv('STUDIO_OIDC_CLIENT_SECRET', 'not-the-secret');
    try {
      const started = await start();
      const page = await openCallback(await atProvider(started.authorization_url, 'bob'));
      expect(page.status).toBe(502);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      expect((await result(started.state)).json).toMatchObject({
        status: 'failed',
        error: { code: 'exchange_failed' },
      });
      expect((await flowEvents(started.state)).at(-1)).toMatchObject({
        type: 'OAuthFailed',
        data: { reason: 'exchange_failed', providerError: 'invalid_client' },
      });
    } finally {
      await setEnv('STUDIO_OIDC_CLIENT_SECRET', idp.clientSecret);
    }
  });
});

describe('rate limits', () => {
  it('failed callbacks from one address: after 30, a 429 page with Retry-After and no more events', async () => {
    const from = '127.0.0.77';
    for (let i = 0; i < 30; i++) {
      expect(
        (await getFrom(from, `${gw.url}${CALLBACK_PATH}?code=x&state=flood-${i}-0123456789`)).status,
      ).toBe(400);
    }
    const limited = await getFrom(from, `${gw.url}${CALLBACK_PATH}?code=x&state=flood-last-0123456789`);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('content-type')).toMatch(/^text\/html/);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await flowEvents('flood-last-0123456789')).toEqual([]);
    // other addresses are not affected
    expect(
      (await getFrom('127.0.0.78', `${gw.url}${CALLBACK_PATH}?code=x&state=other-0123456789`)).status,
    ).toBe(400);
  });

  it('sign-ins started from one address: after 60 a minute, a 429 with Retry-After', async () => {
    const from = '127.0.0.79';
    const body = { provider: 'oidc', studio_id: studio };
    for (let i = 0; i < 60; i++) {
      expect((await fromAddress(from, `${gw.url}/v1/accounts/oauth/start`, body)).status).toBe(200);
    }
    const limited = await fromAddress(from, `${gw.url}/v1/accounts/oauth/start`, body);
    expectApiError(limited, 429, 'rate_limited');
    expect(Number(limited.headers.get('retry-after'))).toBeLessThanOrEqual(60);
  });
});

describe('accounts and sign-up', () => {
  it('an email the provider does not vouch for is not linked to the account that has it', async () => {
    const alice = (await adminOk(gw, 'GET', `/v1/accounts/list?studio_id=${studio}`)).json.items.find(
      (a: { email: string }) => a.email === 'alice@example.com',
    );
    const started = await start();
    expect((await openCallback(await atProvider(started.authorization_url, 'mallory'))).status).toBe(200);
    const done = await result(started.state);
    expect(done.json.account.id).not.toBe(alice.id);
    expect(done.json.account).toMatchObject({ email: null, name: 'Mallory' });
  });

  it('closed sign-up: no account is created; an admin-made account with the verified email is linked', async () => {
    const closed = await createStudio(gw, 'oidc-closed');
    await setEnv('STUDIO_OAUTH_SIGNUP', 'closed');
    try {
      const refused = await start({ studioId: closed });
      const page = await openCallback(await atProvider(refused.authorization_url, 'bob'));
      expect(page.status).toBe(403);
      expect(page.body).toContain('Ask an admin');
      expect((await result(refused.state)).json).toMatchObject({
        status: 'failed',
        error: { code: 'signup_closed' },
      });

      const made = await adminOk(gw, 'POST', '/v1/accounts/create', {
        studio_id: closed,
        email: 'BOB@example.com',
      });
      const started = await start({ studioId: closed });
      expect((await openCallback(await atProvider(started.authorization_url, 'bob'))).status).toBe(200);
      const done = await result(started.state);
      expect(done.json).toMatchObject({
        status: 'completed',
        account: { id: made.json.id, identities: [{ provider: 'oidc', subject: 'bob' }] },
      });
      const events = await adminOk(gw, 'GET', `/v1/audit/events?stream=account-${made.json.id}`);
      expect(events.json.items.map((e: { type: string }) => e.type)).toEqual([
        'AccountCreated',
        'OAuthLinked',
        'LoggedIn',
      ]);
    } finally {
      await setEnv('STUDIO_OAUTH_SIGNUP', 'open');
    }
  });

  it('sign-up limited to email domains', async () => {
    const domains = await createStudio(gw, 'oidc-domains');
    await setEnv('STUDIO_OAUTH_SIGNUP', 'partner.example');
    try {
      const carol = await start({ studioId: domains });
      expect((await openCallback(await atProvider(carol.authorization_url, 'carol'))).status).toBe(200);
      expect((await result(carol.state)).json).toMatchObject({
        status: 'completed',
        account: { email: 'carol@partner.example' },
      });
      const bob = await start({ studioId: domains });
      expect((await openCallback(await atProvider(bob.authorization_url, 'bob'))).status).toBe(403);
    } finally {
      await setEnv('STUDIO_OAUTH_SIGNUP', 'open');
    }
  });

  it('redirect_to on the allow-list: the callback sends the browser there', async () => {
    const started = await start({ redirectTo: 'http://127.0.0.1:9/signed-in?from=cli' });
    const page = await openCallback(await atProvider(started.authorization_url, 'alice'));
    expect(page.status).toBe(302);
    const location = new URL(page.headers.get('location')!);
    expect(`${location.origin}${location.pathname}`).toBe('http://127.0.0.1:9/signed-in');
    expect(Object.fromEntries(location.searchParams)).toEqual({
      from: 'cli',
      status: 'completed',
      code: expect.stringMatching(/^[A-HJ-NP-Z2-9]{4}-[A-HJ-NP-Z2-9]{4}$/),
    });
    // The app at redirect_to (in the browser that signed in) claims the result with it.
    const claimed = await result(started.state, location.searchParams.get('code'));
    expect(claimed.json).toMatchObject({ status: 'completed', user_token: expect.stringMatching(/^stk_/) });

    const cancelled = await start({ redirectTo: 'http://127.0.0.1:9/signed-in' });
    const back = await openCallback(await cancelAtProvider(new Browser(), cancelled.authorization_url));
    expect(back.status).toBe(302);
    expect(back.headers.get('location')).toBe(
      'http://127.0.0.1:9/signed-in?status=failed&error=provider_error',
    );
  });
});

describe('Google', () => {
  it("is the OpenID flow with Google's issuer and GOOGLE_CLIENT_ID/SECRET (here aimed at the test provider)", async () => {
    expect(GOOGLE_ISSUER).toBe('https://accounts.google.com');
    const google = googleProvider(idp.issuer);
    expect(google.missing(() => undefined)).toEqual(['GOOGLE_CLIENT_ID', 'GOOGLE_CLIENT_SECRET']);
    const values: Record<string, string> = {
      GOOGLE_CLIENT_ID: idp.clientId,
      GOOGLE_CLIENT_SECRET: idp.clientSecret,
    };
    const env = (key: string) => values[key];
    expect(google.missing(env)).toEqual([]);
    const state = client.randomState();
    const codeVerifier = client.randomPKCECodeVerifier();
    const nonce = client.randomNonce();
    const url = await google.authorizationUrl(env, {
      redirectUri: `${gw.url}${CALLBACK_PATH}`,
      state,
      codeChallenge: await client.calculatePKCECodeChallenge(codeVerifier),
      nonce,
    });
    expect(url.origin).toBe(idp.issuer);
    const callback = await atProvider(url.href, 'bob');
    expect(await google.exchange(env, { callbackUrl: callback, state, codeVerifier, nonce })).toEqual({
      subject: 'bob',
      email: 'bob@example.com',
      emailVerified: true,
      name: 'Bob',
    });
    // the nonce is checked: an ID token issued for another nonce is refused
    const other = await atProvider(url.href, 'bob');
    await expect(
      google.exchange(env, { callbackUrl: other, state, codeVerifier, nonce: client.randomNonce() }),
    ).rejects.toMatchObject({ kind: 'code_rejected' });
  });
});

describe('secrets', () => {
  it('no user token, code or state is in the audit log, the log lines, or any other response', async () => {
    expect(Object.keys(seen).filter((k) => k.startsWith('token')).length).toBeGreaterThan(3);
    expect(Object.keys(seen).filter((k) => k.startsWith('code')).length).toBeGreaterThan(3);
    const secrets = { ...seen, clientSecret: idp.clientSecret };
    const audit = await auditLog(gw);
    expect(audit.items.length).toBeGreaterThan(20);
    expect(secretsIn(audit.text, secrets)).toEqual([]);
    expect(gw.logs.length).toBeGreaterThan(20);
    expect(secretsIn(gw.logs.join('\n'), secrets)).toEqual([]);
    // Tokens appear only in the one result response that handed each out; states only in their start.
    const elsewhere = gw.responses
      .filter(
        (r) =>
          !r.path.startsWith('/v1/accounts/oauth/result') && !r.path.startsWith('/v1/accounts/oauth/start'),
      )
      .map((r) => r.text)
      .join('\n');
    expect(secretsIn(elsewhere, secrets)).toEqual([]);
    for (const [label, token] of Object.entries(seen).filter(([k]) => k.startsWith('token'))) {
      expect(gw.responses.filter((r) => r.text.includes(token)).length, label).toBe(1);
    }
  });
});
