import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../../shared/testing/wait.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import {
  browserSkip,
  checkPage,
  launchBrowser,
  openPage,
  PHONE,
  screenshot,
  seriousViolations,
  type WatchedPage,
} from './support/browser.ts';

let gw: TestGateway;
let browser: Browser;

beforeAll(async () => {
  gw = await startTestGateway({ store: 'memory', logLevel: 'silent' });
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await gw?.close();
});

async function signInAsAdmin(watched: WatchedPage): Promise<void> {
  const { page } = watched;
  await page.goto(`${gw.url}/console/`);
  await page.getByLabel('Admin key or user token').fill(gw.adminKey);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('navigation', { name: 'Console' }).waitFor();
}

describe.skipIf(browserSkip !== undefined)('gateway console: sign-in', () => {
  it('keeps the credential in an HttpOnly cookie only, and signs out', async () => {
    const watched = await openPage(browser);
    const { page, context } = watched;
    await page.goto(`${gw.url}/console/`);
    await checkPage(watched, 'sign-in');
    await signInAsAdmin(watched);
    await expect(page.getByText('Signed in as admin')).toBeDefined();

    // In-page expressions are strings: the test's own types stay Node's.
    const stored = (await page.evaluate(
      '({ local: JSON.stringify({ ...localStorage }), session: JSON.stringify({ ...sessionStorage }), cookie: document.cookie })',
    )) as { local: string; session: string; cookie: string };
    expect(stored.local).not.toContain(gw.adminKey);
    expect(stored.session).not.toContain(gw.adminKey);
    expect(stored.cookie).toBe('');
    const [cookie] = await context.cookies();
    expect(cookie).toMatchObject({ name: 'studio_console', httpOnly: true, sameSite: 'Strict' });
    expect(cookie?.value).not.toContain(gw.adminKey);

    // A reload keeps the session (the cookie), then signing out ends it. A request still under way
    // (the overview's list of studios, held here) ends with the session: not refused after it.
    let release: (() => void) | undefined;
    await page.route('**/v1/studios/list**', async (route) => {
      await new Promise<void>((resolve) => (release = resolve));
      await route.continue().catch(() => undefined); // the page may have aborted it meanwhile
    });
    await page.reload();
    await page.getByRole('navigation', { name: 'Console' }).waitFor();
    await waitUntil(() => release !== undefined, 'the list of studios is asked for');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Admin key or user token').waitFor();
    release!();
    await page.unroute('**/v1/studios/list**');
    await page.reload();
    await page.getByLabel('Admin key or user token').waitFor();
    watched.expectNoProblems();
    await context.close();
  });

  it('shows the envelope message and request id of a refused sign-in', async () => {
    const watched = await openPage(browser);
    watched.allowStatuses(401);
    const { page } = watched;
    await page.goto(`${gw.url}/console/`);
    await page.getByLabel('Admin key or user token').fill('not-the-key');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(
      /unknown credential.*unauthenticated.*request id [0-9a-f-]{36}/,
    );
    watched.expectNoProblems();
    await watched.context.close();
  });

  it('refuses the cookie without the console header (a cross-site request cannot ride it)', async () => {
    const watched = await openPage(browser);
    await signInAsAdmin(watched);
    const [cookie] = await watched.context.cookies();
    const plain = await fetch(`${gw.url}/v1/studios/list`, {
      headers: { cookie: `studio_console=${cookie?.value}` },
    });
    expect(plain.status).toBe(401);
    const withHeader = await fetch(`${gw.url}/v1/studios/list`, {
      headers: { cookie: `studio_console=${cookie?.value}`, 'x-studio-console': '1' },
    });
    expect(withHeader.status).toBe(200);
    const signInWithoutHeader = await fetch(`${gw.url}/console/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ credential: gw.adminKey }),
    });
    expect(signInWithoutHeader.status).toBe(403);
    expect(signInWithoutHeader.headers.get('set-cookie')).toBeNull();
    await watched.context.close();
  });
});

describe.skipIf(browserSkip !== undefined)('gateway console: studios', () => {
  it('creates, pauses with a reason, activates and removes a studio after confirmation', async () => {
    const watched = await openPage(browser);
    const { page } = watched;
    await signInAsAdmin(watched);
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Studios' }).click();
    await page.getByLabel('Name').fill('Acme');
    await page.getByLabel('Id (optional)').fill('acme');
    await page.getByRole('button', { name: 'Create studio' }).click();
    const row = page.getByRole('row', { name: /acme/ });
    await row.getByText('active').waitFor();
    expect((await gw.api('GET', '/v1/studios/list', { token: gw.adminKey })).json.items).toMatchObject([
      { id: 'acme', name: 'Acme', status: 'active' },
    ]);

    await row.getByLabel('Reason to pause acme').fill('unpaid invoice');
    await row.getByRole('button', { name: 'Pause' }).click();
    await row.getByText('unpaid invoice').waitFor();
    await checkPage(watched, 'studios');

    await row.getByRole('button', { name: 'Activate' }).click();
    await row.getByText('active').waitFor();

    await row.getByRole('button', { name: 'Remove' }).click();
    const dialog = page.getByRole('dialog', { name: 'Remove studio acme?' });
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect((await gw.api('GET', '/v1/studios/list', { token: gw.adminKey })).json.items[0].status).toBe(
      'active',
    );
    await row.getByRole('button', { name: 'Remove' }).click();
    await dialog.getByRole('button', { name: 'Remove for good' }).click();
    await row.getByText('removed').first().waitFor();
    expect((await gw.api('GET', '/v1/studios/list', { token: gw.adminKey })).json.items[0].status).toBe(
      'removed',
    );
    watched.expectNoProblems();
    await watched.context.close();
  });

  it('shows a refusal with its request id (a studio id taken)', async () => {
    await gw.api('POST', '/v1/studios/create', {
      token: gw.adminKey,
      body: { name: 'Taken', studio_id: 'taken' },
    });
    const watched = await openPage(browser);
    watched.allowStatuses(409);
    const { page } = watched;
    await signInAsAdmin(watched);
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Studios' }).click();
    await page.getByLabel('Name').fill('Again');
    await page.getByLabel('Id (optional)').fill('taken');
    await page.getByRole('button', { name: 'Create studio' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(/taken.*request id [0-9a-f-]{36}/);
    watched.expectNoProblems();
    await watched.context.close();
  });

  it('works by keyboard alone and at phone width', async () => {
    const watched = await openPage(browser, { viewport: PHONE });
    const { page } = watched;
    await page.goto(`${gw.url}/console/`);
    await page.keyboard.press('Tab'); // the first tab of "how to sign in"
    await page.keyboard.press('Tab'); // …
    await page.getByLabel('Admin key or user token').focus();
    await page.keyboard.type(gw.adminKey);
    await page.keyboard.press('Enter');
    await page.getByRole('navigation', { name: 'Console' }).waitFor();
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Studios' }).focus();
    await page.keyboard.press('Enter');
    await page.getByLabel('Name').focus();
    await page.keyboard.type('Phone');
    await page.keyboard.press('Tab');
    await page.keyboard.type('phone');
    await page.keyboard.press('Enter');
    await page.getByRole('row', { name: /phone/ }).waitFor();
    const overflow = (await page.evaluate(
      'document.documentElement.scrollWidth - window.innerWidth',
    )) as number;
    expect(overflow).toBeLessThanOrEqual(0);
    await screenshot(page, 'studios-phone');
    expect(await seriousViolations(page)).toEqual([]);
    watched.expectNoProblems();
    await watched.context.close();
  });
});
