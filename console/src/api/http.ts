import { ApiFailure, failureOf, unreachable } from './failure.ts';

/** Sent on every console request: what lets the session cookie count (a cross-site page cannot send it). */
export const CONSOLE_HEADERS = { 'x-studio-console': '1' } as const;

/** Ended when the console signs out: the requests made for the session that ends end with it. */
let sessionRequests = new AbortController();

/** Aborts every console request under way (see `App`'s sign-out); later ones go on as usual. */
export function endSessionRequests(): void {
  sessionRequests.abort();
  sessionRequests = new AbortController();
}

/**
 * `fetch` with the console's header and the session cookie; network errors become `ApiFailure`s.
 * It ends, aborted, when its own signal aborts or the session's requests end.
 */
export async function consoleFetch(input: RequestInfo | URL, init: RequestInit = {}): Promise<Response> {
  const signals = [sessionRequests.signal];
  if (input instanceof Request) signals.push(input.signal);
  if (init.signal) signals.push(init.signal);
  const request = new Request(input, {
    ...init,
    credentials: 'same-origin',
    signal: AbortSignal.any(signals),
  });
  for (const [name, value] of Object.entries(CONSOLE_HEADERS)) request.headers.set(name, value);
  try {
    return await fetch(request);
  } catch (error) {
    throw unreachable(error);
  }
}

/** A JSON request outside the typed clients (the console's own session routes). Throws `ApiFailure`. */
export async function requestJson<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  const response = await consoleFetch(path, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const parsed: unknown = await response.json().catch(() => undefined);
  if (!response.ok) throw failureOf(response, parsed);
  return parsed as T;
}

/** What `openapi-fetch` answers, turned into the data or a thrown `ApiFailure`. */
export function unwrap<T>(answer: { data?: T; error?: unknown; response: Response }): T {
  if (answer.response.ok) return answer.data as T;
  throw failureOf(answer.response, answer.error);
}

export { ApiFailure };
