import { type Browser, formOf } from './browser.ts';
import type { Person } from './oidc.ts';

export const CALLBACK_PATH = '/v1/accounts/oauth/callback';

/** Whether a URL is the gateway's OAuth callback. */
export const isCallback = (url: URL) => url.pathname === CALLBACK_PATH;

/**
 * Does at the provider what a person does: opens the authorization URL, logs in as `person`,
 * consents, and returns the callback URL the provider redirects the browser to (not loaded).
 */
export async function signInAtProvider(
  browser: Browser,
  authorizationUrl: string,
  person: Person,
): Promise<URL> {
  let page = await browser.visit(authorizationUrl, { stopAt: isCallback });
  for (let step = 0; step < 6; step++) {
    if (page.stopped) return page.url;
    const form = formOf(page);
    const fill: Record<string, string> =
      form.fields.prompt === 'login' ? { login: person, password: 'whatever' } : {};
    page = await browser.submit(form, fill, isCallback);
  }
  throw new Error(`the provider never sent the browser back: ${page.url.href}`);
}

/** Opens the authorization URL and cancels at the login page: the provider answers `error=access_denied`. */
export async function cancelAtProvider(browser: Browser, authorizationUrl: string): Promise<URL> {
  const login = await browser.visit(authorizationUrl, { stopAt: isCallback });
  if (login.stopped) throw new Error('expected the login page');
  const back = await browser.visit(`${login.url.href.replace(/\/$/, '')}/abort`, { stopAt: isCallback });
  if (!back.stopped)
    throw new Error(`the provider did not send the browser back: ${back.status} ${back.body.slice(0, 200)}`);
  return back.url;
}

/** The one-time sign-in code a completed callback showed the browser: on its page, or `code=` on its redirect. */
export function shownSignInCode(page: { body: string; headers?: Headers }): string | undefined {
  const onPage = /<p class="code">([A-Z0-9-]+)<\/p>/.exec(page.body)?.[1];
  if (onPage) return onPage;
  const location = page.headers?.get('location');
  return location ? (new URL(location).searchParams.get('code') ?? undefined) : undefined;
}
