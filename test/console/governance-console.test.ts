import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminOk } from '../support/admin.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import {
  browserSkip,
  checkPage,
  launchBrowser,
  openPage,
  PHONE,
  screenshot,
  type WatchedPage,
} from './support/browser.ts';

// The governance pages of the gateway console, driven like a user: budgets, rate limits, routes.

let gw: TestGateway;
let browser: Browser;
let userToken: string;

beforeAll(async () => {
  gw = await startTestGateway({ store: 'memory', logLevel: 'silent' });
  browser = await launchBrowser();
  await adminOk(gw, 'POST', '/v1/studios/create', { name: 'Acme', studio_id: 'acme' });
  userToken = (await adminOk(gw, 'POST', '/v1/studios/tokens/apply', { studio_id: 'acme' })).json.user_token;
  // dev/echo costs something, so spending shows
  await adminOk(gw, 'POST', '/v1/ai/prices/upsert', {
    model: 'dev/echo',
    input_per_mtok: 50_000,
    output_per_mtok: 50_000,
  });
});
afterAll(async () => {
  await browser?.close();
  await gw?.close();
});

async function signIn(watched: WatchedPage, credential: string): Promise<void> {
  const { page } = watched;
  await page.goto(`${gw.url}/console/`);
  await page.getByLabel('Admin key or user token').fill(credential);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('navigation', { name: 'Console' }).waitFor();
}

async function openAs(path: string, options: { phone?: boolean } = {}) {
  const watched = await openPage(browser, options.phone ? { viewport: PHONE } : {});
  await signIn(watched, gw.adminKey);
  await watched.page
    .getByRole('navigation', { name: 'Console' })
    .getByRole('link', { name: path, exact: true })
    .click();
  return watched;
}

async function expectRefusalShown(page: Page, message: RegExp): Promise<void> {
  const alert = page.getByRole('alert');
  await alert.waitFor();
  const text = (await alert.textContent()) ?? '';
  expect(text).toMatch(message);
  expect(text).toMatch(/request id [0-9a-f-]{36}/);
}

const generate = async (prompt: string) => {
  const res = await gw.api('POST', '/v1/ai/text', {
    token: userToken,
    body: { model: 'dev/echo', prompt },
  });
  expect(res.status, res.text).toBe(200);
};

describe.skipIf(browserSkip !== undefined)('budgets page', () => {
  it('sets a budget, shows what is spent live as generations happen, removes it after confirming', async () => {
    const watched = await openAs('Budgets');
    const { page } = watched;
    await page.getByRole('heading', { name: 'Budgets' }).waitFor();
    await page.getByLabel('Studio', { exact: true }).selectOption('acme');
    await page.getByLabel('Amount (USD)').fill('25');
    await page.getByLabel('Window').selectOption('month');
    await page.getByLabel('Mode').selectOption('soft');
    await page.getByRole('button', { name: 'Set budget' }).click();
    const row = page.getByRole('row', { name: /the studio/ });
    await row.getByText('$25.00').first().waitFor();
    expect((await adminOk(gw, 'GET', '/v1/studios/budgets/list?studio_id=acme')).json.items).toMatchObject([
      { amount_usd: 25, window: 'month', mode: 'soft', spent_usd: 0 },
    ]);
    await page.getByRole('status').getByText('Live').waitFor();
    const spentBefore = await row.locator('[data-field="spent"]').textContent();

    // a generation through the API while the page is open: the page shows it without a reload
    await generate('a prompt that costs something');
    const spent = (await adminOk(gw, 'GET', '/v1/studios/budgets/list?studio_id=acme')).json.items[0]
      .spent_usd as number;
    expect(spent).toBeGreaterThan(0);
    await expect.poll(() => row.locator('[data-field="spent"]').textContent()).not.toBe(spentBefore);
    expect(await row.locator('[data-field="remaining"]').textContent()).toBe(
      (25 - spent).toLocaleString('en-US', {
        style: 'currency',
        currency: 'USD',
        minimumFractionDigits: 2,
        maximumFractionDigits: 6,
      }),
    );
    await checkPage(watched, 'budgets');

    await row.getByRole('button', { name: 'Remove' }).click();
    const dialog = page.getByRole('dialog', { name: 'Remove the budget of the studio?' });
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect((await adminOk(gw, 'GET', '/v1/studios/budgets/list?studio_id=acme')).json.items).toHaveLength(1);
    await row.getByRole('button', { name: 'Remove' }).click();
    await dialog.getByRole('button', { name: 'Remove budget' }).click();
    await row.waitFor({ state: 'detached' });
    expect((await adminOk(gw, 'GET', '/v1/studios/budgets/list?studio_id=acme')).json.items).toEqual([]);
    watched.expectNoProblems();
    await watched.context.close();
  });

  it("sets a token's budget by picking the token by name (the whole studio by default)", async () => {
    const token = (
      await adminOk(gw, 'POST', '/v1/studios/tokens/apply', { studio_id: 'acme', name: 'reporting bot' })
    ).json.token as { id: string; prefix: string };
    const revoked = (
      await adminOk(gw, 'POST', '/v1/studios/tokens/apply', { studio_id: 'acme', name: 'old' })
    ).json.token as { id: string };
    await adminOk(gw, 'POST', '/v1/studios/tokens/revoke', { token_id: revoked.id });
    const watched = await openAs('Budgets');
    const { page } = watched;
    await page.getByLabel('Studio', { exact: true }).selectOption('acme');
    const scope = page.getByLabel('Applies to');
    await scope.locator('option', { hasText: 'reporting bot' }).waitFor({ state: 'attached' });
    expect(await scope.inputValue()).toBe(''); // the whole studio
    const options = await scope.locator('option').allTextContents();
    expect(options[0]).toBe('Whole studio');
    expect(options).toContain(`Token reporting bot (${token.prefix}…)`);
    expect(options.some((o) => o.includes('old'))).toBe(false); // a revoked token takes no budget
    await scope.selectOption({ label: `Token reporting bot (${token.prefix}…)` });
    await page.getByLabel('Amount (USD)').fill('3');
    await page.getByRole('button', { name: 'Set budget' }).click();
    const row = page.getByRole('row', { name: /reporting bot/ });
    await row.getByText('$3.00').first().waitFor();
    expect((await adminOk(gw, 'GET', '/v1/studios/budgets/list?studio_id=acme')).json.items).toMatchObject([
      { token_id: token.id, amount_usd: 3 },
    ]);
    await row.getByRole('button', { name: 'Remove' }).click();
    await page
      .getByRole('dialog', { name: `Remove the budget of token reporting bot (${token.id})?` })
      .getByRole('button', { name: 'Remove budget' })
      .click();
    await row.waitFor({ state: 'detached' });
    watched.expectNoProblems();
    await watched.context.close();
  });

  it('shows a refusal with its message and request id (an amount beyond what a budget may be)', async () => {
    const watched = await openAs('Budgets');
    watched.allowStatuses(400);
    const { page } = watched;
    await page.getByLabel('Studio', { exact: true }).selectOption('acme');
    await page.getByLabel('Amount (USD)').fill('2000000000');
    await page.getByRole('button', { name: 'Set budget' }).click();
    await expectRefusalShown(page, /amount_usd/);
    watched.expectNoProblems();
    await watched.context.close();
  });
});

describe.skipIf(browserSkip !== undefined)('rate limits page', () => {
  it('sets limits of the studio, lists them, removes them after confirming; a refusal is shown', async () => {
    const watched = await openAs('Rate limits');
    watched.allowStatuses(400);
    const { page } = watched;
    await page.getByLabel('Studio', { exact: true }).selectOption('acme');
    expect(await page.getByLabel('Applies to').inputValue()).toBe(''); // the whole studio
    await page.getByLabel('Requests per minute').fill('600');
    await page.getByLabel('At once').fill('4');
    await page.getByRole('button', { name: 'Set limits' }).click();
    const row = page.getByRole('row', { name: /the studio/ });
    await row.getByText('600').waitFor();
    expect((await adminOk(gw, 'GET', '/v1/studios/limits/list?studio_id=acme')).json.items).toMatchObject([
      { token_id: null, rpm: 600, tpm: null, max_concurrent: 4 },
    ]);
    await checkPage(watched, 'limits');

    // nothing to set: the gateway says so
    await page.getByLabel('Requests per minute').fill('');
    await page.getByLabel('At once').fill('');
    await page.getByRole('button', { name: 'Set limits' }).click();
    await expectRefusalShown(page, /at least one of rpm, tpm and max_concurrent/);

    await row.getByRole('button', { name: 'Remove' }).click();
    await page
      .getByRole('dialog', { name: 'Remove the limits of the studio?' })
      .getByRole('button', { name: 'Remove limits' })
      .click();
    await row.waitFor({ state: 'detached' });
    expect((await adminOk(gw, 'GET', '/v1/studios/limits/list?studio_id=acme')).json.items).toEqual([]);
    watched.expectNoProblems();
    await watched.context.close();
  });
});

describe.skipIf(browserSkip !== undefined)('routes page', () => {
  it("saves a route, shows each target's health, edits and removes it; a refusal is shown", async () => {
    const watched = await openAs('Routes');
    watched.allowStatuses(400);
    const { page } = watched;
    await page.getByLabel('Route id').fill('team/fast');
    await page.getByLabel('Strategy').selectOption('weighted');
    await page.getByLabel(/^Targets/).fill('dev/echo 3\n');
    await page.getByRole('button', { name: 'Save route' }).click();
    const row = page.getByRole('row', { name: /team\/fast/ });
    await row.getByText('healthy').waitFor();
    await row.getByText('× 3').waitFor();
    expect((await adminOk(gw, 'GET', '/v1/ai/routes/list')).json.items).toMatchObject([
      {
        id: 'team/fast',
        strategy: 'weighted',
        targets: [{ model: 'dev/echo', weight: 3, state: 'healthy' }],
      },
    ]);
    await checkPage(watched, 'routes');

    // a model the catalog does not have: the gateway's message, in the page
    await page.getByLabel('Route id').fill('team/broken');
    await page.getByLabel(/^Targets/).fill('nowhere/model');
    await page.getByRole('button', { name: 'Save route' }).click();
    await expectRefusalShown(page, /nowhere\/model.*not in the catalog/);

    await row.getByRole('button', { name: 'Edit team/fast' }).click();
    expect(await page.getByLabel(/^Targets/).inputValue()).toBe('dev/echo 3');
    await page.getByLabel('Strategy').selectOption('fallback');
    await page.getByRole('button', { name: 'Save route' }).click();
    await row.getByRole('cell', { name: 'fallback' }).waitFor();
    expect((await adminOk(gw, 'GET', '/v1/ai/routes/list')).json.items[0].strategy).toBe('fallback');

    await row.getByRole('button', { name: 'Remove team/fast' }).click();
    await page
      .getByRole('dialog', { name: 'Remove route team/fast?' })
      .getByRole('button', { name: 'Remove route' })
      .click();
    await row.waitFor({ state: 'detached' });
    expect((await adminOk(gw, 'GET', '/v1/ai/routes/list')).json.items).toEqual([]);
    watched.expectNoProblems();
    await watched.context.close();
  });

  it('fits a phone', async () => {
    await adminOk(gw, 'POST', '/v1/ai/routes/upsert', {
      id: 'phone/route',
      strategy: 'fallback',
      targets: [{ model: 'dev/echo' }],
    });
    const watched = await openAs('Routes', { phone: true });
    await watched.page.getByRole('row', { name: /phone\/route/ }).waitFor();
    const overflow = (await watched.page.evaluate(
      'document.documentElement.scrollWidth - window.innerWidth',
    )) as number;
    expect(overflow).toBeLessThanOrEqual(0);
    await screenshot(watched.page, 'routes-phone');
    watched.expectNoProblems();
    await watched.context.close();
  });
});
