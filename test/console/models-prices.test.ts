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

const fx = consoleFixture(['acme']);

interface PriceItem {
  model: string;
  input_per_mtok: number;
  output_per_mtok: number;
  source: string;
}
const priceOf = async (model: string) =>
  ((await fx.gw.api('GET', '/v1/ai/prices', { token: fx.gw.adminKey })).json.items as PriceItem[]).find(
    (item) => item.model === model,
  );

describe.skipIf(browserSkip !== undefined)('console: models', () => {
  it('shows the admin every model, its availability and the env keys an unavailable one misses', async () => {
    const watched = await openPage(fx.browser);
    const { page } = watched;
    await signIn(watched, fx.gw, fx.gw.adminKey);
    await openFromMenu(watched, 'Models');
    const echo = page.getByRole('row', { name: /dev\/echo/ });
    await echo.getByText('available').waitFor();
    const gpt = page.getByRole('row', { name: /openai\/gpt-4\.1-mini/ });
    expect(await gpt.textContent()).toMatch(/unavailable.*Missing env: OPENAI_API_KEY/);
    const all = (await fx.gw.api('GET', '/v1/ai/models', { token: fx.gw.adminKey })).json.items
      .length as number;
    await page.getByText(`${all} of ${all} models`).waitFor();

    await page.getByLabel('Filter').fill('claude');
    const claude = (await fx.gw.api('GET', '/v1/ai/models', { token: fx.gw.adminKey })).json.items.filter(
      (m: { id: string }) => m.id.includes('claude'),
    ).length as number;
    expect(claude).toBeGreaterThan(0);
    await page.getByText(`${claude} of ${all} models`).waitFor();
    await page.getByLabel('Filter').fill('');
    await page.getByLabel('Only available').check();
    expect(await page.getByRole('row', { name: /openai\/gpt-4\.1-mini/ }).count()).toBe(0);
    await page.getByLabel('Only available').uncheck();
    await checkPage(watched, 'models');

    // The missing key's link leads to Env; once it is set there, the model is available.
    await gpt.getByRole('link', { name: 'set in Env' }).click();
    await page.getByRole('heading', { level: 1, name: 'Env' }).waitFor();
    const setForm = page.getByRole('form', { name: 'Set a variable' });
    await setForm.getByLabel('Key', { exact: true }).fill('OPENAI_API_KEY');
    await setForm.getByLabel('Value').fill('sk-console-models-0000');
    await setForm.getByRole('button', { name: 'Set variable' }).click();
    await page.getByRole('row', { name: /OPENAI_API_KEY/ }).waitFor();
    await openFromMenu(watched, 'Models');
    await page
      .getByRole('row', { name: /openai\/gpt-4\.1-mini/ })
      .getByText('available')
      .waitFor();
    expect(await page.getByRole('row', { name: /openai\/gpt-4\.1-mini/ }).textContent()).not.toContain(
      'Missing',
    );
    watched.expectNoProblems();
    await watched.context.close();
  });

  it('shows a limited user token only the models it may call, without the admin’s availability', async () => {
    const { secret } = await issueToken(fx.gw, 'acme', { name: 'dev only', models: ['dev/*'] });
    const watched = await openPage(fx.browser, { viewport: PHONE });
    const { page } = watched;
    await signIn(watched, fx.gw, secret);
    await openFromMenu(watched, 'Models');
    await page.getByText('The models this token may call now: dev/*.').waitFor();
    await page.getByRole('row', { name: /dev\/echo/ }).waitFor();
    const ids = (await page.locator('tbody tr td:first-child code').allTextContents()).sort();
    const api = (await fx.gw.api('GET', '/v1/ai/models', { token: secret })).json.items.map(
      (m: { id: string }) => m.id,
    );
    expect(ids).toEqual([...api].sort());
    expect(ids.every((id) => id.startsWith('dev/'))).toBe(true);
    expect(await page.getByRole('columnheader', { name: 'Availability' }).count()).toBe(0);
    await finishAtPhoneWidth(watched, 'models-user-phone');
  });
});

describe.skipIf(browserSkip !== undefined)('console: prices', () => {
  it('lets the admin override fields of a price, edit it, and remove the override after a confirmation', async () => {
    const watched = await openPage(fx.browser);
    const { page } = watched;
    const before = await priceOf('dev/echo');
    await signIn(watched, fx.gw, fx.gw.adminKey);
    await openFromMenu(watched, 'Prices');
    const form = page.getByRole('form', { name: 'Set a price' });
    await form.getByLabel('Model').fill('dev/echo');
    await form.getByLabel('Input / M tokens').fill('1.5');
    await form.getByRole('button', { name: 'Set price' }).click();
    const row = page.getByRole('row', { name: /dev\/echo/ });
    await row.getByText('override', { exact: true }).waitFor();
    expect(await row.textContent()).toContain('$1.5');
    // The fields left empty keep the price in force (the built-in default here).
    expect(await priceOf('dev/echo')).toMatchObject({
      input_per_mtok: 1.5,
      output_per_mtok: before?.output_per_mtok,
      source: 'override',
    });

    // Edit starts from the row's values; only what changes is sent, the rest stays.
    await row.getByRole('button', { name: 'Edit dev/echo' }).click();
    expect(await form.getByLabel('Model').inputValue()).toBe('dev/echo');
    expect(await form.getByLabel('Input / M tokens').inputValue()).toBe('1.5');
    await form.getByLabel('Output / M tokens').fill('3');
    await form.getByRole('button', { name: 'Set price' }).click();
    await row.getByText('$3').waitFor();
    expect(await priceOf('dev/echo')).toMatchObject({ input_per_mtok: 1.5, output_per_mtok: 3 });
    await checkPage(watched, 'prices');

    await row.getByRole('button', { name: 'Remove override of dev/echo' }).click();
    const dialog = page.getByRole('dialog', { name: 'Remove the price override of dev/echo?' });
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect((await priceOf('dev/echo'))?.source).toBe('override');
    await row.getByRole('button', { name: 'Remove override of dev/echo' }).click();
    await dialog.getByRole('button', { name: 'Remove override' }).click();
    await row.getByText('default', { exact: true }).waitFor();
    expect(await priceOf('dev/echo')).toEqual(before);
    watched.expectNoProblems();
    await watched.context.close();
  });

  it('shows the refusal of a price for a model that is not in the catalog', async () => {
    const watched = await openPage(fx.browser);
    watched.allowStatuses(400);
    const { page } = watched;
    await signIn(watched, fx.gw, fx.gw.adminKey);
    await openFromMenu(watched, 'Prices');
    const form = page.getByRole('form', { name: 'Set a price' });
    await form.getByLabel('Model').fill('nowhere/nothing');
    await form.getByLabel('Per image').fill('0.04');
    await form.getByRole('button', { name: 'Set price' }).click();
    const text = await alertText(watched);
    expect(text).toContain('model "nowhere/nothing" is not in the catalog');
    expect(text).toMatch(REQUEST_ID);
    expect(await priceOf('nowhere/nothing')).toBeUndefined();
    watched.expectNoProblems();
    await watched.context.close();
  });

  it('lets a user read the prices of what it may call, and shows the refusal once its studio is paused', async () => {
    await fx.gw.api('POST', '/v1/ai/prices/upsert', {
      token: fx.gw.adminKey,
      body: { model: 'dev/image', per_image: 0.02 },
    });
    const { secret } = await issueToken(fx.gw, 'acme', { name: 'images', models: ['dev/image', 'openai/*'] });
    const watched = await openPage(fx.browser);
    watched.allowStatuses(403);
    const { page } = watched;
    await signIn(watched, fx.gw, secret);
    await openFromMenu(watched, 'Prices');
    const row = page.getByRole('row', { name: /dev\/image/ });
    await row.getByText('$0.02').waitFor();
    expect(await page.getByRole('form', { name: 'Set a price' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: /Edit|Remove/ }).count()).toBe(0);
    const shown = (await page.locator('tbody tr td:first-child code').allTextContents()).sort();
    const api = (await fx.gw.api('GET', '/v1/ai/prices', { token: secret })).json.items.map(
      (p: PriceItem) => p.model,
    );
    expect(shown).toEqual([...api].sort());
    expect(shown).not.toContain('dev/echo');
    await checkPage(watched, 'prices-user');

    await fx.gw.api('POST', '/v1/studios/pause', {
      token: fx.gw.adminKey,
      body: { studio_id: 'acme', reason: 'audit' },
    });
    await openFromMenu(watched, 'Models');
    const text = await alertText(watched);
    expect(text).toMatch(/the studio of this token is paused.*studio_paused/);
    expect(text).toMatch(REQUEST_ID);
    await fx.gw.api('POST', '/v1/studios/activate', { token: fx.gw.adminKey, body: { studio_id: 'acme' } });
    watched.expectNoProblems();
    await watched.context.close();
  });
});
