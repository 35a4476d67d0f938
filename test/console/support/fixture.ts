import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect } from 'vitest';
import { startTestGateway, type TestGateway, type TestGatewayOptions } from '../../support/gateway.ts';
import { launchBrowser, screenshot, seriousViolations, type WatchedPage } from './browser.ts';

export interface ConsoleFixture {
  readonly gw: TestGateway;
  readonly browser: Browser;
}

/**
 * A memory-store gateway with `studios` created and one browser, for the suite that calls it
 * (started before its tests, closed after them).
 */
export function consoleFixture(
  studios: readonly string[],
  options: Partial<TestGatewayOptions> = {},
): ConsoleFixture {
  let gw: TestGateway | undefined;
  let browser: Browser | undefined;
  beforeAll(async () => {
    gw = await startTestGateway({ store: 'memory', logLevel: 'silent', ...options });
    browser = await launchBrowser();
    for (const id of studios) await createStudio(gw, id);
  });
  afterAll(async () => {
    await browser?.close();
    await gw?.close();
  });
  const ready = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the console fixture is used before its suite started');
    return value;
  };
  return {
    get gw() {
      return ready(gw);
    },
    get browser() {
      return ready(browser);
    },
  };
}

/**
 * The end of a run at phone width: nothing scrolls the page sideways, no serious accessibility
 * violation, a screenshot, nothing went wrong in the page; then its context is closed.
 */
export async function finishAtPhoneWidth(watched: WatchedPage, name: string): Promise<void> {
  const { page } = watched;
  const overflow = (await page.evaluate(
    'document.documentElement.scrollWidth - window.innerWidth',
  )) as number;
  expect(overflow).toBeLessThanOrEqual(0);
  await screenshot(page, name);
  expect(await seriousViolations(page)).toEqual([]);
  watched.expectNoProblems();
  await watched.context.close();
}

/** Signs in with a credential (the admin key or a user token) as a person would, and opens `path` from the menu. */
export async function signIn(watched: WatchedPage, gw: TestGateway, credential: string): Promise<void> {
  const { page } = watched;
  await page.goto(`${gw.url}/console/`);
  await page.getByLabel('Admin key or user token').fill(credential);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('navigation', { name: 'Console' }).waitFor();
}

/** Opens a page of the console from its menu. */
export async function openFromMenu(watched: WatchedPage, title: string): Promise<void> {
  await watched.page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: title }).click();
  await watched.page.getByRole('heading', { level: 1, name: title }).waitFor();
}

/** A user token of `studioId`, issued by the admin through the API. */
export async function issueToken(
  gw: TestGateway,
  studioId: string,
  extra: { name?: string; models?: string[] } = {},
): Promise<{ secret: string; id: string }> {
  const res = await gw.api('POST', '/v1/studios/tokens/apply', {
    token: gw.adminKey,
    body: { studio_id: studioId, ...extra },
  });
  if (res.status !== 201) throw new Error(`tokens/apply: ${res.status} ${res.text}`);
  return { secret: res.json.user_token, id: res.json.token.id };
}

export async function createStudio(gw: TestGateway, id: string, name = id): Promise<void> {
  const res = await gw.api('POST', '/v1/studios/create', {
    token: gw.adminKey,
    body: { studio_id: id, name },
  });
  if (res.status !== 201) throw new Error(`studios/create: ${res.status} ${res.text}`);
}

/** The alert a refusal shows: its text, which carries the envelope's message, code and request id. */
export async function alertText(watched: WatchedPage): Promise<string> {
  const alert = watched.page.getByRole('alert');
  await alert.waitFor();
  return (await alert.textContent()) ?? '';
}

export const REQUEST_ID = /request id [0-9a-f-]{36}/;
