import { scrubCredentials } from '../../../../shared/scrub-credentials.ts';

export interface WebhookOutcome {
  status: 'delivered' | 'failed';
  httpStatus: number | null;
  /** Why it failed, with every credential of the URL (or of a redirect's target) scrubbed. */
  error: string | null;
}

/**
 * POSTs `body` as JSON to the outbound webhook. A `user:password@` in the URL is sent as Basic
 * authorization (fetch refuses a URL holding credentials). A redirect is not followed: the body would
 * go to a host nobody configured, so a 3xx is a failed delivery. The outcome goes into an event,
 * so its error text never holds the URL's credentials.
 */
export async function postToWebhook(url: string, body: unknown, timeoutMs: number): Promise<WebhookOutcome> {
  const secrets = credentialsOf(url);
  const failed = (httpStatus: number | null, error: string): WebhookOutcome => ({
    status: 'failed',
    httpStatus,
    error: scrubCredentials(error, secrets),
  });
  try {
    const { target, authorization } = withoutUserinfo(url);
    const response = await fetch(target, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
      body: JSON.stringify(body),
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
    await response.body?.cancel();
    if (response.status >= 300 && response.status < 400) {
      const location = response.headers.get('location');
      return failed(
        response.status,
        `the webhook answered ${response.status}, a redirect (not followed)${location ? ` to ${location}` : ''}`,
      );
    }
    if (!response.ok) return failed(response.status, `the webhook answered ${response.status}`);
    return { status: 'delivered', httpStatus: response.status, error: null };
  } catch (error) {
    return failed(null, `could not reach the webhook: ${describe(error)}`);
  }
}

function withoutUserinfo(url: string): { target: string; authorization: string | null } {
  const parsed = new URL(url);
  if (!parsed.username && !parsed.password) return { target: url, authorization: null };
  const [user, password] = credentialsOf(url);
  parsed.username = '';
  parsed.password = '';
  const basic = Buffer.from(`${user}:${password}`).toString('base64');
  return { target: parsed.href, authorization: `Basic ${basic}` };
}

/** The URL's user name and password, decoded (as they may appear in an error text). */
function credentialsOf(url: string): [string, string] {
  const parsed = URL.canParse(url) ? new URL(url) : undefined;
  return [decoded(parsed?.username ?? ''), decoded(parsed?.password ?? '')];
}

function decoded(component: string): string {
  try {
    return decodeURIComponent(component);
  } catch {
    return component;
  }
}

/** fetch says "fetch failed" and puts the reason in `cause`. */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? error.cause.message : undefined;
  return cause && cause !== error.message ? `${error.message} (${cause})` : error.message;
}
