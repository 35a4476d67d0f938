import { randomUUID } from 'node:crypto';
import express, { type Express, type Request, type RequestHandler, type Response } from 'express';
import { ApiError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { notePattern, observeRequests } from '../observability/http.ts';
import type { StudioMetrics } from '../observability/metrics.ts';
import { metricsRoute, type ScrapeAccess } from '../observability/metrics-route.ts';
import { tracing } from '../observability/tracing.ts';
import { type AnyRoute, defineRoute, noInput } from './action.ts';
import { LargeBodyBudget } from './body-budget.ts';
import { identify, speak, type WireDialect } from './dialect.ts';
import { docsRoute, mountDocsAssets } from './docs-page.ts';
import type { Drain } from './drain.ts';
import { errorMiddleware, sendError } from './errors.ts';
import { GATEWAY_DOCUMENT_PATH, gatewayDocument } from './gateway-document.ts';
import type { Authenticator, Identity } from './identity.ts';
import type { OpenApiDocument } from './openapi.ts';
import { type Readiness, readyRoute } from './probes.ts';
import type { ActionRegistry } from './registry.ts';
import { mountRoutes, REQUEST_ID, serve } from './serve.ts';
import { isUnderV1, routeKeyOf, v1ActionOf } from './v1-path.ts';

export { BODY_LIMIT_BYTES } from './serve.ts';

/** Who a request is until an identity step says otherwise. */
const GUEST: Identity = { kind: 'guest' };

export interface HttpAppOptions {
  registry: ActionRegistry;
  authenticator: Authenticator;
  logger: Logger;
  /** GET /health: always 200 while the process serves; the body says `ok` or `degraded`. */
  health: () => Promise<Record<string, unknown>>;
  /** Bytes of request bodies over 1 MiB handled at once (default 256 MiB); beyond, 503 `overloaded`. */
  largeBodiesBudgetBytes?: number;
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
  metrics?: { metrics: StudioMetrics; scrapeAccess: ScrapeAccess };
  /** A browser session's credential (the console's cookie), used when a request sends no credential header. */
  sessionCredential?: (req: Request) => string | undefined;
  /** Endpoints outside `/v1` (the console's session), served and described in the API's document. */
  routes?: readonly AnyRoute[];
  /** Anything else outside `/v1` (the console's pages and assets), mounted before the 404. */
  extraRoutes?: (app: Express) => void;
}

declare module 'express-serve-static-core' {
  interface Request {
    requestId: string;
    identity: Identity;
  }
}

/**
 * What every Studio HTTP server starts with: request ids and request logs that carry no secrets.
 * `dialectAt` names the wire dialect of the route at a path, known from the start so that every
 * answer of that route, the earliest refusals included, is in its shape.
 */
export function baseApp(
  logger: Logger,
  dialectAt?: (path: string) => WireDialect | undefined,
  drain?: Drain,
  /** Metrics and traces of every request (`observeRequests`): first, so the request log runs inside. */
  observe?: RequestHandler,
): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  if (observe) app.use(observe);

  // One middleware for what every request meets first (each layer of express's router costs a
  // match and a turn through `next`): its id, its dialect, its log line, the drain's count, its
  // Content-Encoding.
  const log = requestLog(logger);
  const draining = drain?.middleware();
  app.use((req, res, next) => {
    const incoming = req.header('x-request-id');
    req.requestId = incoming && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    req.identity = GUEST;
    res.setHeader('x-request-id', req.requestId);
    const dialect = dialectAt?.(req.path);
    if (dialect) speak(req, res, dialect);
    log(req, res);
    if (!draining) return next(refusedContentEncoding(req, res));
    draining(req, res, (error?: unknown) => next(error ?? refusedContentEncoding(req, res)));
  });
  return app;
}

/** Bodies may come compressed; body-parser decodes these and applies each route's limit to the decoded bytes. */
const DECODED_CONTENT_ENCODINGS = new Set(['identity', 'gzip', 'deflate', 'br']);

/** Any other Content-Encoding is refused at once, on every route, before a byte of the body is read. */
function refusedContentEncoding(req: Request, res: Response): ApiError | undefined {
  const encoding = req.headers['content-encoding'];
  if (encoding === undefined || DECODED_CONTENT_ENCODINGS.has(encoding.trim().toLowerCase()))
    return undefined;
  res.setHeader('Connection', 'close');
  return new ApiError(
    'unsupported_media_type',
    'this Content-Encoding is not supported: send the body as identity, gzip, deflate or br',
    { headers: { 'Accept-Encoding': 'gzip, deflate, br' } },
  );
}

/** How metrics name a `/v1/{service}/{action}` request no action served (an unknown action, a 405). */
const V1_ACTION_PATTERN = '/v1/:service/*action';

/** The gateway's HTTP shell: request ids, logs, JSON bodies, identities, the action registry, errors. */
export function createHttpApp(options: HttpAppOptions): Express {
  const { registry, authenticator, logger } = options;
  const observed = options.metrics;
  const app = baseApp(
    logger,
    (path) => registry.dialectAt(path),
    options.drain,
    observed && observeRequests(observed.metrics, tracing()),
  );
  const largeBodies = new LargeBodyBudget(options.largeBodiesBudgetBytes);

  const routes = appRoutes(options);

  // Everything under /v1 in one middleware that reads the path itself, rather than express's router
  // matching a pattern per layer: the same answers (paths case-insensitive, a trailing slash allowed
  // on the GET routes, percent-decoding per segment), for a fraction of the work. First, so the
  // API's requests meet none of the other routes' patterns (none of which is under /v1).
  const v1Routes = new Map(routes.v1.map((route) => [routeKeyOf(route.path), route]));
  app.use((req, res, next) => {
    const path = req.path;
    if (!isUnderV1(path)) return next();
    try {
      options.assertServing?.();
      req.identity = identify(authenticator, req, options.sessionCredential);
    } catch (error) {
      return next(error);
    }
    const route = v1Routes.get(routeKeyOf(path));
    if (route) {
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        return next(
          new ApiError('method_not_allowed', `${req.method} is not allowed here; use GET`, {
            headers: { Allow: 'GET' },
          }),
        );
      }
      serve(route, req, res, {}, {}).catch(next);
      return;
    }
    let action: ReturnType<typeof v1ActionOf>;
    try {
      action = v1ActionOf(path);
    } catch (error) {
      return next(error);
    }
    if (action === undefined) return next();
    notePattern(res, V1_ACTION_PATTERN);
    dispatch(registry, largeBodies, action.service, action.action, req, res).catch(next);
  });

  mountRoutes(app, routes.open);
  mountDocsAssets(app, GATEWAY_DOCUMENT_PATH);
  mountRoutes(app, options.routes ?? []);
  options.extraRoutes?.(app);
  app.use((req, res) => {
    sendError(res, new ApiError('not_found', `no route ${req.method} ${req.path}`));
  });
  app.use(errorMiddleware(logger));
  return app;
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
  const v1: AnyRoute[] = [
    defineRoute({
      method: 'GET',
      path: '/v1/services',
      identities: ['user', 'admin'],
      input: noInput,
      handler: () => ({ items: registry.services().map(({ id, name, env }) => ({ id, name, env })) }),
    }),
    defineRoute({
      method: 'GET',
      path: GATEWAY_DOCUMENT_PATH,
      identities: [],
      input: noInput,
      handler: () => describe(),
    }),
  ];
  const describe = () => {
    document ??= gatewayDocument(registry, [...open, ...v1, ...(options.routes ?? [])]);
    return document;
  };
  return { open, v1, describe };
}

/** The gateway's OpenAPI document, as `createHttpApp(options)` serves it (for writing it to a file). */
export function gatewayApiDocument(options: HttpAppOptions): OpenApiDocument {
  return appRoutes(options).describe();
}

/** GET /health, always 200 while the process serves, and GET /ready for load balancers. */
function probeRoutes({ health, ready }: HttpAppOptions) {
  return [
    defineRoute({ method: 'GET', path: '/health', identities: [], input: noInput, handler: () => health() }),
    ...(ready ? [readyRoute(ready)] : []),
  ];
}

/**
 * One line per request once its response is done (or the client left): at `info`, or `error` for a
 * 5xx. Only what is needed to follow a request: never headers or bodies, query values elided.
 * One `close` listener and no per-request child logger (pino-http made one per request even when
 * the level dropped its line): at LOG_LEVEL=warn a 2xx costs next to nothing.
 */
function requestLog(logger: Logger): (req: Request, res: Response) => void {
  // The line is made of fields that carry no secret (a checked request id, the method, the path with
  // query values removed, the status, a time), so it skips redaction: pino's walk of every object
  // of a line for the redacted paths cost more than writing the line.
  const lines = logger.child({}, { redact: [] });
  return (req, res) => {
    const start = Date.now();
    // `close` comes once per response: after `finish`, or alone when the connection went first.
    res.once('close', () => {
      const failed = res.statusCode >= 500;
      if (!lines.isLevelEnabled(failed ? 'error' : 'info')) return;
      const line = {
        req: { id: req.requestId, method: req.method, url: withoutQueryValues(req.originalUrl) },
        res: { statusCode: res.headersSent ? res.statusCode : null },
        ...(failed ? { err: new Error(`failed with status code ${res.statusCode}`) } : {}),
        responseTime: Date.now() - start,
      };
      const completed = !req.readableAborted && res.writableEnded;
      if (failed) lines.error(line, 'request errored');
      else lines.info(line, completed ? 'request completed' : 'request aborted');
    });
  };
}

/** Query values may carry codes or states (OAuth callbacks): logs keep only their names. */
export function withoutQueryValues(url: string): string {
  const at = url.indexOf('?');
  if (at < 0) return url;
  const names = url
    .slice(at + 1)
    .split('&')
    .filter(Boolean)
    .map((pair) => `${pair.split('=')[0]}=…`);
  return `${url.slice(0, at)}?${names.join('&')}`;
}

/** A `/v1/{service}/{action}` request: the registry names the action, `serve` does the rest. */
async function dispatch(
  registry: ActionRegistry,
  largeBodies: LargeBodyBudget,
  service: string,
  actionName: string,
  req: Request,
  res: Response,
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
  await serve(found.action, req, res, { largeBodies }, found.params);
}
