import { readFile } from 'node:fs/promises';
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

// The observation pages of the gateway console, driven like a user: usage (charts, CSV, live) and
// the audit log (filters, pages, verify, live).

let gw: TestGateway;
let browser: Browser;
let userToken: string;
let otherToken: string;
const generate = async (token: string, prompt: string) => {
  const res = await gw.api('POST', '/v1/ai/text', { token, body: { model: 'dev/echo', prompt } });
  expect(res.status, res.text).toBe(200);
};

beforeAll(async () => {
  gw = await startTestGateway({ store: 'memory', logLevel: 'silent' });
  browser = await launchBrowser();
  await adminOk(gw, 'POST', '/v1/studios/create', { name: 'Acme', studio_id: 'acme' });
  await adminOk(gw, 'POST', '/v1/studios/create', { name: 'Other', studio_id: 'other' });
  userToken = (await adminOk(gw, 'POST', '/v1/studios/tokens/apply', { studio_id: 'acme' })).json.user_token;
  otherToken = (await adminOk(gw, 'POST', '/v1/studios/tokens/apply', { studio_id: 'other' })).json
    .user_token;
  await adminOk(gw, 'POST', '/v1/ai/prices/upsert', {
    model: 'dev/echo',
    input_per_mtok: 50_000,
    output_per_mtok: 50_000,
  });
  await generate(userToken, 'first words');
  await generate(otherToken, 'words of another studio');
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

async function open(credential: string, link: string, options: { phone?: boolean } = {}) {
  const watched = await openPage(browser, options.phone ? { viewport: PHONE } : {});
  await signIn(watched, credential);
  await watched.page.getByRole('link', { name: link, exact: true }).click();
  return watched;
}

async function expectRefusalShown(page: Page, message: RegExp): Promise<void> {
  const alert = page.getByRole('alert').filter({ hasText: message }).first();
  await alert.waitFor();
  expect(await alert.textContent()).toMatch(/request id [0-9a-f-]{36}/);
}

const requestsShown = (page: Page) => page.locator('[data-field="requests"]').textContent();

describe.skipIf(browserSkip !== undefined)('usage page', () => {
  it('charts spend and tokens by day and model with a text alternative, live, and downloads CSV', async () => {
    const watched = await open(gw.adminKey, 'Usage');
    const { page } = watched;
    await page.getByLabel('Studio', { exact: true }).selectOption('acme');
    await page.getByRole('status').getByText('Live').waitFor();
    await expect.poll(() => requestsShown(page)).toBe('1');
    const today = new Date().toISOString().slice(0, 10);
    const spendChart = page.getByRole('img', { name: /^Spend from/ });
    expect(await spendChart.getAttribute('aria-label')).toMatch(new RegExp(`${today}.*dev/echo \\$`));
    await page.getByRole('img', { name: /^Tokens from/ }).waitFor();
    const row = page.getByRole('row', { name: new RegExp(`${today} dev/echo`) });
    expect(await row.getByRole('cell').nth(1).textContent()).toBe('1');

    // a generation through the API while the page is open: totals, table and charts follow
    await generate(userToken, 'more words');
    await expect.poll(() => requestsShown(page)).toBe('2');
    expect(await row.getByRole('cell').nth(1).textContent()).toBe('2');
    const report = (await adminOk(gw, 'GET', '/v1/ai/usage?studio_id=acme&group_by=day,model')).json;
    expect(report.totals.requests).toBe(2);
    expect(await page.locator('[data-field="cost"]').textContent()).toContain(
      String(report.totals.cost_usd).slice(0, 6),
    );
    await checkPage(watched, 'usage');

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download CSV' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe('usage-acme.csv');
    const csv = await readFile((await download.path())!, 'utf8');
    expect(csv.split(/\r?\n/)[0]).toBe(
      'day,model,requests,failures,input_tokens,output_tokens,avg_latency_ms,cost_usd',
    );
    expect(csv).toContain(`${today},dev/echo,2,`);
    watched.expectNoProblems();
    await watched.context.close();
  });

  it("a user token sees its own studio only, live; its usage follow cannot reach another studio's", async () => {
    const watched = await open(userToken, 'Usage');
    const { page } = watched;
    await page.getByText('Studio acme').first().waitFor();
    expect(await page.getByLabel('Studio', { exact: true }).count()).toBe(0);
    await page.getByRole('status').getByText('Live').waitFor();
    const before = Number(await requestsShown(page));
    await generate(otherToken, 'not shown here');
    await generate(userToken, 'shown here');
    await expect.poll(() => requestsShown(page)).toBe(String(before + 1));
    expect(await page.getByText('dev/echo').count()).toBeGreaterThan(0);

    // the same cookie, asking for another studio's usage (as the page would if it were told to)
    watched.allowStatuses(403);
    const refused = (await page.evaluate(
      `fetch('/v1/audit/events/follow?stream=usage-other', { headers: { 'x-studio-console': '1' } })
         .then(async (r) => ({ status: r.status, body: await r.json() }))`,
    )) as { status: number; body: { error: { code: string; message: string } } };
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({
      code: 'forbidden',
      message: expect.stringContaining('usage-acme'),
    });
    const report = (await page.evaluate(
      `fetch('/v1/ai/usage?studio_id=other', { headers: { 'x-studio-console': '1' } }).then((r) => r.status)`,
    )) as number;
    expect(report).toBe(403);
    // and the page shows a refused date range with the envelope's message and request id
    watched.allowStatuses(400);
    await page.getByLabel('From', { exact: true }).fill('2030-01-02');
    await page.getByLabel('To', { exact: true }).fill('2030-01-01');
    await expectRefusalShown(page, /from must not be after to/);
    watched.expectNoProblems();
    await watched.context.close();
  });

  it('fits a phone', async () => {
    const watched = await open(userToken, 'Usage', { phone: true });
    await watched.page.getByRole('img', { name: /^Spend from/ }).waitFor();
    const overflow = (await watched.page.evaluate(
      'document.documentElement.scrollWidth - window.innerWidth',
    )) as number;
    expect(overflow).toBeLessThanOrEqual(0);
    await screenshot(watched.page, 'usage-phone');
    watched.expectNoProblems();
    await watched.context.close();
  });
});

describe.skipIf(browserSkip !== undefined)('audit log page', () => {
  it('filters, pages, verifies the log, and shows new events live', async () => {
    for (let i = 0; i < 55; i++)
      await adminOk(gw, 'POST', '/v1/studios/create', { name: `Many ${i}`, studio_id: `many-${i}` });
    const watched = await open(gw.adminKey, 'Audit log');
    const { page } = watched;
    await page.getByLabel('Type (several: comma-separated)').fill('StudioCreated');
    await page.getByRole('button', { name: 'Filter' }).click();
    const stored = page.getByRole('table', { name: /^Events after position 0/ });
    // Filtered, the studio's stream shows once (its creation); unfiltered it shows more than once.
    const acmeCells = () => stored.getByRole('cell', { name: 'studio-acme', exact: true }).count();
    await expect.poll(acmeCells, { timeout: 10_000 }).toBe(1);
    expect(await stored.getByRole('row').count()).toBe(51); // a header and a page of 50
    const api = (await adminOk(gw, 'GET', '/v1/audit/events?type=StudioCreated&limit=50')).json;
    await page.getByRole('button', { name: 'Next page' }).click();
    await page.getByRole('table', { name: `Events after position ${api.next_after}` }).waitFor();
    await page.getByRole('cell', { name: 'studio-many-54' }).waitFor();
    await page.getByRole('button', { name: 'Previous page' }).click();
    await expect.poll(acmeCells, { timeout: 10_000 }).toBe(1);

    await page.getByRole('button', { name: 'Verify the log' }).click();
    const verified = page.getByRole('status').filter({ hasText: 'The log is intact' });
    await verified.waitFor();
    const report = (await adminOk(gw, 'GET', '/v1/audit/verify')).json;
    expect(report.ok).toBe(true);
    expect(await verified.textContent()).toMatch(/\d+ events? in \d+ seals?, sealed through position \d+/);

    // live: a studio created through the API appears without a reload; the filter holds
    await page.getByRole('status').getByText('Live').waitFor();
    await adminOk(gw, 'POST', '/v1/studios/create', { name: 'Live one', studio_id: 'live-one' });
    await generate(userToken, 'not a StudioCreated');
    const fresh = page.getByRole('table', { name: 'New events, newest first' });
    await fresh.getByRole('cell', { name: 'studio-live-one' }).waitFor();
    expect(await fresh.getByRole('row').count()).toBe(2);
    await checkPage(watched, 'audit');
    watched.expectNoProblems();
    await watched.context.close();
  });

  it('shows a refused filter with its message and request id', async () => {
    const watched = await open(gw.adminKey, 'Audit log');
    watched.allowStatuses(400);
    const { page } = watched;
    await page.getByLabel('Type (several: comma-separated)').fill('not a type!');
    await page.getByRole('button', { name: 'Filter' }).click();
    await expectRefusalShown(page, /an event type, or several separated by commas/);
    watched.expectNoProblems();
    await watched.context.close();
  });
});
