import { randomUUID } from 'node:crypto';
import express, { type Express, type Request, type RequestHandler, type Response } from 'express';
import { ApiError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { ActionContext, AnyAction } from './action.ts';
import { LargeBodyBudget, SMALL_BODY_BYTES } from './body-budget.ts';
import { errorMiddleware, sendError, validationError } from './errors.ts';
import { type Authenticator, actorOf, type Identity } from './identity.ts';
import type { ActionRegistry } from './registry.ts';

/** A route's body limit unless it says otherwise; larger bodies count against `LargeBodyBudget`. */
export const BODY_LIMIT_BYTES = SMALL_BODY_BYTES;
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

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

/** What every Studio HTTP server starts with: request ids and request logs that carry no secrets. */
export function baseApp(logger: Logger): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');

  app.use((req, res, next) => {
    const incoming = req.header('x-request-id');
    req.requestId = incoming && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    res.setHeader('x-request-id', req.requestId);
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
  const app = baseApp(logger);
  const largeBodies = new LargeBodyBudget(options.largeBodiesBudgetBytes);

  app.get('/health', async (_req, res, next) => {
    try {
      res.json(await options.health());
    } catch (error) {
      next(error);
    }
  });

  const { ready } = options;
  if (ready) {
    app.get('/ready', async (_req, res, next) => {
      try {
        const answer = await ready();
        if (!answer.ready) res.setHeader('Retry-After', '1');
        res.status(answer.ready ? 200 : 503).json(answer.body);
      } catch (error) {
        next(error);
      }
    });
  }

  app.use('/v1', (req, _res, next) => {
    try {
      options.assertServing?.();
      req.identity = authenticator.identify(req.header('authorization'));
      next();
    } catch (error) {
      next(error);
    }
  });

  app.get('/v1/services', (req, res, next) => {
    if (req.identity.kind === 'guest')
      return next(new ApiError('unauthenticated', 'this route needs a user token or the admin key'));
    res.json({ items: registry.services().map(({ id, name, env }) => ({ id, name, env })) });
  });
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
  const { action } = found;
  authorize(action, req.identity);
  // The body is read only once the caller is known to be allowed, and up to this action's limit;
  // a large one only when it fits the budget of large bodies.
  if (action.method === 'POST') {
    const limit = action.bodyLimitBytes ?? BODY_LIMIT_BYTES;
    largeBodies.hold(req, res, limit);
    await readJsonBody(req, res, limit);
  }
  const input = parseInput(action, req);
  checkStudio(input, req.identity);

  const controller = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  const ctx: ActionContext = {
    identity: req.identity,
    requestId: req.requestId,
    metadata: {
      actor: actorOf(req.identity),
      requestId: req.requestId,
      correlationId: correlationIdOf(req),
    },
    signal: controller.signal,
    req,
    res,
  };
  const result = await action.handler(input, ctx);
  if (res.headersSent || result === undefined) return;
  res.status(action.status ?? 200).json(result);
}

const jsonParsers = new Map<number, ReturnType<typeof express.json>>();

export function readJsonBody(req: Request, res: Response, limit: number): Promise<void> {
  let parser = jsonParsers.get(limit);
  if (!parser) {
    parser = express.json({ limit, type: ['application/json', 'application/*+json'] });
    jsonParsers.set(limit, parser);
  }
  const parse = parser;
  return new Promise((resolve, reject) =>
    parse(req, res, (error?: unknown) => (error ? reject(error) : resolve())),
  );
}

function authorize(action: AnyAction, identity: Identity): void {
  const allowed = action.identities ?? ['user'];
  if (allowed.length === 0 || allowed.includes(identity.kind)) return;
  if (identity.kind === 'guest') {
    throw new ApiError('unauthenticated', 'this action needs a credential: Authorization: Bearer <token>');
  }
  throw new ApiError('forbidden', `this action is for ${allowed.join(' or ')}, not ${identity.kind}`);
}

function parseInput(action: AnyAction, req: Request): unknown {
  const where = action.method === 'GET' ? 'query' : 'body';
  if (where === 'body' && req.body === undefined && hasBody(req)) {
    throw new ApiError('invalid_json', 'the request body must be JSON (Content-Type: application/json)');
  }
  const raw = where === 'query' ? { ...req.query } : (req.body ?? {});
  const parsed = action.input.safeParse(raw);
  if (!parsed.success) throw validationError(parsed.error, where);
  return parsed.data;
}

function hasBody(req: Request): boolean {
  return Number(req.header('content-length') ?? 0) > 0 || req.header('transfer-encoding') !== undefined;
}

/** A user may only act on their own studio: a `studio_id` in the input must be the token's. */
function checkStudio(input: unknown, identity: Identity): void {
  if (identity.kind !== 'user' || typeof input !== 'object' || input === null) return;
  const studioId = (input as { studio_id?: unknown }).studio_id;
  if (studioId !== undefined && studioId !== identity.studioId) {
    throw new ApiError('studio_mismatch', 'studio_id does not match the studio of this token', {
      param: 'studio_id',
    });
  }
}

function correlationIdOf(req: Request): string {
  const given = req.header('x-correlation-id');
  return given && REQUEST_ID.test(given) ? given : req.requestId;
}
