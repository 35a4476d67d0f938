import type { RequestListener } from 'node:http';
import type { BlockList } from 'node:net';
import express, { type Express } from 'express';
import { ApiError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { notePattern, observeRequests } from '../observability/http.ts';
import type { MetricsRegistry } from '../observability/metrics.ts';
import { metricsRoute, type ScrapeAccess } from '../observability/metrics-route.ts';
import { tracing } from '../observability/tracing.ts';
import { type AnyPathEndpoint, defineEndpoint, noInput } from './action.ts';
import { LargeBodyBudget } from './body-budget.ts';
import { identify, type WireDialect } from './dialect.ts';
import { docsRoute, mountDocsAssets } from './docs-page.ts';
import type { Drain } from './drain.ts';
import { EndpointTable } from './endpoint-table.ts';
import { errorMiddleware, sendError } from './errors.ts';
import { frontDoor } from './front-door.ts';
import { GATEWAY_DOCUMENT_PATH, gatewayDocument } from './gateway-document.ts';
import type { Authenticator } from './identity.ts';
import type { OpenApiDocument } from './openapi.ts';
import { type Readiness, readyRoute } from './probes.ts';
import type { ActionRegistry } from './registry.ts';
import { pathOf, type ServedRequest, type ServedResponse } from './request.ts';
import { RightsWatch } from './rights.ts';
import { type ServePolicy, serve } from './serve.ts';
import { isUnderV1, v1ActionOf } from './v1-path.ts';

export { BODY_LIMIT_BYTES } from './serve.ts';

export interface HttpAppOptions {
  registry: ActionRegistry;
  authenticator: Authenticator;
  logger: Logger;
  /** GET /health: always 200 while the process serves; the body says `ok` or `degraded`. */
  health: () => Promise<Record<string, unknown>>;
  /** Bytes of request bodies over 1 MiB handled at once (default 256 MiB); beyond, 503 `overloaded`. */
  largeBodiesBudgetBytes?: number;
  /** Proxies whose `X-Forwarded-For` names the client (`STUDIO_TRUSTED_PROXIES`). */
  trustedProxies?: BlockList;
  /** GET /ready: 200 when `ready`, else 503 (for load balancers: send no traffic here yet). */
  ready?: () => Promise<Readiness>;
  /** Counts requests in flight, and refuses new ones once the process drains (see `Drain`). */
  drain?: Drain;
  /**
   * Called before every `/v1` request, credential or not: throws (503 `unavailable`) while the
   * read models the API answers from cannot be trusted, so nothing is answered from stale state.
   */
  assertServing?: () => void;
  /** Every request counted and timed, and GET /metrics for whom `scrapeAccess` allows. */
  metrics?: { metrics: MetricsRegistry; scrapeAccess: ScrapeAccess };
  /** A browser session's credential (the console's cookie), used when a request sends no credential header. */
  sessionCredential?: (req: ServedRequest) => string | undefined;
  /** Endpoints outside `/v1` (the console's session), served and described in the API's document. */
  routes?: readonly AnyPathEndpoint[];
  /** Endpoints under `/v1` beside the registry's actions (`/v1/mcp`), behind its credential check. */
  v1Routes?: readonly AnyPathEndpoint[];
  /** The `WWW-Authenticate` challenge a 401 at `path` carries, where its clients read one (`/v1/mcp`). */
  challengeAt?: (req: ServedRequest, path: string) => string | undefined;
  /** Anything else outside `/v1` (the console's pages and assets), mounted before the 404. */
  extraRoutes?: (app: Express) => void;
}

/**
 * An express app as Studio's servers use one, behind the front door (`frontDoor`) for what is not an
 * endpoint it finds itself: files (pages, static assets). `endExpressApp` ends it with the 404.
 */
export function expressApp(): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  return app;
}

/** After everything `app` serves: the 404, and anything thrown answered in the one error envelope. */
export function endExpressApp(app: Express, logger: Logger): void {
  app.use((req, res) => {
    sendError(res, new ApiError('not_found', `no route ${req.method} ${pathOf(req.originalUrl)}`));
  });
  app.use(errorMiddleware(logger));
}

/** How metrics name a `/v1/{service}/{action}` request no action served (an unknown action, a 405). */
const V1_ACTION_PATTERN = '/v1/:service/*action';

/**
 * The gateway's HTTP shell: the front door, then everything under /v1 (the registry's actions and a
 * few GET routes) and the endpoints at paths of their own (probes, the reference page, the console's
 * session) served from the path it reads itself; files (the console, the page's assets) and the
 * 404 through express.
 */
export function createHttpApp(options: HttpAppOptions): RequestListener {
  const { registry, authenticator, logger } = options;
  const observed = options.metrics;
  const largeBodies = new LargeBodyBudget(options.largeBodiesBudgetBytes);
  const rights = new RightsWatch((req) => {
    // A console session signed out leaves no credential: the request would be a guest's now.
    if (identify(authenticator, req, options.sessionCredential).kind !== req.identity.kind)
      throw new ApiError('unauthenticated', 'the credential this answer was opened with has ended');
  });
  const routes = appRoutes(options);

  // Everything is read from the path, not matched by express's router: the same answers (paths
  // case-insensitive, a trailing slash allowed, percent-decoding per segment) for a fraction of the work.
  // Endpoints of other services under /v1 are served as their actions are: large bodies budgeted,
  // rights watched while their answers run.
  const v1Endpoints = new EndpointTable().add(routes.v1).add(options.v1Routes ?? [], { largeBodies, rights });
  const open = new EndpointTable().add([...routes.open, ...(options.routes ?? [])]);
  const v1 = (req: ServedRequest, res: ServedResponse, path: string): Promise<void> | undefined => {
    options.assertServing?.();
    try {
      req.identity = identify(authenticator, req, options.sessionCredential);
    } catch (error) {
      const challenge = options.challengeAt?.(req, path);
      if (challenge === undefined || !(error instanceof ApiError) || error.status !== 401) throw error;
      throw new ApiError(error.code, error.message, {
        ...error.options,
        headers: { ...error.options.headers, 'WWW-Authenticate': challenge },
      });
    }
    const served = v1Endpoints.serve(req, res, path);
    if (served) return served;
    const action = v1ActionOf(path);
    if (action === undefined) throw new ApiError('not_found', `no route ${req.method} ${path}`);
    notePattern(res, V1_ACTION_PATTERN);
    return dispatch(registry, { largeBodies, rights }, action.service, action.action, req, res);
  };

  // Express serves files alone: the reference page's assets and the console.
  const rest = expressApp();
  mountDocsAssets(rest, GATEWAY_DOCUMENT_PATH);
  options.extraRoutes?.(rest);
  endExpressApp(rest, logger);
  return frontDoor({
    logger,
    ...(observed ? { observe: observeRequests(observed.metrics, tracing()) } : {}),
    dialectAt: (path) => dialectAt(registry, path),
    ...(options.drain ? { drain: options.drain } : {}),
    ...(options.trustedProxies ? { trustedProxies: options.trustedProxies } : {}),
    endpoints: (req, res, path) => (isUnderV1(path) ? v1(req, res, path) : open.serve(req, res, path)),
    rest,
  });
}

/**
 * The routes beside the registry's actions: the probes and the reference page, open to all, and
 * `/v1/services` and the API's document behind the `/v1` credential check.
 */
function appRoutes(options: HttpAppOptions) {
  const { registry } = options;
  const { metrics } = options;
  const open = [
    ...probeRoutes(options),
    docsRoute('Studio gateway API'),
    ...(metrics ? [metricsRoute(metrics.metrics, metrics.scrapeAccess)] : []),
  ];
  // Made on first use: serving it costs the start nothing.
  let document: OpenApiDocument | undefined;
  const v1: AnyPathEndpoint[] = [
    defineEndpoint({
      method: 'GET',
      path: '/v1/services',
      identities: ['user', 'admin'],
      input: noInput,
      handler: () => ({ items: registry.services().map(({ id, name, env }) => ({ id, name, env })) }),
    }),
    defineEndpoint({
      method: 'GET',
      path: GATEWAY_DOCUMENT_PATH,
      identities: [],
      input: noInput,
      handler: () => describe(),
    }),
  ];
  const describe = () => {
    document ??= gatewayDocument(registry, [
      ...open,
      ...v1,
      ...(options.v1Routes ?? []),
      ...(options.routes ?? []),
    ]);
    return document;
  };
  return { open, v1, describe };
}

/** The gateway's OpenAPI document, as `createHttpApp(options)` serves it (for writing it to a file). */
export function gatewayApiDocument(options: HttpAppOptions): OpenApiDocument {
  return appRoutes(options).describe();
}

/**
 * The wire dialect of the action a path under /v1 names, read as `v1` reads it (the same case
 * rules and percent-decoding), so a path the action serves is always answered in its shape. None for
 * a path that names no action; none for a bad percent-escape, which `v1` refuses in the one envelope.
 */
function dialectAt(registry: ActionRegistry, path: string): WireDialect | undefined {
  if (!isUnderV1(path)) return undefined;
  try {
    const action = v1ActionOf(path);
    return action && registry.dialectOf(action.service, action.action);
  } catch {
    return undefined;
  }
}

/** GET /health, always 200 while the process serves, and GET /ready for load balancers. */
function probeRoutes({ health, ready }: HttpAppOptions) {
  return [
    defineEndpoint({
      method: 'GET',
      path: '/health',
      identities: [],
      input: noInput,
      handler: () => health(),
    }),
    ...(ready ? [readyRoute(ready)] : []),
  ];
}

/** A `/v1/{service}/{action}` request: the registry names the action, `serve` does the rest. */
async function dispatch(
  registry: ActionRegistry,
  policy: ServePolicy,
  service: string,
  actionName: string,
  req: ServedRequest,
  res: ServedResponse,
): Promise<void> {
  const found = registry.resolve(req.method, service, actionName);
  if (found.kind === 'not_found') {
    throw new ApiError(
      'not_found',
      found.what === 'service'
        ? `unknown service "${service}"`
        : `service "${service}" has no action "${actionName}"`,
    );
  }
  if (found.kind === 'method_not_allowed') {
    throw new ApiError(
      'method_not_allowed',
      `${req.method} is not allowed here; use ${found.allowed.join(', ')}`,
      {
        headers: { Allow: found.allowed.join(', ') },
      },
    );
  }
  await serve(found.action, req, res, policy, found.params);
}
