import type { ApiResponse, TestGateway } from './gateway.ts';

/** Where an admin request goes: a test gateway (its `api`), or a gateway process at `url`. */
export type AdminTarget = Pick<TestGateway, 'api' | 'adminKey'> | { url: string; adminKey: string };

/**
 * The one admin request of the tests, answered as it came, whatever its status (for a refusal a test
 * checks): sent with the gateway's admin key, the body as JSON. A process that stops answering fails
 * the request after 30 s instead of hanging the test.
 */
export async function asAdmin(
  gw: AdminTarget,
  method: string,
  path: string,
  body?: unknown,
): Promise<ApiResponse> {
  if ('api' in gw) return gw.api(method, path, { token: gw.adminKey, body });
  const res = await fetch(gw.url + path, {
    method,
    headers: {
      authorization: `Bearer ${gw.adminKey}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, json, text };
}

/** `asAdmin`, for a request that must succeed: throws with the status and the body's text unless a 2xx. */
export async function adminOk(
  gw: AdminTarget,
  method: string,
  path: string,
  body?: unknown,
): Promise<ApiResponse> {
  const res = await asAdmin(gw, method, path, body);
  if (res.status < 200 || res.status >= 300)
    throw new Error(`${method} ${path} → ${res.status}: ${res.text}`);
  return res;
}

/** Creates studio `studioId` (named after it); answers its id. */
export async function createStudio(gw: AdminTarget, studioId: string): Promise<string> {
  return (await adminOk(gw, 'POST', '/v1/studios/create', { name: studioId, studio_id: studioId })).json.id;
}

/** Creates studio `id` with one user token (`token`: more fields of the token, e.g. its `models`); answers its secret and id. */
export async function studioWithToken(
  gw: AdminTarget,
  id: string,
  token: Record<string, unknown> = {},
): Promise<{ token: string; tokenId: string }> {
  await createStudio(gw, id);
  const issued = await adminOk(gw, 'POST', '/v1/studios/tokens/apply', { studio_id: id, ...token });
  return { token: issued.json.user_token, tokenId: issued.json.token.id };
}
