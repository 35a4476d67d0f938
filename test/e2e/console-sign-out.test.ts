/**
 * Signing out of the console ends the session on the server: a copy of its cookie is refused from
 * then on, and what it had open (a live view following the log) ends within a second. Over https
 * the cookie is `__Host-` and `Secure`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { studioWithToken } from '../support/admin.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  gw = undefined;
});

const CONSOLE = { 'x-studio-console': '1' };

async function signIn(credential: string): Promise<{ cookie: string; setCookie: string }> {
  const res = await fetch(`${gw!.url}/console/session`, {
    method: 'POST',
    headers: { ...CONSOLE, 'content-type': 'application/json' },
    body: JSON.stringify({ credential }),
  });
  expect(res.status).toBe(200);
  const setCookie = res.headers.get('set-cookie') ?? '';
  return { cookie: setCookie.split(';')[0]!, setCookie };
}

const asConsole = (cookie: string, path: string, init: RequestInit = {}) =>
  fetch(`${gw!.url}${path}`, { ...init, headers: { ...CONSOLE, cookie, ...init.headers } });

describe('console sign-out', () => {
  it('ends the session on the server: a copy of the cookie is refused, and its live view ends', async () => {
    gw = await startTestGateway({ store: 'memory', logLevel: 'silent' });
    const { token } = await studioWithToken(gw, 'console-out');
    const { cookie, setCookie } = await signIn(token);
    expect(setCookie).toMatch(/^studio_console=/);
    expect(setCookie).toContain('HttpOnly');
    expect(
      ((await (await asConsole(cookie, '/console/session')).json()) as { signed_in: boolean }).signed_in,
    ).toBe(true);

    const live = await asConsole(cookie, '/v1/audit/events/follow');
    expect(live.status).toBe(200);
    const ended = (async () => {
      let text = '';
      for await (const chunk of live.body as unknown as AsyncIterable<Uint8Array>)
        text += new TextDecoder().decode(chunk);
      return { text, at: performance.now() };
    })();

    const out = await asConsole(cookie, '/console/session/sign-out', { method: 'POST' });
    expect(out.status).toBe(200);
    const signedOutAt = performance.now();
    // The browser forgets it; a copy kept elsewhere is refused all the same.
    expect(
      ((await (await asConsole(cookie, '/console/session')).json()) as { signed_in: boolean }).signed_in,
    ).toBe(false);
    expect((await asConsole(cookie, '/v1/ai/models')).status).toBe(401);
    const { text, at } = await ended;
    expect(at - signedOutAt).toBeLessThan(1_000);
    expect(text.trim().split('\n\n').at(-1)).toMatch(/^event: error\ndata: .*"unauthenticated"/);
  });

  it('the end holds after a restart, read back from the log', async () => {
    gw = await startTestGateway({ store: 'sqlite', logLevel: 'silent' });
    const { cookie } = await signIn(gw.adminKey);
    expect((await asConsole(cookie, '/console/session/sign-out', { method: 'POST' })).status).toBe(200);
    await gw.restart();
    expect(
      ((await (await asConsole(cookie, '/console/session')).json()) as { signed_in: boolean }).signed_in,
    ).toBe(false);
  });

  it('over https (STUDIO_PUBLIC_URL https, TLS ended at a proxy) the cookie is __Host- and Secure', async () => {
    gw = await startTestGateway({
      store: 'memory',
      logLevel: 'silent',
      settings: { STUDIO_PUBLIC_URL: 'https://studio.example.com' },
    });
    const { cookie, setCookie } = await signIn(gw.adminKey);
    expect(setCookie).toMatch(/^__Host-studio_console=/);
    expect(setCookie).toContain('Secure');
    expect(setCookie).toContain('Path=/');
    expect(setCookie).not.toContain('Domain');
    expect(
      ((await (await asConsole(cookie, '/console/session')).json()) as { signed_in: boolean }).signed_in,
    ).toBe(true);
    // The plain name is not read: a cookie a non-secure page set cannot stand in for it.
    const plain = cookie.replace('__Host-studio_console', 'studio_console');
    expect(
      ((await (await asConsole(plain, '/console/session')).json()) as { signed_in: boolean }).signed_in,
    ).toBe(false);
  });
});
