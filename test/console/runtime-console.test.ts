import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { definePlugin } from '../../services/runtime/plugins/types.ts';
import { startTestStack, type TestStack } from '../support/runtime.ts';
import { browserSkip, checkPage, launchBrowser, openPage } from './support/browser.ts';

/** Cannot run here: it needs a key and a program this machine does not have. */
const unreachable = definePlugin({
  name: 'faraway',
  version: '0.2.0',
  description: 'needs what is not here',
  requires: { env: ['FARAWAY_API_KEY'], bins: ['definitely-not-installed-studio-bin'] },
  actions: [],
});

const RUNTIME_TOKEN = 'console-runtime-token-0123456789';
let stack: TestStack;
let guarded: TestStack;
let browser: Browser;

beforeAll(async () => {
  stack = await startTestStack({ plugins: [unreachable] });
  guarded = await startTestStack({ config: { STUDIO_RUNTIME_TOKEN: RUNTIME_TOKEN } });
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await stack?.close();
  await guarded?.close();
});

const pluginState = async (name: string) =>
  ((await stack.call('GET', '/api/plugins/list')).json.plugins as { name: string; state: string }[]).find(
    (p) => p.name === name,
  )?.state;

async function openPlugins(page: Page): Promise<void> {
  await page.goto(`${stack.runtime.url}/`);
  await page.getByRole('link', { name: 'Plugins' }).click();
  await page.getByRole('region', { name: 'files' }).waitFor();
}

describe.skipIf(browserSkip !== undefined)('runtime console: status and plugins', () => {
  it('shows the status and health of the runtime', async () => {
    const watched = await openPage(browser);
    const { page } = watched;
    await page.goto(`${stack.runtime.url}/`);
    await page.getByRole('heading', { name: 'Status' }).waitFor();
    await page.getByText('studio-runtime').waitFor();
    await page.getByText('ok', { exact: true }).waitFor();
    await checkPage(watched, 'runtime-status');
    await watched.context.close();
  });

  it('shows availability with its reasons, and starts, stops and restarts a plugin', async () => {
    const watched = await openPage(browser);
    const { page } = watched;
    await openPlugins(page);
    const faraway = page.getByRole('region', { name: 'faraway' });
    await faraway.getByText('unavailable').waitFor();
    expect(await faraway.getByRole('list', { name: 'Why faraway is unavailable' }).textContent()).toContain(
      'missing env FARAWAY_API_KEY',
    );
    await faraway.getByText('missing binary definitely-not-installed-studio-bin').waitFor();

    const files = page.getByRole('region', { name: 'files' });
    await files.getByText('running', { exact: true }).waitFor();
    await files.getByText('POST /api/files/read').waitFor();
    try {
      await files.getByRole('button', { name: 'Stop files' }).click();
      await files.getByText('stopped', { exact: true }).waitFor();
      expect(await pluginState('files')).toBe('stopped');
      await files.getByRole('button', { name: 'Start files', exact: true }).click();
      await files.getByText('running', { exact: true }).waitFor();
      expect(await pluginState('files')).toBe('running');
      // It shows `running` before the restart as after it: the restart's answer is what to wait for.
      const restarted = page.waitForResponse(
        (res) => res.url().endsWith('/api/plugins/control') && res.request().method() === 'POST',
      );
      await files.getByRole('button', { name: 'Restart files' }).click();
      expect((await restarted).ok()).toBe(true);
      await files.getByText('running', { exact: true }).waitFor();
      expect(await pluginState('files')).toBe('running');
      watched.expectNoProblems();
    } finally {
      // The other tests need it running, whatever happened here.
      await stack.call('POST', '/api/plugins/control', { pluginName: 'files', action: 'start' });
      await watched.context.close();
    }
  });

  it('runs an action from a form built from its input, and shows the result', async () => {
    const watched = await openPage(browser);
    const { page } = watched;
    await openPlugins(page);
    const files = page.getByRole('region', { name: 'files' });
    await files.getByRole('button', { name: 'Run files.write…' }).click();
    const write = page.getByRole('form', { name: 'Run files.write' });
    await write.getByLabel('path').fill('console/hello.txt');
    await write.getByLabel('content').fill('hi from the console');
    await write.getByRole('button', { name: 'Run files.write' }).click();
    const written = write.getByRole('region', { name: 'Result' });
    await written.waitFor();
    expect(JSON.parse((await written.locator('pre').textContent()) ?? '')).toEqual({
      path: 'console/hello.txt',
      bytes: 19,
    });
    expect(await readFile(join(stack.workspace, 'console/hello.txt'), 'utf8')).toBe('hi from the console');

    await files.getByRole('button', { name: 'Run files.read…' }).click();
    const read = page.getByRole('form', { name: 'Run files.read' });
    await read.getByLabel('path').fill('console/hello.txt');
    await read.getByRole('button', { name: 'Run files.read' }).click();
    await read
      .getByRole('region', { name: 'Result' })
      .getByText('"content": "hi from the console"')
      .waitFor();
    await checkPage(watched, 'runtime-plugins');
    await watched.context.close();
  });

  it('works by keyboard: an optional field left empty is left out', async () => {
    const watched = await openPage(browser);
    const { page } = watched;
    await page.goto(`${stack.runtime.url}/`);
    await page.getByRole('link', { name: 'Plugins' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Run files.list…' }).focus();
    await page.keyboard.press('Enter');
    const list = page.getByRole('form', { name: 'Run files.list' });
    await list.getByLabel(/^path/).focus();
    await page.keyboard.press('Enter'); // submits the form with the path empty: the workspace's root
    await list.getByRole('region', { name: 'Result' }).getByText('"path": "."').waitFor();
    watched.expectNoProblems();
    await watched.context.close();
  });

  it('shows a refusal with its envelope message and request id (an action of a stopped plugin)', async () => {
    await stack.call('POST', '/api/plugins/control', { pluginName: 'files', action: 'stop' });
    const watched = await openPage(browser);
    watched.allowStatuses(409);
    const { page } = watched;
    try {
      await openPlugins(page);
      await page.getByRole('button', { name: 'Run files.read…' }).click();
      const read = page.getByRole('form', { name: 'Run files.read' });
      await read.getByLabel('path').fill('anything.txt');
      await read.getByRole('button', { name: 'Run files.read' }).click();
      const alert = read.getByRole('alert');
      await alert.waitFor();
      expect(await alert.textContent()).toMatch(
        /plugin files is stopped; start it first.*conflict.*request id [0-9a-f-]{36}/,
      );
      watched.expectNoProblems();
    } finally {
      await stack.call('POST', '/api/plugins/control', { pluginName: 'files', action: 'start' });
      await watched.context.close();
    }
  });
});

describe.skipIf(browserSkip !== undefined)('runtime console: a runtime that needs its token', () => {
  it('asks for the token on a 401, keeps it in memory only, and asks again after a reload', async () => {
    const watched = await openPage(browser);
    watched.allowStatuses(401);
    const { page } = watched;
    await page.goto(`${guarded.runtime.url}/`);
    await page.getByLabel('Runtime token').waitFor();
    await checkPage(watched, 'runtime-token');

    await page.getByLabel('Runtime token').fill('not-the-runtime-token');
    await page.getByRole('button', { name: 'Connect' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(
      /this runtime needs Authorization: Bearer <STUDIO_RUNTIME_TOKEN>.*unauthenticated.*request id [0-9a-f-]{36}/,
    );

    await page.getByLabel('Runtime token').fill(RUNTIME_TOKEN);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Status' }).waitFor();
    await page.getByText('studio-runtime').waitFor();

    // The session routes and their stream go with the token too.
    const created = await guarded.call(
      'POST',
      '/api/sdk/sessions',
      { title: 'Guarded' },
      { authorization: `Bearer ${RUNTIME_TOKEN}` },
    );
    await page.getByRole('link', { name: 'Sessions' }).click();
    await page.getByRole('link', { name: 'Guarded' }).click();
    await page.getByRole('status').filter({ hasText: 'Live' }).waitFor();
    await page.getByLabel(/^Message/).fill('with a token');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByRole('region', { name: 'Transcript' }).getByText('Echo: with a token').waitFor();
    expect(created.status).toBe(201);

    const stored = (await page.evaluate(
      '({ local: JSON.stringify({ ...localStorage }), session: JSON.stringify({ ...sessionStorage }), cookie: document.cookie })',
    )) as { local: string; session: string; cookie: string };
    expect(JSON.stringify(stored)).not.toContain(RUNTIME_TOKEN);
    await page.reload();
    await page.getByLabel('Runtime token').waitFor();
    watched.expectNoProblems();
    await watched.context.close();
  });
});
