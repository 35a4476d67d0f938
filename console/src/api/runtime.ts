import createClient from 'openapi-fetch';
import { RemoteAgent } from '../../../sdk/index.ts';
import { unreachable } from './failure.ts';
import type { paths } from './generated/runtime.ts';

/**
 * The runtime's API from the page it serves: `/api/*` typed by the runtime's OpenAPI document, the
 * session routes through the SDK (`RemoteAgent`, typed by the session schemas). A runtime bound
 * beyond loopback needs STUDIO_RUNTIME_TOKEN: the console asks for it and keeps it in memory only.
 */
let token: string | undefined;

export function setRuntimeToken(value: string | undefined): void {
  token = value;
}

/** `fetch` with the runtime token (when one was given); network errors become `ApiFailure`s. */
export async function runtimeFetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
  const request = new Request(input, init);
  if (token) request.headers.set('authorization', `Bearer ${token}`);
  try {
    return await fetch(request);
  } catch (error) {
    throw unreachable(error);
  }
}

export const runtime = createClient<paths>({ baseUrl: window.location.origin, fetch: runtimeFetch });

export const agent = () => new RemoteAgent({ baseUrl: window.location.origin, token, fetch: runtimeFetch });
