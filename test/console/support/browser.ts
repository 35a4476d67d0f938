import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { expect, vi } from 'vitest';
import { notRunHere } from '../../support/not-run-here.ts';

/**
 * Debian's Chromium driven by playwright-core (never a downloaded browser). The flags keep it off
 * the network it cannot reach here (docs/console.md).
 */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Set when the browser suites cannot run here (they skip, except under `CI=true`, where they fail). */
export const browserSkip = notRunHere(
  'the browser tests',
  existsSync(CHROMIUM_PATH)
    ? undefined
    : `no Chromium at ${CHROMIUM_PATH} (apt-get install -y chromium, or set CHROMIUM_PATH)`,
);
const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

// A browser test walks a whole page (axe twice, screenshots): on a loaded 2-core machine that can take
// many times its usual few seconds. Every suite that drives Chromium imports this module.
vi.setConfig({ testTimeout: 90_000 });

/** Where screenshots go (kept by CI as artifacts; not in git). */
export const ARTIFACTS_DIR = join(process.cwd(), 'test-artifacts', 'console');

export const DESKTOP = { width: 1280, height: 800 } as const;
export const PHONE = { width: 390, height: 844 } as const;

export interface WatchedPage {
  page: Page;
  context: BrowserContext;
  /** Console errors, page errors, failed requests and 5xx answers seen so far. */
  problems: string[];
  /** Answers with these statuses are expected from now on (a test that provokes a refusal). */
  allowStatuses(...statuses: number[]): void;
  /** Fails the test when anything went wrong in the page so far. */
  expectNoProblems(): void;
}

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_FLAGS });
}

/** A fresh context (its own cookies) and page, watched for everything that should never happen. */
export async function openPage(
  browser: Browser,
  options: { viewport?: { width: number; height: number }; colorScheme?: 'light' | 'dark' } = {},
): Promise<WatchedPage> {
  const context = await browser.newContext({
    viewport: options.viewport ?? DESKTOP,
    colorScheme: options.colorScheme ?? 'light',
  });
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  const page = await context.newPage();
  const problems: string[] = [];
  const allowed = new Set<number>();
  page.on('console', (message) => {
    if (message.type() !== 'error') return;
    const status = /status of (\d{3})/.exec(message.text())?.[1];
    if (status !== undefined && allowed.has(Number(status))) return;
    const where = message.location().url;
    problems.push(`console error: ${message.text()}${where ? ` (${where})` : ''}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('requestfailed', (request) => {
    // A stream the page itself closes (leaving a page, an SSE reconnect) is not a failure.
    if (request.failure()?.errorText === 'net::ERR_ABORTED') return;
    problems.push(`request failed: ${request.method()} ${request.url()} ${request.failure()?.errorText}`);
  });
  page.on('response', (response) => {
    if (response.status() >= 500) problems.push(`${response.status()} from ${response.url()}`);
  });
  return {
    page,
    context,
    problems,
    allowStatuses: (...statuses) => {
      for (const status of statuses) allowed.add(status);
    },
    expectNoProblems: () => expect(problems).toEqual([]),
  };
}

/** Saves a full-page screenshot under test-artifacts/console/<name>.png. */
export async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(ARTIFACTS_DIR, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS_DIR, `${name}.png`), fullPage: true });
}

const require = createRequire(import.meta.url);
let axeSource: Promise<string> | undefined;

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[] }[];
}

/**
 * axe-core on the page as it is now. axe's source is evaluated through the DevTools protocol, which
 * the page's Content-Security-Policy does not apply to (the policy stays on for everything else).
 * Returns the serious and critical violations.
 */
export async function seriousViolations(page: Page): Promise<string[]> {
  axeSource ??= readFile(require.resolve('axe-core/axe.min.js'), 'utf8');
  const source = await axeSource;
  await page.evaluate(source);
  // In-page expressions are strings: the test's own types stay Node's.
  const violations = (await page.evaluate(
    'axe.run(document).then((result) => result.violations)',
  )) as AxeViolation[];
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map(
      (v) => `${v.impact} ${v.id}: ${v.help} (${v.nodes.map((n) => JSON.stringify(n.target)).join(', ')})`,
    );
}

/** Screenshots at desktop width, light and dark, and the accessibility check of each. */
export async function checkPage(watched: WatchedPage, name: string): Promise<void> {
  const { page } = watched;
  expect(await seriousViolations(page)).toEqual([]);
  await screenshot(page, `${name}-light`);
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.evaluate("document.documentElement.dataset.theme = 'dark'");
  expect(await seriousViolations(page)).toEqual([]);
  await screenshot(page, `${name}-dark`);
  await page.evaluate("document.documentElement.dataset.theme = 'light'");
  await page.emulateMedia({ colorScheme: 'light' });
  watched.expectNoProblems();
}
