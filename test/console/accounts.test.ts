import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { browserSkip, checkPage, openPage, PHONE } from './support/browser.ts';
import {
  alertText,
  consoleFixture,
  finishAtPhoneWidth,
  openFromMenu,
  REQUEST_ID,
  signIn,
} from './support/fixture.ts';

const fx = consoleFixture(['acme', 'globex']);

interface Account {
  id: string;
  email: string;
  name: string | null;
  status: string;
  has_password: boolean;
}
const accountsOf = async (studioId: string) =>
  (await fx.gw.api('GET', `/v1/accounts/list?studio_id=${studioId}`, { token: fx.gw.adminKey })).json
    .items as Account[];

const createForm = (page: Page) => page.getByRole('form', { name: 'Create an account' });

async function fillAccount(page: Page, email: string, extra: { name?: string; password?: string } = {}) {
  await createForm(page).getByLabel('Email').fill(email);
  if (extra.name !== undefined) await createForm(page).getByLabel(/^Name/).fill(extra.name);
  if (extra.password !== undefined)
    await createForm(page)
      .getByLabel(/^Password/)
      .fill(extra.password);
  await createForm(page).getByRole('button', { name: 'Create account' }).click();
}

describe.skipIf(browserSkip !== undefined)('console: accounts', () => {
  it('creates accounts in the chosen studio and removes one after a confirmation', async () => {
    const watched = await openPage(fx.browser);
    const { page } = watched;
    await signIn(watched, fx.gw, fx.gw.adminKey);
    await openFromMenu(watched, 'Accounts');
    await page.getByLabel('Studio').selectOption('globex');
    await page.getByText('No accounts for globex yet.').waitFor();

    await fillAccount(page, 'ada@example.test', { name: 'Ada', password: 'correct horse battery' });
    const ada = page.getByRole('row', { name: /ada@example\.test/ });
    await ada.getByText('password').waitFor();
    await fillAccount(page, 'oauth-only@example.test');
    const oauthOnly = page.getByRole('row', { name: /oauth-only@example\.test/ });
    await oauthOnly.getByText('none yet').waitFor();
    expect(await accountsOf('globex')).toMatchObject([
      { email: 'ada@example.test', name: 'Ada', status: 'active', has_password: true },
      { email: 'oauth-only@example.test', name: null, status: 'active', has_password: false },
    ]);
    expect(await accountsOf('acme')).toEqual([]);

    // The password works: the account signs in (and the sign-in shows in the list).
    const login = await fx.gw.api('POST', '/v1/accounts/login', {
      body: { studio_id: 'globex', email: 'ada@example.test', password: 'correct horse battery' },
    });
    expect(login.status).toBe(200);
    await page.getByLabel('Studio').selectOption('acme');
    await page.getByLabel('Studio').selectOption('globex');
    await ada.filter({ hasNotText: 'never' }).waitFor();
    await checkPage(watched, 'accounts');

    await oauthOnly.getByRole('button', { name: 'Remove oauth-only@example.test' }).click();
    const dialog = page.getByRole('dialog', { name: 'Remove account oauth-only@example.test?' });
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect((await accountsOf('globex'))[1]?.status).toBe('active');
    await oauthOnly.getByRole('button', { name: 'Remove oauth-only@example.test' }).click();
    await dialog.getByRole('button', { name: 'Remove account' }).click();
    await oauthOnly.getByText('removed').waitFor();
    expect(await oauthOnly.getByRole('button').count()).toBe(0);
    expect((await accountsOf('globex'))[1]?.status).toBe('removed');
    watched.expectNoProblems();
    await watched.context.close();
  });

  it('shows the refusals of an email already taken and of a short password, with their request ids', async () => {
    await fx.gw.api('POST', '/v1/accounts/create', {
      token: fx.gw.adminKey,
      body: { studio_id: 'acme', email: 'taken@example.test' },
    });
    const watched = await openPage(fx.browser);
    watched.allowStatuses(400, 409);
    const { page } = watched;
    await signIn(watched, fx.gw, fx.gw.adminKey);
    await openFromMenu(watched, 'Accounts');
    await page.getByLabel('Studio').selectOption('acme');
    await page.getByRole('row', { name: /taken@example\.test/ }).waitFor();

    await fillAccount(page, 'TAKEN@example.test');
    let text = await alertText(watched);
    expect(text).toMatch(/already has an account with this email.*conflict/);
    expect(text).toMatch(REQUEST_ID);

    await fillAccount(page, 'short@example.test', { password: 'short' });
    await page.getByRole('alert').filter({ hasText: 'validation_failed' }).waitFor();
    text = await alertText(watched);
    expect(text).toMatch(REQUEST_ID);
    expect((await accountsOf('acme')).map((a) => a.email)).toEqual(['taken@example.test']);
    watched.expectNoProblems();
    await watched.context.close();
  });

  it('fits a phone', async () => {
    const watched = await openPage(fx.browser, { viewport: PHONE });
    const { page } = watched;
    await signIn(watched, fx.gw, fx.gw.adminKey);
    await openFromMenu(watched, 'Accounts');
    await page.getByLabel('Studio').selectOption('acme');
    await fillAccount(page, 'phone@example.test', { name: 'On the go' });
    await page.getByRole('row', { name: /phone@example\.test/ }).waitFor();
    await finishAtPhoneWidth(watched, 'accounts-phone');
  });
});
