import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../shared/crypto.ts';
import { adminOk, createStudio } from '../support/admin.ts';
import { expectApiError, sleep, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { auditLog, secretsIn } from './support/accounts.ts';
import { closeAgents, fromAddress } from './support/from-address.ts';

// POST /v1/accounts/login over real HTTP. Rate limits are per client address, so each test that
// fails logins on purpose sends them from its own loopback address (127.0.0.x).

let gw: TestGateway;
const studio = 'login-a';
const password = 'correct horse battery staple';
const passwords: Record<string, string> = { password };
let address = 10;
/** A fresh client address. */
const nextAddress = () => `127.0.0.${++address}`;

const login = (body: unknown, from = '127.0.0.1', token?: string) =>
  fromAddress(from, `${gw.url}/v1/accounts/login`, body, token);

async function account(email: string, options: { studioId?: string; password?: string | null } = {}) {
  const pw = options.password === undefined ? password : options.password;
  if (pw !== null) passwords[email] = pw;
  return (
    await adminOk(gw, 'POST', '/v1/accounts/create', {
      studio_id: options.studioId ?? studio,
      email,
      name: email.split('@')[0],
      ...(pw === null ? {} : { password: pw }),
    })
  ).json as { id: string; email: string };
}

const tokens: string[] = [];

beforeAll(async () => {
  gw = await startTestGateway({ store: 'memory', logLevel: 'trace' });
  await createStudio(gw, studio);
  await account('ada@example.com');
});

afterAll(async () => {
  await closeAgents();
  await gw?.close();
});

describe('the right password', () => {
  it('answers {user_token, account, expires_at}; the token works on user routes for 30 days', async () => {
    const res = await login({ studio_id: studio, email: 'ada@example.com', password });
    expect(res.status, res.text).toBe(200);
    expect(Object.keys(res.json).sort()).toEqual(['account', 'expires_at', 'user_token']);
    expect(res.json.user_token).toMatch(/^stk_[A-Za-z0-9_-]{43}$/);
    tokens.push(res.json.user_token);
    expect(res.json.account).toMatchObject({
      studio_id: studio,
      email: 'ada@example.com',
      name: 'ada',
      status: 'active',
      has_password: true,
      last_login_at: expect.any(String),
    });
    expect(JSON.stringify(res.json.account)).not.toMatch(/hash|sealed|"password"/i);
    const lifetime = Date.parse(res.json.expires_at) - Date.now();
    expect(lifetime).toBeGreaterThan(30 * 24 * 3600_000 - 60_000);
    expect(lifetime).toBeLessThanOrEqual(30 * 24 * 3600_000);

    const token = res.json.user_token;
    expect((await gw.api('GET', '/v1/services', { token })).status).toBe(200);
    expect((await gw.api('GET', '/v1/ai/models', { token })).status).toBe(200);
    const text = await gw.api('POST', '/v1/ai/text', {
      token,
      body: { studio_id: studio, model: 'dev/echo', prompt: 'hi' },
    });
    expect(text.status, text.text).toBe(200);
  });

  it('is recorded as a TokenIssued (hash only) in the studio and a LoggedIn in the account', async () => {
    const token = tokens[0]!;
    const issued = (await adminOk(gw, 'GET', `/v1/audit/events?stream=studio-${studio}&type=TokenIssued`))
      .json.items;
    const event = issued.find((e: { data: { tokenHash: string } }) => e.data.tokenHash === sha256Hex(token));
    expect(event).toBeDefined();
    expect(event.actor).toBe('guest');
    const accountId = (await adminOk(gw, 'GET', `/v1/accounts/list?studio_id=${studio}`)).json.items[0].id;
    const stream = (await adminOk(gw, 'GET', `/v1/audit/events?stream=account-${accountId}`)).json.items;
    expect(stream.map((e: { type: string }) => e.type)).toEqual([
      'AccountCreated',
      'PasswordSet',
      'LoggedIn',
    ]);
    expect(stream[1].data.sealedHash).toMatch(/^v1\./);
    expect(stream[2].data).toMatchObject({ tokenId: event.data.tokenId, method: 'password', provider: null });
  });

  it('the email is matched without case', async () => {
    const res = await login({ studio_id: studio, email: '  ADA@Example.COM ', password });
    expect(res.status, res.text).toBe(200);
    tokens.push(res.json.user_token);
  });

  it('a token in the header must be valid (401) and of the named studio (403)', async () => {
    const body = { studio_id: studio, email: 'ada@example.com', password };
    expectApiError(await login(body, '127.0.0.1', `stk_${'A'.repeat(43)}`), 401, 'unauthenticated');
    await createStudio(gw, 'login-other');
    const other = await adminOk(gw, 'POST', '/v1/studios/tokens/apply', { studio_id: 'login-other' });
    expectApiError(await login(body, '127.0.0.1', other.json.user_token), 403, 'studio_mismatch');
    const own = await login(body, '127.0.0.1', tokens[0]);
    expect(own.status).toBe(200);
    tokens.push(own.json.user_token);
  });
});

describe('wrong credentials all look the same', () => {
  it('wrong password, unknown email, unknown or removed studio, no password: one 401, one message', async () => {
    const from = nextAddress();
    await account('oauth-only@example.com', { password: null });
    await createStudio(gw, 'login-removed');
    await account('gone@example.com', { studioId: 'login-removed' });
    await adminOk(gw, 'POST', '/v1/studios/remove', { studio_id: 'login-removed' });
    const attempts = {
      wrongPassword: { studio_id: studio, email: 'ada@example.com', password: 'not it' },
      unknownEmail: { studio_id: studio, email: 'nobody@example.com', password },
      unknownStudio: { studio_id: 'no-such-studio', email: 'ada@example.com', password },
      removedStudio: { studio_id: 'login-removed', email: 'gone@example.com', password },
      noPassword: { studio_id: studio, email: 'oauth-only@example.com', password },
    };
    const errors: Record<string, unknown> = {};
    for (const [name, body] of Object.entries(attempts)) {
      const error = expectApiError(await login(body, from), 401, 'unauthenticated');
      errors[name] = { type: error.type, code: error.code, message: error.message };
    }
    const distinct = new Set(Object.values(errors).map((e) => JSON.stringify(e)));
    expect(distinct.size, JSON.stringify(errors)).toBe(1);
    expect(errors.wrongPassword).toEqual({
      type: 'authentication_error',
      code: 'unauthenticated',
      message: 'wrong email or password',
    });

    const failed = (
      await adminOk(gw, 'GET', '/v1/audit/events?type=LoginFailed&limit=1000')
    ).json.items.filter((e: { data: { address: string } }) => e.data.address === from);
    expect(failed.map((e: { data: { reason: string } }) => e.data.reason)).toEqual([
      'wrong_password',
      'unknown_account',
      'studio_unavailable',
      'studio_unavailable',
      'no_password',
    ]);
    expect(failed[1]).toMatchObject({
      stream: 'login-failures',
      data: { accountId: null, emailHash: expect.stringMatching(/^[0-9a-f]{64}$/) },
    });
    // A keyed digest: not the plain SHA-256 of the email, which anyone with a list of emails could match.
    expect(failed[1].data.emailHash).not.toBe(sha256Hex('nobody@example.com'));
    expect(failed[0].stream).toMatch(/^account-acc_/);
  });

  it('an unknown email takes about as long as a wrong password (a dummy hash is verified)', async () => {
    // Two accounts so that neither reaches the per-account limit of 5 failures.
    await account('timing1@example.com');
    await account('timing2@example.com');
    const from = nextAddress();
    const time = async (body: unknown) => {
      const t0 = performance.now();
      expect((await login(body, from)).status).toBe(401);
      return performance.now() - t0;
    };
    const wrong: number[] = [];
    const unknown: number[] = [];
    for (let i = 0; i < 8; i++) {
      const email = i % 2 === 0 ? 'timing1@example.com' : 'timing2@example.com';
      wrong.push(await time({ studio_id: studio, email, password: `wrong-${i}` }));
      unknown.push(await time({ studio_id: studio, email: `ghost${i}@example.com`, password: 'x' }));
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    // Without the dummy hash an unknown email would answer in a small fraction of the time.
    expect(median(unknown), `${median(unknown)} vs ${median(wrong)} ms`).toBeGreaterThan(median(wrong) * 0.5);
    expect(median(unknown)).toBeLessThan(median(wrong) * 2);
  });
});

describe('the studio', () => {
  it('paused: the right password is a 403 studio_paused, a wrong one still the same 401', async () => {
    await createStudio(gw, 'login-paused');
    await account('pat@example.com', { studioId: 'login-paused' });
    await adminOk(gw, 'POST', '/v1/studios/pause', { studio_id: 'login-paused' });
    const from = nextAddress();
    expectApiError(
      await login({ studio_id: 'login-paused', email: 'pat@example.com', password }, from),
      403,
      'studio_paused',
    );
    expectApiError(
      await login({ studio_id: 'login-paused', email: 'pat@example.com', password: 'nope' }, from),
      401,
      'unauthenticated',
    );
    await adminOk(gw, 'POST', '/v1/studios/activate', { studio_id: 'login-paused' });
    const res = await login({ studio_id: 'login-paused', email: 'pat@example.com', password }, from);
    expect(res.status).toBe(200);
    tokens.push(res.json.user_token);
  });
});

describe('tokens', () => {
  it('expire: STUDIO_LOGIN_TTL_S=1 (set at run time) makes a token that is refused after a second', async () => {
    await adminOk(gw, 'POST', '/v1/env/upsert', { key: 'STUDIO_LOGIN_TTL_S', value: '1' });
    try {
      const res = await login({ studio_id: studio, email: 'ada@example.com', password });
      expect(res.status).toBe(200);
      tokens.push(res.json.user_token);
      expect(Date.parse(res.json.expires_at) - Date.now()).toBeLessThanOrEqual(1000);
      expect((await gw.api('GET', '/v1/services', { token: res.json.user_token })).status).toBe(200);
      await sleep(Math.max(0, Date.parse(res.json.expires_at) - Date.now()) + 50);
      const error = expectApiError(
        await gw.api('GET', '/v1/services', { token: res.json.user_token }),
        401,
        'unauthenticated',
      );
      expect(error.message).toMatch(/expired/);
    } finally {
      await adminOk(gw, 'POST', '/v1/env/remove', { key: 'STUDIO_LOGIN_TTL_S' });
    }
  });

  it('removing the account revokes the tokens its logins issued, and it cannot log in again', async () => {
    const temp = await account('temp@example.com');
    const res = await login({ studio_id: studio, email: 'temp@example.com', password });
    expect(res.status).toBe(200);
    tokens.push(res.json.user_token);
    await adminOk(gw, 'POST', '/v1/accounts/remove', { account_id: temp.id });
    expectApiError(
      await gw.api('GET', '/v1/services', { token: res.json.user_token }),
      401,
      'unauthenticated',
    );
    expectApiError(
      await login({ studio_id: studio, email: 'temp@example.com', password }, nextAddress()),
      401,
      'unauthenticated',
    );
  });
});

describe('rate limits', () => {
  it('5 failures for one account: the next attempt, even with the right password, is a 429 with Retry-After', async () => {
    await account('target@example.com');
    const from = nextAddress();
    for (let i = 0; i < 5; i++) {
      expectApiError(
        await login({ studio_id: studio, email: 'target@example.com', password: `guess-${i}` }, from),
        401,
        'unauthenticated',
      );
    }
    const limited = await login({ studio_id: studio, email: 'target@example.com', password }, from);
    const error = expectApiError(limited, 429, 'rate_limited');
    expect(error.type).toBe('rate_limit_error');
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(15 * 60);
    // per account, whatever the address
    expectApiError(
      await login({ studio_id: studio, email: 'target@example.com', password }, nextAddress()),
      429,
      'rate_limited',
    );
    // the address itself may still sign in to other accounts
    expect((await login({ studio_id: studio, email: 'ada@example.com', password }, from)).status).toBe(200);
  });

  it('an unknown email is limited exactly like a known one (the limit does not tell them apart)', async () => {
    const from = nextAddress();
    for (let i = 0; i < 5; i++) {
      expect(
        (await login({ studio_id: studio, email: 'nobody-here@example.com', password: `g${i}` }, from))
          .status,
      ).toBe(401);
    }
    expectApiError(
      await login({ studio_id: studio, email: 'nobody-here@example.com', password: 'g' }, from),
      429,
      'rate_limited',
    );
  });

  it('20 failures from one address: it is refused for every account, others are not', async () => {
    const from = nextAddress();
    for (let i = 0; i < 20; i++) {
      expect(
        (await login({ studio_id: studio, email: `spray${i}@example.com`, password: 'password1' }, from))
          .status,
      ).toBe(401);
    }
    const limited = await login({ studio_id: studio, email: 'ada@example.com', password }, from);
    expectApiError(limited, 429, 'rate_limited');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(
      (await login({ studio_id: studio, email: 'ada@example.com', password }, nextAddress())).status,
    ).toBe(200);
  });

  it('a successful login clears the failures of its account', async () => {
    await account('forgetful@example.com');
    const from = nextAddress();
    const attempt = (pw: string) =>
      login({ studio_id: studio, email: 'forgetful@example.com', password: pw }, from);
    for (let i = 0; i < 4; i++) expect((await attempt('wrong')).status).toBe(401);
    const ok = await attempt(password);
    expect(ok.status).toBe(200);
    tokens.push(ok.json.user_token);
    for (let i = 0; i < 4; i++) expect((await attempt('wrong')).status).toBe(401);
    expect((await attempt(password)).status).toBe(200);
  });

  it('429s are not recorded as events (a flood cannot grow the log)', async () => {
    const before = (await adminOk(gw, 'GET', '/v1/audit/events?type=LoginFailed&limit=1000')).json.items
      .length;
    const from = nextAddress();
    for (let i = 0; i < 5; i++)
      await login({ studio_id: studio, email: 'flood@example.com', password: 'x' }, from);
    for (let i = 0; i < 10; i++) {
      expect(
        (await login({ studio_id: studio, email: 'flood@example.com', password: 'x' }, from)).status,
      ).toBe(429);
    }
    const after = (await adminOk(gw, 'GET', '/v1/audit/events?type=LoginFailed&limit=1000')).json.items
      .length;
    expect(after - before).toBe(5);
  });
});

describe('input', () => {
  it.each([
    [{ email: 'ada@example.com', password }, 'studio_id'],
    [{ studio_id: studio, password }, 'email'],
    [{ studio_id: studio, email: 'ada@example.com' }, 'password'],
    [{ studio_id: studio, email: 'ada@example.com', password: '' }, 'password'],
    [{ studio_id: studio, email: 'ada@example.com', password: 'x'.repeat(1025) }, 'password'],
    [{ studio_id: studio, email: 'ada@example.com', password, remember: true }, 'remember'],
  ])('%j is a 400 naming %s', async (body, param) => {
    expect(expectApiError(await login(body), 400, 'validation_failed').param).toBe(param);
  });
});

describe('secrets', () => {
  it('no password or token is in the audit log, the log lines, or any response but its own login', async () => {
    expect(tokens.length).toBeGreaterThan(5);
    const secrets = {
      ...passwords,
      ...Object.fromEntries(tokens.map((t, i) => [`token${i}`, t])),
    };
    const audit = await auditLog(gw);
    expect(audit.items.filter((e) => e.type === 'PasswordSet').length).toBeGreaterThan(5);
    expect(secretsIn(audit.text, secrets)).toEqual([]);
    expect(secretsIn(gw.logs.join('\n'), secrets)).toEqual([]);
    expect(secretsIn(gw.responses.map((r) => r.text).join('\n'), secrets)).toEqual([]);
  });
});
