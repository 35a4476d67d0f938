import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { browserSkip, checkPage, openPage, PHONE, type WatchedPage } from './support/browser.ts';
import {
  alertText,
  consoleFixture,
  finishAtPhoneWidth,
  openFromMenu,
  REQUEST_ID,
  signIn,
} from './support/fixture.ts';

// A declared key set in the process: listed, masked, and not removable from the console.
const fx = consoleFixture([], { processEnv: { ANTHROPIC_API_KEY: 'sk-ant-from-the-process-0001' } });

interface Listed {
  key: string;
  value: string;
  secret: boolean;
  source: string;
}
const envList = async () =>
  (await fx.gw.api('GET', '/v1/env/list', { token: fx.gw.adminKey })).json.items as Listed[];
const envItem = async (key: string) => (await envList()).find((item) => item.key === key);

const setForm = (page: Page) => page.getByRole('form', { name: 'Set a variable' });

async function openEnv(watched: WatchedPage): Promise<void> {
  await signIn(watched, fx.gw, fx.gw.adminKey);
  await openFromMenu(watched, 'Env');
}

describe.skipIf(browserSkip !== undefined)('console: env', () => {
  it('sets an encrypted and a public value, shows them as the API does, removes one after a confirmation', async () => {
    const watched = await openPage(fx.browser);
    const { page } = watched;
    await openEnv(watched);
    const processRow = page.getByRole('row', { name: /ANTHROPIC_API_KEY/ });
    await processRow.getByText('process env').waitFor();
    expect(await processRow.textContent()).toContain('••••0001');
    expect(await processRow.getByRole('button').count()).toBe(0);

    const secret = 'sk-console-test-secret-9876';
    await setForm(page).getByLabel('Key', { exact: true }).fill('OPENAI_API_KEY');
    await setForm(page).getByLabel('Value').fill(secret);
    await page.getByRole('button', { name: 'Set variable' }).click();
    const encryptedRow = page.getByRole('row', { name: /OPENAI_API_KEY/ });
    await encryptedRow.getByText('encrypted').waitFor();
    expect(await encryptedRow.textContent()).toContain('••••9876');
    expect(await page.content()).not.toContain(secret);
    expect(await envItem('OPENAI_API_KEY')).toEqual(
      expect.objectContaining({ value: '••••9876', secret: true, source: 'store' }),
    );

    await setForm(page).getByLabel('Key', { exact: true }).fill('OPENAI_BASE_URL');
    await setForm(page).getByLabel('Value').fill('https://llm.example.test/v1');
    await setForm(page)
      .getByRole('checkbox', { name: /Public/ })
      .check();
    await page.getByRole('button', { name: 'Set variable' }).click();
    const publicRow = page.getByRole('row', { name: /OPENAI_BASE_URL/ });
    await publicRow.getByText('https://llm.example.test/v1').waitFor();
    expect(await envItem('OPENAI_BASE_URL')).toMatchObject({ secret: false });
    await checkPage(watched, 'env');

    await publicRow.getByRole('button', { name: 'Remove OPENAI_BASE_URL' }).click();
    const dialog = page.getByRole('dialog', { name: 'Remove OPENAI_BASE_URL?' });
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect(await envItem('OPENAI_BASE_URL')).toBeDefined();
    await publicRow.getByRole('button', { name: 'Remove OPENAI_BASE_URL' }).click();
    await dialog.getByRole('button', { name: 'Remove variable' }).click();
    await publicRow.waitFor({ state: 'detached' });
    expect(await envItem('OPENAI_BASE_URL')).toBeUndefined();
    watched.expectNoProblems();
    await watched.context.close();
  });

  it('shows the refusal of a key that is not an env key, with its request id', async () => {
    const watched = await openPage(fx.browser);
    watched.allowStatuses(400);
    const { page } = watched;
    await openEnv(watched);
    await setForm(page).getByLabel('Key', { exact: true }).fill('not-a-key');
    await setForm(page).getByLabel('Value').fill('x');
    await page.getByRole('button', { name: 'Set variable' }).click();
    const text = await alertText(watched);
    expect(text).toMatch(/A-Z, 0-9 and _/);
    expect(text).toMatch(/validation_failed/);
    expect(text).toMatch(REQUEST_ID);
    expect(await envItem('not-a-key')).toBeUndefined();
    watched.expectNoProblems();
    await watched.context.close();
  });

  it('imports a .env pasted, picked or dropped, and lists the lines the gateway could not take', async () => {
    const watched = await openPage(fx.browser);
    const { page } = watched;
    await openEnv(watched);
    const form = page.getByRole('form', { name: 'Import a .env file' });

    // Pasted, with a line that is not an assignment and a public key that is not in the file.
    await form
      .getByLabel('Content')
      .fill('PASTED_ONE=first-value-0001\nthis line is wrong\nPASTED_TWO=two\n');
    await form.getByLabel(/^Public keys/).fill('PASTED_TWO, MISSING_KEY');
    await form.getByRole('button', { name: 'Import' }).click();
    const result = form.getByRole('status').filter({ hasText: 'Imported' });
    await result.getByText('PASTED_ONE, PASTED_TWO').waitFor();
    expect(await form.getByLabel('Content').inputValue()).toBe('');
    const problems = result.getByRole('table');
    expect(await problems.getByRole('row', { name: /^2 / }).textContent()).toMatch(/^2/);
    expect(await problems.textContent()).toContain('MISSING_KEY: listed in public but not in the file');
    await page
      .getByRole('row', { name: /PASTED_TWO/ })
      .getByText('public')
      .waitFor();
    expect(await envItem('PASTED_ONE')).toMatchObject({ secret: true, value: '••••0001' });
    expect(await envItem('PASTED_TWO')).toMatchObject({ secret: false, value: 'two' });
    await checkPage(watched, 'env-import');

    // Picked with the file input, not overwriting what is set.
    await form.getByLabel('File').setInputFiles({
      name: 'picked.env',
      mimeType: 'text/plain',
      buffer: Buffer.from('PASTED_ONE=changed\nPICKED=from-the-file\n'),
    });
    await form.getByText('read picked.env').waitFor();
    expect(await form.getByLabel('Content').inputValue()).toContain('PICKED=from-the-file');
    await form.getByLabel(/^Public keys/).fill('');
    await form.getByLabel('Overwrite keys already set').uncheck();
    await form.getByRole('button', { name: 'Import' }).click();
    await result.getByText('Skipped 1 key (already set): PASTED_ONE.').waitFor();
    expect(await envItem('PICKED')).toMatchObject({ secret: true });
    expect(await envItem('PASTED_ONE')).toMatchObject({ value: '••••0001' });

    // Dropped on the form, as a person drags a file from their desktop.
    const dropped = await page.evaluateHandle(
      "(() => { const t = new DataTransfer(); t.items.add(new File(['DROPPED=yes\\n1BAD=no\\n'], 'dropped.env', { type: 'text/plain' })); return t; })()",
    );
    await form.dispatchEvent('dragover', { dataTransfer: dropped });
    await form.dispatchEvent('drop', { dataTransfer: dropped });
    await form.getByText('read dropped.env').waitFor();
    await form.getByRole('button', { name: 'Import' }).click();
    await result.getByText('Imported 1 key: DROPPED.').waitFor();
    expect(await result.getByRole('table').textContent()).toMatch(/2.*1BAD/);
    expect(await envItem('DROPPED')).toBeDefined();
    expect(await envItem('1BAD')).toBeUndefined();
    watched.expectNoProblems();
    await watched.context.close();
  });

  it('fits a phone', async () => {
    const watched = await openPage(fx.browser, { viewport: PHONE });
    const { page } = watched;
    await openEnv(watched);
    await setForm(page).getByLabel('Key', { exact: true }).fill('PHONE_KEY');
    await setForm(page).getByLabel('Value').fill('a-value-typed-on-a-phone');
    await page.getByRole('button', { name: 'Set variable' }).click();
    await page.getByRole('row', { name: /PHONE_KEY/ }).waitFor();
    await finishAtPhoneWidth(watched, 'env-phone');
  });
});
