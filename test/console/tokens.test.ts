import { describe, expect, it } from 'vitest';
import { browserSkip, checkPage, openPage, PHONE } from './support/browser.ts';
import {
  alertText,
  consoleFixture,
  finishAtPhoneWidth,
  issueToken,
  openFromMenu,
  REQUEST_ID,
  signIn,
} from './support/fixture.ts';

const fx = consoleFixture(['acme', 'globex']);

const tokensOf = async (studioId: string) =>
  (await fx.gw.api('GET', `/v1/studios/tokens/list?studio_id=${studioId}`, { token: fx.gw.adminKey })).json
    .items as {
    id: string;
    name: string;
    models: string[] | null;
    expires_at: string | null;
    revoked_at: string | null;
  }[];

describe.skipIf(browserSkip !== undefined)('console: tokens (admin)', () => {
  it('issues a limited token shown once with a copy button, then revokes it after a confirmation', async () => {
    const watched = await openPage(fx.browser);
    const { page } = watched;
    await signIn(watched, fx.gw, fx.gw.adminKey);
    await openFromMenu(watched, 'Tokens');
    await page.getByLabel('Studio').selectOption('globex');
    await page.getByText('No tokens for globex yet.').waitFor();

    await page.getByLabel('Name').fill('ci bot');
    await page.getByLabel('Expires after').selectOption({ label: '1 day' });
    await page.getByLabel(/^Models/).fill('dev/echo\ndev/embed');
    await page.getByRole('button', { name: 'Issue token' }).click();
    const shown = page.getByRole('region', { name: 'New token' });
    await shown.waitFor();
    expect(await shown.textContent()).toContain('you will not see it again');
    const secret = ((await shown.getByTestId('new-token').textContent()) ?? '').trim();
    expect(secret).toMatch(/^stk_/);
    await shown.getByRole('button', { name: 'Copy token' }).click();
    await shown.getByText('Copied', { exact: true }).waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(secret);

    // Through the API: issued for globex with its models and expiry; the secret works and is limited.
    const [token] = await tokensOf('globex');
    expect(token).toMatchObject({ name: 'ci bot', models: ['dev/echo', 'dev/embed'], revoked_at: null });
    const lifetime = Date.parse(token!.expires_at!) - Date.now();
    expect(lifetime).toBeGreaterThan(23 * 3600_000);
    expect(lifetime).toBeLessThanOrEqual(24 * 3600_000);
    const models = await fx.gw.api('GET', '/v1/ai/models', { token: secret });
    expect(models.json.items.map((m: { id: string }) => m.id).sort()).toEqual(['dev/echo', 'dev/embed']);
    const row = page.getByRole('row', { name: /ci bot/ });
    await row.getByText('dev/echo, dev/embed').waitFor();
    await checkPage(watched, 'tokens-issued');

    // Leaving the page forgets the secret: nowhere in the page, nor in the browser's storage.
    await openFromMenu(watched, 'Studios');
    await openFromMenu(watched, 'Tokens');
    await page.getByLabel('Studio').selectOption('globex');
    await row.waitFor();
    expect(await page.content()).not.toContain(secret);
    const stored = (await page.evaluate(
      'JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }) + document.cookie',
    )) as string;
    expect(stored).not.toContain(secret);

    // Revoke: cancelling keeps it, confirming revokes it.
    await row.getByRole('button', { name: /^Revoke ci bot/ }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke token ci bot?' });
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect((await tokensOf('globex'))[0]?.revoked_at).toBeNull();
    await row.getByRole('button', { name: /^Revoke ci bot/ }).click();
    await dialog.getByRole('button', { name: 'Revoke token' }).click();
    await row.getByText('revoked').waitFor();
    expect((await tokensOf('globex'))[0]?.revoked_at).not.toBeNull();
    expect((await fx.gw.api('GET', '/v1/ai/models', { token: secret })).status).toBe(401);
    watched.expectNoProblems();
    await watched.context.close();
  });

  it('shows the refusal of a model pattern with a wildcard Studio does not have', async () => {
    const watched = await openPage(fx.browser);
    watched.allowStatuses(400);
    const { page } = watched;
    await signIn(watched, fx.gw, fx.gw.adminKey);
    await openFromMenu(watched, 'Tokens');
    await page.getByLabel('Studio').selectOption('acme');
    const before = (await tokensOf('acme')).length;
    await page.getByLabel(/^Models/).fill('openai/gpt-4?');
    await page.getByRole('button', { name: 'Issue token' }).click();
    const text = await alertText(watched);
    expect(text).toMatch(/validation_failed/);
    expect(text).toMatch(REQUEST_ID);
    expect(await page.getByRole('region', { name: 'New token' }).count()).toBe(0);
    expect((await tokensOf('acme')).length).toBe(before);
    watched.expectNoProblems();
    await watched.context.close();
  });

  it('fits a phone: issue and list without the page scrolling sideways', async () => {
    await issueToken(fx.gw, 'acme', { name: 'existing' });
    const watched = await openPage(fx.browser, { viewport: PHONE });
    const { page } = watched;
    await signIn(watched, fx.gw, fx.gw.adminKey);
    await openFromMenu(watched, 'Tokens');
    await page.getByLabel('Studio').selectOption('acme');
    await page.getByRole('row', { name: /existing/ }).waitFor();
    await page.getByLabel('Name').fill('phone');
    await page.getByRole('button', { name: 'Issue token' }).click();
    await page.getByRole('region', { name: 'New token' }).waitFor();
    await page.getByRole('row', { name: /phone/ }).waitFor();
    await finishAtPhoneWidth(watched, 'tokens-phone');
  });
});
