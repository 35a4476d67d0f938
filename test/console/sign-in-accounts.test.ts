import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CALLBACK_PATH } from '../accounts/support/flow.ts';
import { startOidcProvider, type TestOidcProvider } from '../accounts/support/oidc.ts';
import { adminOk } from '../support/admin.ts';
import { browserSkip, openPage } from './support/browser.ts';
import { consoleFixture } from './support/fixture.ts';

// Signing in to the console with a studio's account: its password, or OAuth through a real OpenID
// provider (oidc-provider on loopback, its development login and consent pages) in Chromium.

const fx = consoleFixture(['acme'], {
  processEnv: { STUDIO_OAUTH_SIGNUP: 'open' },
});
let idp: TestOidcProvider;

beforeAll(async () => {
  idp = await startOidcProvider({ redirectUris: [`${fx.gw.url}${CALLBACK_PATH}`] });
  // Configured at run time through the env store, as an operator would.
  for (const [key, value] of Object.entries({
    STUDIO_PUBLIC_URL: fx.gw.url,
    STUDIO_OAUTH_REDIRECT_ALLOWLIST: fx.gw.url,
    STUDIO_OIDC_ISSUER: idp.issuer,
    STUDIO_OIDC_CLIENT_ID: idp.clientId,
    STUDIO_OIDC_CLIENT_SECRET: idp.clientSecret,
  }))
    await adminOk(fx.gw, 'POST', '/v1/env/upsert', { key, value });
});
afterAll(async () => {
  await idp?.close();
});

describe.skipIf(browserSkip !== undefined)('console sign-in with an account', () => {
  it('with email and password: the studio user is signed in, and a wrong password is refused with its request id', async () => {
    await adminOk(fx.gw, 'POST', '/v1/accounts/create', {
      studio_id: 'acme',
      email: 'ada@example.test',
      password: 'correct horse battery',
    });
    const watched = await openPage(fx.browser);
    watched.allowStatuses(401);
    const { page } = watched;
    await page.goto(`${fx.gw.url}/console/`);
    await page.getByRole('tab', { name: 'Account' }).click();
    await page.getByLabel('Studio').fill('acme');
    await page.getByLabel('Email').fill('ada@example.test');
    await page.getByLabel('Password').fill('wrong password');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(/wrong email or password.*request id [0-9a-f-]{36}/);

    await page.getByLabel('Password').fill('correct horse battery');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('navigation', { name: 'Console' }).waitFor();
    expect(await page.getByText(/Studio acme \(token tok_/).count()).toBe(1);
    // The token the login issued is in the encrypted cookie only.
    const stored = (await page.evaluate(
      '({ local: localStorage.length, session: JSON.stringify({ ...sessionStorage }), cookie: document.cookie })',
    )) as { local: number; session: string; cookie: string };
    expect(stored.local).toBe(0);
    expect(stored.session).not.toMatch(/stu_|tok_/);
    expect(stored.cookie).toBe('');
    watched.expectNoProblems();
    await watched.context.close();
  });

  it('with OAuth: to the provider and back to the console, signed in as the account it made', async () => {
    const watched = await openPage(fx.browser);
    const { page } = watched;
    await page.goto(`${fx.gw.url}/console/`);
    await page.getByRole('tab', { name: 'OAuth' }).click();
    await page.getByLabel('Studio').fill('acme');
    // Only the provider configured is offered.
    expect(await page.getByLabel('Provider').locator('option').allTextContents()).toEqual([
      'OpenID provider',
    ]);
    await page.getByLabel('Provider').selectOption('oidc');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();

    // The provider's own pages: log in as alice (any password), then consent.
    await page.waitForURL((url) => url.origin === idp.issuer);
    await page.locator('input[name="login"]').fill('alice');
    await page.locator('input[name="password"]').fill('whatever');
    await page.locator('button[type="submit"]').click();
    await page.locator('button[type="submit"]').click();

    await page.getByRole('navigation', { name: 'Console' }).waitFor();
    expect(new URL(page.url()).search).toBe(''); // the code left the address bar
    expect(await page.getByText(/Studio acme \(token tok_/).count()).toBe(1);
    const accounts = (await adminOk(fx.gw, 'GET', '/v1/accounts/list?studio_id=acme')).json.items as {
      email: string;
    }[];
    expect(accounts.map((a) => a.email)).toContain('alice@example.com');
    expect((await page.evaluate('JSON.stringify({ ...sessionStorage })')) as string).not.toContain(
      'studio-oauth-state',
    );
    await watched.context.close();
  });
});
