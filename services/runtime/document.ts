import type { ErrorCode } from '../../shared/errors.ts';
import { type AnyPathEndpoint, defineEndpoint, noInput } from '../../shared/http/action.ts';
import { docsRoute } from '../../shared/http/docs-page.ts';
import { describeRoute, type OpenApiDocument, openApiDocument } from '../../shared/http/openapi.ts';
import { STUDIO_VERSION as version } from '../../shared/paths.ts';

/** Where the runtime's OpenAPI document is served (beside its routes, though open without the runtime's token). */
export const RUNTIME_DOCUMENT_PATH = '/api/openapi.json';

/** Every request passes the host and origin guard; every `/api` one the runtime's token, when it has one (not the document). */
const GUARDED: readonly ErrorCode[] = ['host_not_allowed', 'origin_not_allowed'];
const GUARDED_API: readonly ErrorCode[] = [...GUARDED, 'unauthenticated'];

const behindToken = (path: string) => path.startsWith('/api/') && path !== RUNTIME_DOCUMENT_PATH;

/** `/api/sdk/sessions/:id/prompt` → `sessions`; `/api/plugins/list` → `plugins`; `/health` → `probes`. */
function tagOf(path: string): string {
  if (path.startsWith('/api/sdk/')) return 'sessions';
  const [, api, area] = path.split('/');
  if (api !== 'api') return path === '/docs' ? 'reference' : 'probes';
  return area === 'openapi.json' ? 'reference' : (area ?? 'api');
}

/** The runtime's OpenAPI document: its routes and the session routes, as mounted. */
export function runtimeDocument(routes: readonly AnyPathEndpoint[], tokenRequired: boolean): OpenApiDocument {
  return openApiDocument(
    // The runtime has no identities: whoever passes its guard (and its token on `/api`) may call a route.
    routes.map(({ identities: _none, ...route }) => describeRoute(route, tagOf(route.path))),
    {
      title: 'Studio agent runtime',
      version,
      description:
        'The agent runtime’s routes (`/api/*`) and the session API (`/api/sdk/*`). Most `/api` answers are `{success: true, …}`; the session API answers the shapes given here. Errors are one envelope (`Error`).',
      bearer: 'STUDIO_RUNTIME_TOKEN: every `/api` route needs it when the runtime has one',
      securityOf: (endpoint) =>
        !behindToken(endpoint.path) ? [] : tokenRequired ? [{ bearer: [] }] : [{}, { bearer: [] }],
      commonErrors: (endpoint) => (behindToken(endpoint.path) ? GUARDED_API : GUARDED),
    },
  );
}

/**
 * `/api/openapi.json` and `/docs`, open to whoever passes the origin guard (not behind the runtime's
 * token); the document describes `served()`, made on first use.
 */
export function runtimeDocsRoutes(
  served: () => readonly AnyPathEndpoint[],
  options: { tokenRequired: boolean },
): { routes: AnyPathEndpoint[]; describe: () => OpenApiDocument } {
  let document: OpenApiDocument | undefined;
  const describe = () => {
    document ??= runtimeDocument(served(), options.tokenRequired);
    return document;
  };
  const routes = [
    defineEndpoint({ method: 'GET', path: RUNTIME_DOCUMENT_PATH, input: noInput, handler: () => describe() }),
    docsRoute('Studio agent runtime API'),
  ];
  return { routes, describe };
}
