import { readFile } from 'node:fs/promises';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { adminOk } from '../support/admin.ts';
import type { ApiResponse } from '../support/gateway.ts';
import { browserSkip, checkPage, openPage, PHONE, screenshot, type WatchedPage } from './support/browser.ts';
import { consoleFixture, finishAtPhoneWidth, issueToken, openFromMenu, signIn } from './support/fixture.ts';

// The request log in the gateway console: the Overview (totals, error rate, latency per model, top
// tokens), the Requests page (newest first, filters, a request's details with its captured bodies,
// live tail) and the Tokens page's last use and spend, from requests made through the gateway.

const fx = consoleFixture(['acme', 'globex', 'bulk', 'initech']);
const BULK = 55;
let app: { secret: string; id: string };
let limited: { secret: string; id: string };
let other: { secret: string; id: string };
let bulk: { secret: string; id: string };

const generate = (token: string, model: string, prompt: string): Promise<ApiResponse> =>
  fx.gw.api('POST', '/v1/ai/text', { token, body: { model, prompt } });

/** The request log of acme as the API answers it (refusals are recorded a moment after the answer). */
const acmeLog = async () => (await adminOk(fx.gw, 'GET', '/v1/ai/requests?studio_id=acme')).json;

beforeAll(async () => {
  app = await issueToken(fx.gw, 'acme', { name: 'app' });
  limited = await issueToken(fx.gw, 'acme', { name: 'limited' });
  other = await issueToken(fx.gw, 'globex', { name: 'globex app' });
  bulk = await issueToken(fx.gw, 'bulk', { name: 'batch job' });
  await adminOk(fx.gw, 'POST', '/v1/ai/prices/upsert', {
    model: 'dev/echo',
    input_per_mtok: 50_000,
    output_per_mtok: 50_000,
  });
  expect((await generate(app.secret, 'dev/echo', 'first words')).status).toBe(200);
  expect((await generate(app.secret, 'dev/echo', 'second words')).status).toBe(200);
  expect((await generate(app.secret, 'dev/no-such-model', 'nobody answers')).status).toBe(404);
  await adminOk(fx.gw, 'POST', '/v1/studios/limits/set', { studio_id: 'acme', token_id: limited.id, rpm: 1 });
  // A soft budget the one answered request of `limited` spends most of.
  await adminOk(fx.gw, 'POST', '/v1/studios/budgets/set', {
    studio_id: 'acme',
    token_id: limited.id,
    amount_usd: 0.4,
    window: 'day',
    mode: 'soft',
  });
  expect((await generate(limited.secret, 'dev/echo', 'within the limit')).status).toBe(200);
  expect((await generate(limited.secret, 'dev/echo', 'over the limit')).status).toBe(429);
  expect((await generate(other.secret, 'dev/echo', 'another studio')).status).toBe(200);
  for (let i = 0; i < BULK; i++)
    expect((await generate(bulk.secret, 'dev/echo', `batch item ${i}`)).status).toBe(200);
  await vi.waitFor(async () => expect((await acmeLog()).items).toHaveLength(5));
});

/** Dollars as the console shows them. */
const usd$ = (usd: number) =>
  usd.toLocaleString('en-US', {
    style: 'currency',
    currency: 'USD',
    minimumFractionDigits: 2,
    maximumFractionDigits: 6,
  });

const field = (watched: WatchedPage, name: string) =>
  watched.page.locator(`[data-field="${name}"]`).first().textContent();

/** The request ids of the Requests table, top to bottom. */
const shownIds = (watched: WatchedPage) =>
  watched.page
    .locator('tr[data-request-id]')
    .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-request-id')));

describe.skipIf(browserSkip !== undefined)('console: overview and request log', () => {
  it("the admin's overview: totals, error rate, latency per model and top tokens, of all studios or one", async () => {
    const watched = await openPage(fx.browser);
    const { page } = watched;
    await signIn(watched, fx.gw, fx.gw.adminKey);
    // The first page of the menu, where the console opens.
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    const menu = page.getByRole('navigation', { name: 'Console' }).getByRole('link');
    expect((await menu.allTextContents()).slice(0, 2)).toEqual(['Overview', 'Requests']);

    const all = (await adminOk(fx.gw, 'GET', '/v1/ai/requests/summary')).json;
    expect(all.requests).toBe(5 + 1 + BULK);
    await expect.poll(() => field(watched, 'requests')).toBe(String(all.requests));
    await page.getByLabel('Studio', { exact: true }).selectOption('acme');
    await expect.poll(() => field(watched, 'requests')).toBe('5');
    const summary = (await adminOk(fx.gw, 'GET', '/v1/ai/requests/summary?studio_id=acme')).json;
    expect(summary).toMatchObject({ requests: 5, answered: 3, refused: 2, failed: 0, error_rate: 0.4 });
    expect(await field(watched, 'answered')).toBe('3');
    expect(await field(watched, 'refused')).toBe('2');
    expect(await field(watched, 'error-rate')).toBe('40%');

    const models = page.getByRole('table', { name: /models?,/ });
    const echo = models.getByRole('row', { name: /^dev\/echo/ });
    // The refusal over the rate limit counts against the model it asked for.
    expect(await echo.getByRole('cell').nth(0).textContent()).toBe('4');
    expect(await echo.getByRole('cell').nth(1).textContent()).toBe('1');
    expect(await echo.getByRole('cell').nth(2).textContent()).toMatch(/\d+ ms|\d s/);
    await models.getByRole('row', { name: /^dev\/no-such-model/ }).waitFor();

    const top = page.getByRole('table', { name: /spent most/ });
    const first = top.getByRole('row').nth(1);
    expect(await first.getByRole('rowheader').textContent()).toBe(`app ${app.id}`);
    expect(summary.top_tokens[0].token_id).toBe(app.id);
    await page
      .getByRole('img', { name: /^Requests per hour, last 24 hours: 5 requests, 2 failures/ })
      .waitFor();
    const budget = (await adminOk(fx.gw, 'GET', '/v1/studios/budgets/list?studio_id=acme')).json.items[0];
    expect(budget.spent_usd / budget.amount_usd).toBeGreaterThanOrEqual(0.8);
    const near = page.getByRole('table', { name: /^1 budget at 80% or more of its amount/ });
    const nearRow = near.getByRole('row', { name: /^acme limited day/ });
    expect(await nearRow.getByRole('cell').nth(4).textContent()).toBe(
      `${((budget.spent_usd / budget.amount_usd) * 100).toLocaleString('en-US', { maximumFractionDigits: 0 })}%`,
    );
    await checkPage(watched, 'overview');

    // A week shows the same requests by day.
    await page.getByLabel('Time range').selectOption('7d');
    await page.getByRole('img', { name: /^Requests per day, last 7 days/ }).waitFor();
    expect(await field(watched, 'requests')).toBe('5');
    watched.expectNoProblems();
    await watched.context.close();
  });

  it('lists requests newest first, filters refused ones, shows a refusal and a captured body', async () => {
    const watched = await openPage(fx.browser);
    const { page } = watched;
    await signIn(watched, fx.gw, fx.gw.adminKey);
    await openFromMenu(watched, 'Requests');
    await page.getByLabel('Studio', { exact: true }).selectOption('acme');
    const log = await acmeLog();
    await expect.poll(() => shownIds(watched)).toEqual(log.items.map((item: { id: string }) => item.id));
    const times = log.items.map((item: { at: string }) => Date.parse(item.at));
    expect(times).toEqual([...times].sort((a, b) => b - a));

    expect(await page.getByLabel('Time range').inputValue()).toBe('24h');
    // By token: the two requests of `limited`.
    await page.getByLabel('Token').selectOption(limited.id);
    await page.getByRole('button', { name: 'Filter', exact: true }).click();
    await expect
      .poll(() => shownIds(watched))
      .toEqual(
        log.items
          .filter((item: { token_id: string }) => item.token_id === limited.id)
          .map((item: { id: string }) => item.id),
      );
    await page.getByLabel('Token').selectOption('');
    await page.getByLabel('Outcome or status').selectOption('refused');
    await page.getByRole('button', { name: 'Filter', exact: true }).click();
    const refused = log.items.filter((item: { outcome: string }) => item.outcome === 'refused');
    expect(refused.map((item: { error_code: string }) => item.error_code)).toEqual([
      'rate_limited',
      'model_not_found',
    ]);
    await expect.poll(() => shownIds(watched)).toEqual(refused.map((item: { id: string }) => item.id));

    await page.getByRole('button', { name: `Details of request ${refused[0].id}` }).click();
    const dialog = page.getByRole('dialog', { name: `Request ${refused[0].id}` });
    const error = dialog.locator('[data-field="error"]');
    await error.waitFor();
    expect(await error.textContent()).toBe(`rate_limited: ${refused[0].error_message}`);
    expect(refused[0].error_message).toBeTruthy();
    await dialog.getByText('None: refused before any model was called.').waitFor();
    await dialog.getByText(/^Not captured/).waitFor();
    await checkPage(watched, 'requests-refused');
    await dialog.getByRole('button', { name: 'Close' }).click();
    await dialog.waitFor({ state: 'hidden' });

    // The code filter, then no filters and the live tail: a new request shows up without a reload.
    await page.getByLabel('Outcome or status').selectOption('');
    await page.getByLabel('Error code').fill('model_not_found');
    await page.getByRole('button', { name: 'Filter', exact: true }).click();
    await expect.poll(() => shownIds(watched)).toEqual([refused[1].id]);
    await page.getByLabel('Error code').fill('');
    await page.getByRole('button', { name: 'Filter', exact: true }).click();
    await expect.poll(() => shownIds(watched)).toHaveLength(5);
    await page.getByLabel('Live tail').check();
    await page.getByRole('status').getByText('Live').waitFor();

    await adminOk(fx.gw, 'POST', '/v1/studios/capture/set', { studio_id: 'acme', capture: 'full' });
    const captured = await generate(app.secret, 'dev/echo', 'words kept in full');
    expect(captured.status).toBe(200);
    const id = captured.headers.get('x-request-id');
    await expect
      .poll(async () => (await adminOk(fx.gw, 'GET', `/v1/ai/requests/${id}`)).json.payload?.erased)
      .toBe(false);
    await expect.poll(() => shownIds(watched)).toHaveLength(6);
    expect((await shownIds(watched))[0]).toBe(id);

    await page.getByRole('button', { name: `Details of request ${id}` }).click();
    const detail = page.getByRole('dialog', { name: `Request ${id}` });
    const body = detail.locator('[data-field="request-body"]');
    await body.waitFor();
    expect(await body.textContent()).toContain('words kept in full');
    expect(await detail.locator('[data-field="response-body"]').textContent()).toContain(
      'words kept in full',
    );
    await detail.getByRole('row', { name: /^dev\/echo answered/ }).waitFor();
    await checkPage(watched, 'requests-captured');
    await detail.getByRole('button', { name: 'Close' }).click();
    watched.expectNoProblems();
    await watched.context.close();
  });

  it("shows the tokens' last use and spend", async () => {
    const watched = await openPage(fx.browser);
    const { page } = watched;
    await signIn(watched, fx.gw, fx.gw.adminKey);
    await openFromMenu(watched, 'Tokens');
    await page.getByLabel('Studio', { exact: true }).selectOption('acme');
    const newest = (await adminOk(fx.gw, 'GET', `/v1/ai/requests?studio_id=acme&token_id=${app.id}&limit=1`))
      .json.items[0];
    const row = page.getByRole('row', { name: /^app / });
    const lastUsed = row.locator('[data-field="last-used"]');
    await expect
      .poll(() => lastUsed.textContent())
      .toBe((await page.evaluate(`new Date(${JSON.stringify(newest.at)}).toLocaleString()`)) as string);
    const summary = (await adminOk(fx.gw, 'GET', '/v1/ai/requests/summary?studio_id=acme')).json;
    const spent = summary.top_tokens.find((t: { token_id: string }) => t.token_id === app.id).cost_usd;
    expect(spent).toBeGreaterThan(0);
    const usd = usd$(spent);
    expect(await row.locator('[data-field="spend"]').textContent()).toBe(`${usd} in the last 24 h`);
    // A token with a budget: what it spent in the budget's window.
    const budget = (await adminOk(fx.gw, 'GET', '/v1/studios/budgets/list?studio_id=acme')).json.items[0];
    expect(
      await page
        .getByRole('row', { name: /^limited / })
        .locator('[data-field="spend"]')
        .textContent(),
    ).toBe(`${usd$(budget.spent_usd)} today (budget)`);
    await checkPage(watched, 'tokens-activity');
    await watched.context.close();
  });

  it("a studio's user sees its own studio only", async () => {
    const watched = await openPage(fx.browser);
    const { page } = watched;
    await signIn(watched, fx.gw, app.secret);
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    expect(await page.getByLabel('Studio', { exact: true }).count()).toBe(0);
    const summary = (await fx.gw.api('GET', '/v1/ai/requests/summary', { token: app.secret })).json;
    expect(summary.studio_id).toBe('acme');
    await expect.poll(() => field(watched, 'requests')).toBe(String(summary.requests));
    expect(await page.getByText(other.id).count()).toBe(0);
    await page.getByText('Budgets are set and watched by an admin').waitFor();
    await checkPage(watched, 'overview-user');

    await openFromMenu(watched, 'Requests');
    const own = (await acmeLog()).items.map((item: { id: string }) => item.id);
    await expect.poll(() => shownIds(watched)).toEqual(own);
    const globex = (await adminOk(fx.gw, 'GET', '/v1/ai/requests?studio_id=globex')).json.items;
    expect(globex).toHaveLength(1);
    expect(own).not.toContain(globex[0].id);
    // Another studio's request, asked for by id from the page's own session: as unknown as none.
    watched.allowStatuses(404);
    const status = await page.evaluate(
      `fetch('/v1/ai/requests/${globex[0].id}', { headers: { 'x-studio-console': '1' } }).then((r) => r.status)`,
    );
    expect(status).toBe(404);
    await checkPage(watched, 'requests-user');
    await watched.context.close();
  });

  it('pages older requests by cursor, downloads them as CSV, and says what an empty studio would show', async () => {
    const watched = await openPage(fx.browser);
    const { page } = watched;
    await signIn(watched, fx.gw, fx.gw.adminKey);
    await openFromMenu(watched, 'Requests');
    await page.getByLabel('Studio', { exact: true }).selectOption('bulk');
    const log = (await adminOk(fx.gw, 'GET', '/v1/ai/requests?studio_id=bulk&limit=100')).json.items;
    expect(log).toHaveLength(BULK);
    const ids = log.map((item: { id: string }) => item.id);
    await expect.poll(() => shownIds(watched)).toEqual(ids.slice(0, 50));
    await page.getByRole('button', { name: 'Load more' }).click();
    await expect.poll(() => shownIds(watched)).toEqual(ids);
    expect(await page.getByRole('button', { name: 'Load more' }).count()).toBe(0);

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download CSV' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe('requests-bulk.csv');
    const csv = (await readFile((await download.path())!, 'utf8')).trim().split(/\r?\n/);
    expect(csv[0]).toMatch(/^at,id,studio_id,token_id,/);
    expect(csv).toHaveLength(BULK + 1);
    expect(csv[1]).toContain(ids[0]);

    await page.getByLabel('Studio', { exact: true }).selectOption('initech');
    await page.getByText('No requests from studio initech in this time range.').waitFor();
    await checkPage(watched, 'requests-empty');
    await openFromMenu(watched, 'Overview');
    await page.getByLabel('Studio', { exact: true }).selectOption('initech');
    await page.getByText('No requests from studio initech in the last 24 hours.').waitFor();
    await page.getByText('No model was called in this time range.').waitFor();
    await page.getByText('No token made a request in this time range.').waitFor();
    await checkPage(watched, 'overview-empty');
    await watched.context.close();
  });

  it('fits a phone', async () => {
    const watched = await openPage(fx.browser, { viewport: PHONE });
    await signIn(watched, fx.gw, app.secret);
    await watched.page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await watched.page.getByRole('img', { name: /^Requests per hour/ }).waitFor();
    const overflow = (await watched.page.evaluate(
      'document.documentElement.scrollWidth - window.innerWidth',
    )) as number;
    expect(overflow).toBeLessThanOrEqual(0);
    await screenshot(watched.page, 'overview-phone');
    await openFromMenu(watched, 'Requests');
    await watched.page.locator('tr[data-request-id]').first().waitFor();
    await finishAtPhoneWidth(watched, 'requests-phone');
  });
});
