import type { ApiResponse, TestGateway } from './gateway.ts';

/** Where an admin request goes: a test gateway (its `api` and admin key). */
export type AdminTarget = Pick<TestGateway, 'api' | 'adminKey'>;

/**
 * The one admin request of the tests: sent with the gateway's admin key; throws with the status and
 * the body's text unless the answer is a 2xx, else answers it (`json` parsed). For an answer a test
 * checks itself (a refusal), `gw.api(method, path, { token: gw.adminKey, body })` is the raw way.
 */
export async function adminOk(
  gw: AdminTarget,
  method: string,
  path: string,
  body?: unknown,
): Promise<ApiResponse> {
  const res = await gw.api(method, path, { token: gw.adminKey, body });
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
