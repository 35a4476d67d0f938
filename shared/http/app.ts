import { randomUUID } from 'node:crypto';
import express, { type Express, type Request, type RequestHandler, type Response } from 'express';
import { ApiError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { defineRoute, noInput, withStatus } from './action.ts';
import { LargeBodyBudget } from './body-budget.ts';
import { identify, speak, type WireDialect } from './dialect.ts';
import { errorMiddleware, sendError } from './errors.ts';
import type { Authenticator, Identity } from './identity.ts';
import type { ActionRegistry } from './registry.ts';
import { mountRoutes, REQUEST_ID, serve } from './serve.ts';

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
  ready?: () => Promise<{ ready: boolean; body: Record<string, unknown> }>;
  /**
   * Called before every `/v1` request, credential or not: throws (503 `unavailable`) while the
   * read models the API answers from cannot be trusted, so nothing is answered from stale state.
   */
  assertServing?: () => void;
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
export function baseApp(logger: Logger, dialectAt?: (path: string) => WireDialect | undefined): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');

  app.use((req, res, next) => {
    const incoming = req.header('x-request-id');
    req.requestId = incoming && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    req.identity = GUEST;
    res.setHeader('x-request-id', req.requestId);
    const dialect = dialectAt?.(req.path);
    if (dialect) speak(req, res, dialect);
    next();
  });
  app.use(requestLog(logger));
  app.use(refuseUnknownContentEncoding);
  return app;
}

/** Bodies may come compressed; body-parser decodes these and applies each route's limit to the decoded bytes. */
const DECODED_CONTENT_ENCODINGS = new Set(['identity', 'gzip', 'deflate', 'br']);

/** Any other Content-Encoding is refused at once, on every route, before a byte of the body is read. */
const refuseUnknownContentEncoding: RequestHandler = (req, res, next) => {
  const encoding = req.headers['content-encoding'];
  if (encoding === undefined || DECODED_CONTENT_ENCODINGS.has(encoding.trim().toLowerCase())) return next();
  res.setHeader('Connection', 'close');
  next(
    new ApiError(
      'unsupported_media_type',
      'this Content-Encoding is not supported: send the body as identity, gzip, deflate or br',
      { headers: { 'Accept-Encoding': 'gzip, deflate, br' } },
    ),
  );
};

/** The gateway's HTTP shell: request ids, logs, JSON bodies, identities, the action registry, errors. */
export function createHttpApp(options: HttpAppOptions): Express {
  const { registry, authenticator, logger } = options;
  const app = baseApp(logger, (path) => registry.dialectAt(path));
  const largeBodies = new LargeBodyBudget(options.largeBodiesBudgetBytes);

  mountRoutes(app, probeRoutes(options));

  app.use('/v1', (req, _res, next) => {
    try {
      options.assertServing?.();
      req.identity = identify(authenticator, req);
      next();
    } catch (error) {
      next(error);
    }
  });

  mountRoutes(app, [
    defineRoute({
      method: 'GET',
      path: '/v1/services',
      identities: [],
      input: noInput,
      handler: (_input, { identity }) => {
        if (identity.kind === 'guest')
          throw new ApiError('unauthenticated', 'this route needs a user token or the admin key');
        return { items: registry.services().map(({ id, name, env }) => ({ id, name, env })) };
      },
    }),
  ]);
  app.all('/v1/services', (req, _res, next) => {
    next(
      new ApiError('method_not_allowed', `${req.method} is not allowed here; use GET`, {
        headers: { Allow: 'GET' },
      }),
    );
  });

  app.all('/v1/:service/*action', async (req, res, next) => {
    try {
      await dispatch(registry, largeBodies, req, res);
    } catch (error) {
      next(error);
    }
  });

  app.use((req, res) => {
    sendError(res, new ApiError('not_found', `no route ${req.method} ${req.path}`));
  });
  app.use(errorMiddleware(logger));
  return app;
}

/** GET /health, always 200 while the process serves, and GET /ready for load balancers. */
function probeRoutes({ health, ready }: HttpAppOptions) {
  const probes = [
    defineRoute({ method: 'GET', path: '/health', identities: [], input: noInput, handler: () => health() }),
  ];
  if (ready) {
    probes.push(
      defineRoute({
        method: 'GET',
        path: '/ready',
        identities: [],
        input: noInput,
        handler: async (_input, { res }) => {
          const answer = await ready();
          if (!answer.ready) res.setHeader('Retry-After', '1');
          return withStatus(answer.ready ? 200 : 503, answer.body);
        },
      }),
    );
  }
  return probes;
}

/**
 * One line per request once its response is done (or the client left): at `info`, or `error` for a
 * 5xx. Only what is needed to follow a request: never headers or bodies, query values elided.
 * One `close` listener and no per-request child logger (pino-http made one per request even when
 * the level dropped its line): at LOG_LEVEL=warn a 2xx costs next to nothing.
 */
function requestLog(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const start = Date.now();
    // `close` comes once per response: after `finish`, or alone when the connection went first.
    res.once('close', () => {
      const failed = res.statusCode >= 500;
      if (!logger.isLevelEnabled(failed ? 'error' : 'info')) return;
      const line = {
        req: { id: req.requestId, method: req.method, url: withoutQueryValues(req.originalUrl) },
        res: { statusCode: res.headersSent ? res.statusCode : null },
        ...(failed ? { err: new Error(`failed with status code ${res.statusCode}`) } : {}),
        responseTime: Date.now() - start,
      };
      const completed = !req.readableAborted && res.writableEnded;
      if (failed) logger.error(line, 'request errored');
      else logger.info(line, completed ? 'request completed' : 'request aborted');
    });
    next();
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
  req: Request,
  res: Response,
): Promise<void> {
  const service = req.params.service as string;
  const actionName = ([] as string[]).concat(req.params.action as string | string[]).join('/');
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
