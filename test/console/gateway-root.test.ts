import { describe, expect, it } from 'vitest';
import { browserSkip, openPage } from './support/browser.ts';
import { consoleFixture } from './support/fixture.ts';

// Where a person lands: the gateway's `/` sends them to the console, and its sign-in offers only
// what this gateway can do (no OAuth without a provider configured).

const fx = consoleFixture([]);

describe('the gateway root', () => {
  it('redirects to the console (302), and leaves /health and /v1 as they were', async () => {
    const root = await fetch(`${fx.gw.url}/`, { redirect: 'manual' });
    expect(root.status).toBe(302);
    expect(root.headers.get('location')).toBe('/console/');
    const health = await fetch(`${fx.gw.url}/health`, { redirect: 'manual' });
    expect(health.status).toBe(200);
    expect(health.headers.get('content-type')).toMatch(/^application\/json/);
    const v1 = await fetch(`${fx.gw.url}/v1/studios/list`, { redirect: 'manual' });
    expect(v1.status).toBe(401);
    expect(((await v1.json()) as { error: { code: string } }).error.code).toBe('unauthenticated');
    const unknown = await fetch(`${fx.gw.url}/nothing-here`, { redirect: 'manual' });
    expect(unknown.status).toBe(404);
  });

  it('names no OAuth provider while none is configured', async () => {
    const res = await fx.gw.api('GET', '/v1/accounts/oauth/providers');
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ items: [] });
  });
});

describe.skipIf(browserSkip !== undefined)('the gateway root in a browser', () => {
  it('opens the console sign-in, offering no OAuth tab without a provider', async () => {
    const watched = await openPage(fx.browser);
    const { page } = watched;
    const asked = page.waitForResponse((r) => r.url().endsWith('/v1/accounts/oauth/providers'));
    await page.goto(`${fx.gw.url}/`);
    await page.getByLabel('Admin key or user token').waitFor();
    expect((await asked).status()).toBe(200);
    expect(new URL(page.url()).pathname).toBe('/console/');
    const tabs = page.getByRole('tablist', { name: 'How to sign in' }).getByRole('tab');
    expect(await tabs.allTextContents()).toEqual(['Key or token', 'Account']);
    watched.expectNoProblems();
    await watched.context.close();
  });
});
