import { describe, expect, it } from 'vitest';
import { adminOk } from '../support/admin.ts';
import { browserSkip, openPage, seriousViolations, type WatchedPage } from './support/browser.ts';
import { consoleFixture, createStudio, openFromMenu, signIn } from './support/fixture.ts';

// What an operator sees on a gateway with nothing in it yet: every list and chart says what it
// would show and how to get something there, every count has its noun in the right number, and the
// confirmation of a destructive action is readable (axe's colour contrast, light and dark).

const fx = consoleFixture([]);

async function asAdmin(): Promise<WatchedPage> {
  const watched = await openPage(fx.browser);
  await signIn(watched, fx.gw, fx.gw.adminKey);
  return watched;
}

/** The empty state of a page: its words, found whole. */
const emptyState = (watched: WatchedPage, what: string) =>
  watched.page.locator('p.empty').filter({ hasText: what });

/** axe on the page as it is, in the light theme, then in the dark one. */
async function accessibleInBothThemes(watched: WatchedPage): Promise<void> {
  const { page } = watched;
  expect(await seriousViolations(page)).toEqual([]);
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.evaluate("document.documentElement.dataset.theme = 'dark'");
  expect(await seriousViolations(page)).toEqual([]);
  await page.evaluate("document.documentElement.dataset.theme = 'light'");
  await page.emulateMedia({ colorScheme: 'light' });
}

describe.skipIf(browserSkip !== undefined)('gateway console with nothing in it yet', () => {
  it('says so on every page, and how to get something there; then counts one thing as one', async () => {
    const watched = await asAdmin();
    const { page } = watched;

    await openFromMenu(watched, 'Studios');
    await emptyState(watched, 'No studios yet.')
      .getByText(/create the first one above/)
      .waitFor();
    expect(await page.getByRole('table').count()).toBe(0);
    // A page about one studio, with none to pick: where to make one.
    await openFromMenu(watched, 'Budgets');
    await emptyState(watched, 'No studios yet.').getByRole('link', { name: 'Studios' }).waitFor();
    await openFromMenu(watched, 'Routes');
    await emptyState(watched, 'No routes yet.')
      .getByText(/save one above/)
      .waitFor();
    expect(await seriousViolations(page)).toEqual([]);

    await createStudio(fx.gw, 'acme', 'Acme');
    await openFromMenu(watched, 'Studios');
    await page.getByRole('table').getByText('1 studio', { exact: true }).waitFor();

    await openFromMenu(watched, 'Tokens');
    await emptyState(watched, 'No tokens for acme yet.')
      .getByText(/issue one above/)
      .waitFor();
    await openFromMenu(watched, 'Accounts');
    await emptyState(watched, 'No accounts for acme yet.')
      .getByText(/create one above/)
      .waitFor();
    await openFromMenu(watched, 'Budgets');
    await emptyState(watched, 'No budgets for acme yet.')
      .getByText(/Set one above/)
      .waitFor();
    await openFromMenu(watched, 'Rate limits');
    await emptyState(watched, 'No rate limits for acme yet.')
      .getByText(/Set some above/)
      .waitFor();
    await openFromMenu(watched, 'Usage');
    await emptyState(watched, 'No usage of acme yet.')
      .getByText(/issue one on the Tokens page/)
      .waitFor();
    expect(await page.locator('canvas').count()).toBe(0); // no empty charts
    expect(await page.locator('[data-field="requests"]').locator('xpath=..').textContent()).toMatch(
      /^0 requests · 0 tokens · /,
    );
    await openFromMenu(watched, 'Models');
    await page.getByLabel('Filter').fill('no such model anywhere');
    await emptyState(watched, 'No model matches.')
      .getByText(/Clear the filter/)
      .waitFor();
    await openFromMenu(watched, 'Audit log');
    await page.getByLabel(/^Type/).fill('NoSuchEvent');
    await page.getByRole('button', { name: 'Filter' }).click();
    await emptyState(watched, 'No events match these filters.').waitFor();
    await emptyState(watched, 'No new events since this page opened.').waitFor();
    expect(await seriousViolations(page)).toEqual([]);

    // One of each: singular.
    await adminOk(fx.gw, 'POST', '/v1/ai/routes/upsert', {
      id: 'team/one',
      strategy: 'fallback',
      targets: [{ model: 'dev/echo' }],
    });
    await adminOk(fx.gw, 'POST', '/v1/studios/budgets/set', {
      studio_id: 'acme',
      amount_usd: 5,
      window: 'day',
      mode: 'soft',
    });
    await adminOk(fx.gw, 'POST', '/v1/studios/limits/set', { studio_id: 'acme', rpm: 60 });
    const token = await adminOk(fx.gw, 'POST', '/v1/studios/tokens/apply', { studio_id: 'acme' });
    const generated = await fx.gw.api('POST', '/v1/ai/text', {
      token: token.json.user_token,
      body: { model: 'dev/echo', prompt: 'one' },
    });
    expect(generated.status, generated.text).toBe(200);
    for (const [page_, caption] of [
      ['Routes', '1 route'],
      ['Budgets', '1 budget of acme'],
      ['Rate limits', '1 limit of acme'],
      ['Tokens', '1 token of acme'],
    ] as const) {
      await openFromMenu(watched, page_);
      await page.locator('caption').filter({ hasText: caption }).waitFor();
    }
    await openFromMenu(watched, 'Usage');
    await page.locator('canvas').first().waitFor();
    expect(await page.locator('[data-field="requests"]').locator('xpath=..').textContent()).toMatch(
      /^1 request · \d+ tokens · /,
    );
    watched.expectNoProblems();
    await watched.context.close();
  });

  it('shows a confirmation of a destructive action readable in light and dark', async () => {
    await createStudio(fx.gw, 'doomed', 'Doomed');
    const watched = await asAdmin();
    const { page } = watched;
    await openFromMenu(watched, 'Studios');
    await page
      .getByRole('row', { name: /doomed/ })
      .getByRole('button', { name: 'Remove' })
      .click();
    const dialog = page.getByRole('dialog', { name: 'Remove studio doomed?' });
    const confirm = dialog.getByRole('button', { name: 'Remove for good' });
    await confirm.waitFor();
    await accessibleInBothThemes(watched);
    // The danger button is filled with the danger colour: not red on blue.
    const colours = (await page.evaluate(
      "(() => { const s = getComputedStyle(document.querySelector('dialog[open] button.danger')); return [s.color, s.backgroundColor]; })()",
    )) as [string, string];
    expect(colours).toEqual(['rgb(255, 255, 255)', 'rgb(193, 26, 38)']);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    watched.expectNoProblems();
    await watched.context.close();
  });
});
