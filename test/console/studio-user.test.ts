import { beforeAll, describe, expect, it } from 'vitest';
import { browserSkip, checkPage, openPage, PHONE } from './support/browser.ts';
import { consoleFixture, finishAtPhoneWidth, issueToken, openFromMenu, signIn } from './support/fixture.ts';

// A studio's user signed in with its token: the console shows what the gateway lets it see, and
// the gateway refuses the rest even when the page is bypassed.

const fx = consoleFixture(['acme', 'globex']);
let mine: { secret: string; id: string };

beforeAll(async () => {
  mine = await issueToken(fx.gw, 'acme', { name: 'my laptop', models: ['dev/*'] });
  await issueToken(fx.gw, 'acme', { name: 'acme ci' });
  await issueToken(fx.gw, 'globex', { name: 'globex secret project' });
});

describe.skipIf(browserSkip !== undefined)('console: a studio user', () => {
  it("sees its own studio's tokens read-only and none of the admin's pages", async () => {
    const watched = await openPage(fx.browser);
    const { page } = watched;
    await signIn(watched, fx.gw, mine.secret);
    await page.getByText(`Studio acme (token ${mine.id})`).waitFor();
    const menu = page.getByRole('navigation', { name: 'Console' }).getByRole('link');
    expect(await menu.allTextContents()).toEqual([
      'Overview',
      'Requests',
      'Tokens',
      'Models',
      'Prices',
      'Usage',
      'Alerts',
    ]);

    await openFromMenu(watched, 'Tokens');
    const own = page.getByRole('row', { name: /my laptop/ });
    await own.getByText('this token').waitFor();
    await page.getByRole('row', { name: /acme ci/ }).waitFor();
    expect(await page.getByText('globex secret project').count()).toBe(0);
    expect(await page.getByRole('form', { name: 'Issue a token' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: /Revoke/ }).count()).toBe(0);
    expect(await page.getByLabel('Studio').count()).toBe(0);
    await checkPage(watched, 'tokens-user');

    // An admin page typed into the address bar is not there: the console goes to the user's first page.
    for (const path of ['/studios', '/env', '/accounts']) {
      await page.goto(`${fx.gw.url}/console/#${path}`);
      await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    }
    watched.expectNoProblems();
    await watched.context.close();
  });

  it('is refused by the gateway what the console does not offer it, from the page’s own session', async () => {
    const watched = await openPage(fx.browser);
    watched.allowStatuses(403);
    const { page } = watched;
    await signIn(watched, fx.gw, mine.secret);
    // The page's own fetch: its session cookie with the console's header, as the console sends them.
    const call = (method: string, path: string, body?: unknown) =>
      page.evaluate(
        `fetch(${JSON.stringify(path)}, { method: ${JSON.stringify(method)}, headers: { 'x-studio-console': '1', 'content-type': 'application/json' }, ${
          body === undefined ? '' : `body: ${JSON.stringify(JSON.stringify(body))}`
        } }).then(async (r) => ({ status: r.status, body: await r.json() }))`,
      ) as Promise<{ status: number; body: { error?: { code: string } } }>;

    const own = await call('GET', '/v1/studios/tokens/list');
    expect(own.status).toBe(200);
    const refusals = [
      ['GET', '/v1/studios/tokens/list?studio_id=globex', undefined, 'studio_mismatch'],
      ['POST', '/v1/studios/tokens/apply', { studio_id: 'acme' }, 'forbidden'],
      ['POST', '/v1/studios/tokens/revoke', { token_id: mine.id }, 'forbidden'],
      ['GET', '/v1/studios/list', undefined, 'forbidden'],
      ['GET', '/v1/env/list', undefined, 'forbidden'],
      ['GET', '/v1/accounts/list?studio_id=acme', undefined, 'forbidden'],
      ['POST', '/v1/ai/prices/upsert', { model: 'dev/echo', input_per_mtok: 0 }, 'forbidden'],
    ] as const;
    for (const [method, path, body, code] of refusals) {
      const answer = await call(method, path, body);
      expect({ path, status: answer.status, code: answer.body.error?.code }).toEqual({
        path,
        status: 403,
        code,
      });
    }
    // Nothing changed: the token is live, no token was issued.
    const tokens = await fx.gw.api('GET', '/v1/studios/tokens/list?studio_id=acme', {
      token: fx.gw.adminKey,
    });
    expect(
      tokens.json.items.map((t: { name: string; revoked_at: string | null }) => [t.name, t.revoked_at]),
    ).toEqual([
      ['my laptop', null],
      ['acme ci', null],
    ]);
    await watched.context.close();
  });

  it('fits a phone', async () => {
    const watched = await openPage(fx.browser, { viewport: PHONE });
    const { page } = watched;
    await signIn(watched, fx.gw, mine.secret);
    await openFromMenu(watched, 'Tokens');
    await page.getByRole('row', { name: /my laptop/ }).waitFor();
    await finishAtPhoneWidth(watched, 'tokens-user-phone');
  });
});
