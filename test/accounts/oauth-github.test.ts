import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../shared/crypto.ts';
import { adminOk, createStudio } from '../support/admin.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { auditLog, secretsIn } from './support/accounts.ts';
import { Browser } from './support/browser.ts';
import { CALLBACK_PATH, isCallback, shownSignInCode } from './support/flow.ts';
import { type GithubMock, type GithubPerson, startGithubMock } from './support/github-mock.ts';

// Sign-in with GitHub (plain OAuth 2 and its REST API) against a GitHub-shaped server on loopback,
// on the embedded store, so the last part can restart the gateway between callback and poll.

const octocat: GithubPerson = {
  id: 583231,
  login: 'octocat',
  name: 'The Octocat',
  email: null,
  emails: [
    { email: 'octocat@old.example', primary: false, verified: true },
    { email: 'octocat@github.example', primary: true, verified: true },
  ],
};

let gw: TestGateway;
let github: GithubMock;
let dataDir: string;
const studio = 'gh-studio';
const seen: Record<string, string> = {};

async function start(studioId = studio) {
  const res = await gw.api('POST', '/v1/accounts/oauth/start', {
    body: { provider: 'github', studio_id: studioId },
  });
  expect(res.status, res.text).toBe(200);
  seen[`state${Object.keys(seen).length}`] = res.json.state;
  return res.json as { authorization_url: string; state: string };
}

/** The browser at GitHub: the mock signs in at once and sends it back to the callback. */
async function atGithub(authorizationUrl: string): Promise<URL> {
  const back = await new Browser().visit(authorizationUrl, { stopAt: isCallback });
  expect(back.stopped).toBe(true);
  const code = back.url.searchParams.get('code');
  if (code) seen[`code${Object.keys(seen).length}`] = code;
  return back.url;
}

/** The one-time code each completed callback showed, by state. */
const codes = new Map<string, string>();

async function openCallback(url: URL) {
  const res = await fetch(url, { redirect: 'manual' });
  const page = { status: res.status, body: await res.text() };
  const code = shownSignInCode(page);
  const state = url.searchParams.get('state');
  if (code && state) {
    codes.set(state, code);
    seen[`signin-code${Object.keys(seen).length}`] = code;
  }
  return page;
}

async function result(state: string) {
  const code = codes.get(state);
  const res = await gw.api(
    'GET',
    `/v1/accounts/oauth/result?state=${encodeURIComponent(state)}${code ? `&code=${code}` : ''}`,
  );
  if (res.json?.user_token) seen[`token${Object.keys(seen).length}`] = res.json.user_token;
  return res;
}

const lastFailure = async (state: string) =>
  (await adminOk(gw, 'GET', `/v1/audit/events?stream=oauth-${sha256Hex(state)}`)).json.items.at(-1);

beforeAll(async () => {
  github = await startGithubMock(octocat);
  dataDir = await mkdtemp(join(tmpdir(), 'studio-accounts-gh-'));
  gw = await startTestGateway({
    store: 'sqlite',
    dataDir,
    logLevel: 'trace',
    processEnv: { ...github.env(), STUDIO_OAUTH_SIGNUP: 'open' },
  });
  await adminOk(gw, 'POST', '/v1/env/upsert', { key: 'STUDIO_PUBLIC_URL', value: gw.url });
  await createStudio(gw, studio);
});

afterAll(async () => {
  await gw?.close();
  await github?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('GitHub sign-in', () => {
  it('start → GitHub → callback → result: an account with the primary verified email', async () => {
    const started = await start();
    const url = new URL(started.authorization_url);
    expect(`${url.origin}${url.pathname}`).toBe(`${github.url}/login/oauth/authorize`);
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      client_id: github.clientId,
      redirect_uri: `${gw.url}${CALLBACK_PATH}`,
      scope: 'read:user user:email',
      state: started.state,
      code_challenge_method: 'S256',
    });
    const page = await openCallback(await atGithub(started.authorization_url));
    expect(page.status, page.body).toBe(200);
    expect(page.body).toContain('Signed in');
    const done = await result(started.state);
    expect(done.json).toMatchObject({
      status: 'completed',
      provider: 'github',
      account: {
        email: 'octocat@github.example',
        name: 'The Octocat',
        identities: [{ provider: 'github', subject: '583231' }],
      },
    });
    expect((await gw.api('GET', '/v1/ai/models', { token: done.json.user_token })).status).toBe(200);
    expect(github.calls).toEqual(
      expect.arrayContaining([
        '/login/oauth/authorize',
        '/login/oauth/access_token',
        '/user',
        '/user/emails',
      ]),
    );
  });

  it('no verified email: the account is created without one', async () => {
    github.person = {
      id: 99,
      login: 'unverified',
      name: null,
      email: 'public@example.com',
      emails: [{ email: 'public@example.com', primary: true, verified: false }],
    };
    try {
      const started = await start();
      expect((await openCallback(await atGithub(started.authorization_url))).status).toBe(200);
      expect((await result(started.state)).json.account).toMatchObject({
        email: null,
        name: 'unverified',
        identities: [{ provider: 'github', subject: '99' }],
      });
    } finally {
      github.person = octocat;
    }
  });

  it('a forged code: GitHub answers bad_verification_code, the flow fails with code_rejected', async () => {
    const started = await start();
    const callback = await atGithub(started.authorization_url);
    callback.searchParams.set('code', 'forged-code');
    const page = await openCallback(callback);
    expect(page.status).toBe(400);
    expect((await result(started.state)).json).toMatchObject({
      status: 'failed',
      error: { code: 'code_rejected' },
    });
    expect(await lastFailure(started.state)).toMatchObject({
      type: 'OAuthFailed',
      data: { reason: 'code_rejected', providerError: 'bad_verification_code' },
    });
  });

  it('a code of another flow: its PKCE challenge does not match this verifier', async () => {
    const victim = await start();
    const attacker = await start();
    const callback = await atGithub(attacker.authorization_url);
    callback.searchParams.set('state', victim.state);
    expect((await openCallback(callback)).status).toBe(400);
    expect((await result(victim.state)).json).toMatchObject({
      status: 'failed',
      error: { code: 'code_rejected' },
    });
  });

  it('GitHub unreachable at the exchange: a 502 page and exchange_failed, never a 500', async () => {
    const started = await start();
    const callback = await atGithub(started.authorization_url);
    const url = github.url;
    await adminOk(gw, 'POST', '/v1/env/upsert', { key: 'GITHUB_OAUTH_URL', value: 'http://127.0.0.1:9' });
    try {
      const page = await openCallback(callback);
      expect(page.status).toBe(502);
      expect(page.body).toContain('could not be reached');
      expect((await result(started.state)).json).toMatchObject({
        status: 'failed',
        error: { code: 'exchange_failed' },
      });
    } finally {
      await adminOk(gw, 'POST', '/v1/env/upsert', { key: 'GITHUB_OAUTH_URL', value: url });
    }
  });
});

describe('a completed sign-in survives a restart', () => {
  it('callback, restart, then the poll still gets the token once', async () => {
    const started = await start();
    expect((await openCallback(await atGithub(started.authorization_url))).status).toBe(200);
    // after a restart the gateway listens on another port: the claim needs neither the port nor GitHub
    await gw.restart();
    const done = await result(started.state);
    expect(done.json).toMatchObject({ status: 'completed', account: { email: 'octocat@github.example' } });
    expect(done.json.user_token).toMatch(/^stk_/);
    expect((await gw.api('GET', '/v1/services', { token: done.json.user_token })).status).toBe(200);
    expect((await result(started.state)).json).toMatchObject({ status: 'completed', claimed: true });
    await gw.restart();
    expect((await result(started.state)).json.user_token).toBeUndefined();
    expect((await gw.api('GET', '/v1/services', { token: done.json.user_token })).status).toBe(200);
  });

  it('no token, code, state or client secret is in the log or in storage', async () => {
    const secrets = { ...seen, clientSecret: github.clientSecret };
    expect(Object.keys(seen).filter((k) => k.startsWith('token')).length).toBeGreaterThanOrEqual(2);
    const audit = await auditLog(gw);
    expect(secretsIn(audit.text, secrets)).toEqual([]);
    expect(secretsIn(gw.logs.join('\n'), secrets)).toEqual([]);
    expect(audit.items.some((e) => e.type === 'EnvVariableSet' && e.data.key === 'GITHUB_OAUTH_URL')).toBe(
      true,
    );
    // Every byte of the data directory, as a clean stop leaves it (the WAL folded into the log's file).
    await gw.restart();
    const entries = await readdir(dataDir, { withFileTypes: true, recursive: true });
    const files = entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
    expect(files).toContain(join(dataDir, 'log.sqlite'));
    const stored = Buffer.concat(await Promise.all(files.map((f) => readFile(f)))).toString('latin1');
    expect(stored).toContain('octocat@github.example');
    expect(secretsIn(stored, secrets)).toEqual([]);
  });

  it('the accounts read model is the same after a restart', async () => {
    const before = (await adminOk(gw, 'GET', `/v1/accounts/list?studio_id=${studio}`)).json.items;
    expect(before.length).toBeGreaterThanOrEqual(2);
    await gw.restart();
    const after = (await adminOk(gw, 'GET', `/v1/accounts/list?studio_id=${studio}`)).json.items;
    expect(after).toEqual(before);
  });
});
