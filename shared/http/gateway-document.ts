import type { ErrorCode } from '../errors.ts';
import { STUDIO_VERSION as version } from '../paths.ts';
import type { AnyPathEndpoint } from './action.ts';
import type { IdentityKind } from './identity.ts';
import { type DescribedEndpoint, describeAction, describeRoute, openApiDocument } from './openapi.ts';
import type { ActionRegistry } from './registry.ts';

/** Where the gateway's OpenAPI document is served. */
export const GATEWAY_DOCUMENT_PATH = '/v1/openapi.json';

/** Who may call a gateway endpoint that does not say (as `serve`'s default). */
const GATEWAY_DEFAULT_IDENTITIES: readonly IdentityKind[] = ['user'];

/**
 * Every `/v1` request is authenticated before it is routed (a refused credential is a 401 even where
 * guests are let in, a paused studio's token a 403) and refused while the read models are stale.
 */
const V1_ERRORS: readonly ErrorCode[] = ['unauthenticated', 'studio_paused', 'unavailable'];

function tagOf(path: string): string {
  if (path === '/health' || path === '/ready') return 'probes';
  if (path === '/v1/services') return 'services';
  return path.startsWith('/console/') ? 'console' : 'reference';
}

/** The gateway's OpenAPI document: every action of `registry` and the app's own `routes`. */
export function gatewayDocument(registry: ActionRegistry, routes: readonly AnyPathEndpoint[]) {
  const endpoints: DescribedEndpoint[] = [
    ...routes.map((route) =>
      describeRoute(route, tagOf(route.path), route.identities ?? GATEWAY_DEFAULT_IDENTITIES),
    ),
    ...registry
      .services()
      .flatMap((service) =>
        service.actions.map((action) => describeAction(action, GATEWAY_DEFAULT_IDENTITIES)),
      ),
  ];
  return openApiDocument(endpoints, {
    title: 'Studio gateway',
    version,
    description:
      'Every action of the gateway at `/v1/{service}/{action}`. Errors are one envelope (`Error`), except on routes that speak another API’s wire format (Anthropic’s Messages API). `x-identities` names who may call an operation; `x-error-codes` the codes it can answer.',
    bearer: 'A user token (`stk_…`) of one studio, or the admin key',
    // Outside `/v1` (probes, the reference page) no credential is read.
    securityOf: (endpoint) => (endpoint.path.startsWith('/v1/') ? undefined : []),
    commonErrors: (endpoint) => {
      if (!endpoint.path.startsWith('/v1/')) return [];
      // What guests may do (sign in) is bounded per client address: they carry no credential to count by.
      const guests = endpoint.identities?.length === 0 || endpoint.identities?.includes('guest');
      return guests && endpoint.path !== GATEWAY_DOCUMENT_PATH ? [...V1_ERRORS, 'rate_limited'] : V1_ERRORS;
    },
  });
}
