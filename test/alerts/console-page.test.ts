import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../../shared/testing/wait.ts';
import { browserSkip, checkPage, openPage } from '../console/support/browser.ts';
import { consoleFixture, openFromMenu, signIn } from '../console/support/fixture.ts';
import { adminOk } from '../support/admin.ts';
import { chat, priceEcho, type Receiver, readmeVerify, startReceiver } from './support.ts';

// The console's Alerts page in Chromium: recent alerts, a webhook added from its form (its secret
// shown once), and its last delivery.

const fx = consoleFixture([], { logLevel: 'silent', processEnv: { STUDIO_ALERTS_RETRY_MS: '20' } });
let receiver: Receiver;
let token: string;

beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver?.close();
});

describe.skipIf(browserSkip !== undefined)('the Alerts page', () => {
  it('lists alerts, adds a webhook whose secret it shows once, then shows its delivery', async () => {
    await adminOk(fx.gw, 'POST', '/v1/studios/create', { name: 'Acme', studio_id: 'acme' });
    token = (await adminOk(fx.gw, 'POST', '/v1/studios/tokens/apply', { studio_id: 'acme' })).json.user_token;
    await priceEcho(fx.gw);
    await adminOk(fx.gw, 'POST', '/v1/studios/budgets/set', {
      studio_id: 'acme',
      amount_usd: 1,
      window: 'month',
      mode: 'soft',
    });
    expect(await chat(fx.gw, token)).toBe(200); // $0.90 of $1: 50 % and 80 %
    await waitUntil(
      async () => (await adminOk(fx.gw, 'GET', '/v1/alerts')).json.items.length === 2,
      'two alerts are raised',
    );

    const watched = await openPage(fx.browser);
    const { page } = watched;
    await signIn(watched, fx.gw, fx.gw.adminKey);
    await openFromMenu(watched, 'Alerts');
    await page.getByText('2 recent alerts').waitFor();
    await page.getByText(/80 % of the studio budget \(month:\d{4}-\d{2}\)/).waitFor();
    await page.getByText('No webhooks yet.').waitFor();

    const form = page.getByRole('form', { name: 'Add a webhook' });
    await form.getByLabel('Id').fill('ops');
    await form.getByLabel('URL').fill(receiver.url);
    await form.getByLabel(/^Studio/).fill('acme');
    await form.getByRole('button', { name: 'Save webhook' }).click();
    const shown = page.getByRole('status').filter({ hasText: 'shown this once' });
    const secret = (await shown.locator('code').nth(2).textContent()) ?? '';
    expect(secret).toMatch(/^whsec_/);
    await page.getByRole('table').getByText('none yet').waitFor();
    await checkPage(watched, 'alerts-admin');

    expect(await chat(fx.gw, token)).toBe(200); // 100 %
    await waitUntil(() => receiver.received.length === 1, 'the 100 % alert is delivered');
    expect(readmeVerify()(secret, receiver.received[0]!.headers, receiver.received[0]!.body)).toBe(true);
    await openFromMenu(watched, 'Usage');
    await openFromMenu(watched, 'Alerts');
    await page.getByText('3 recent alerts').waitFor();
    const row = page.getByRole('row').filter({ hasText: 'ops' });
    await row.getByText('delivered').waitFor();
    expect(await row.textContent()).toContain('1 attempt, 200');
    // Shown once: the list masks it.
    expect(await page.content()).not.toContain(secret);
    watched.expectNoProblems();
    await watched.context.close();

    const user = await openPage(fx.browser);
    await signIn(user, fx.gw, token);
    await openFromMenu(user, 'Alerts');
    await user.page.getByText('3 recent alerts').waitFor();
    expect(await user.page.getByRole('heading', { name: 'Webhooks' }).count()).toBe(0);
    user.expectNoProblems();
    await user.context.close();
  });
});
