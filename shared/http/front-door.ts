import { randomUUID } from 'node:crypto';
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { BlockList } from 'node:net';
import { ApiError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { RequestObserver } from '../observability/http.ts';
import { clientAddressOf } from './client-key.ts';
import { speak, type WireDialect } from './dialect.ts';
import type { Drain } from './drain.ts';
import { answerError } from './errors.ts';
import type { Identity } from './identity.ts';
import { headerOf, pathOf, type ServedRequest, type ServedResponse } from './request.ts';

/** A request id a client may choose (`x-request-id`); any other is replaced by a fresh UUID. */
export const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Who a request is until an identity step says otherwise. */
const GUEST: Identity = { kind: 'guest' };

export interface FrontDoorOptions {
  logger: Logger;
  /** Metrics and traces of every request (`observeRequests`): first, so the request log runs inside. */
  observe?: RequestObserver;
  /**
   * The wire dialect of the endpoint at a path, known from the start so that every answer of that
   * endpoint, the earliest refusals included, is in its shape.
   */
  dialectAt?: (path: string) => WireDialect | undefined;
  /** Counts requests in flight, and refuses new ones once the process drains (see `Drain`). */
  drain?: Drain;
  /** Proxies whose `X-Forwarded-For` names the client (`STUDIO_TRUSTED_PROXIES`). */
  trustedProxies?: BlockList;
  /** Checks every request meets before the endpoints and `rest`, in order (the runtime's origin guard and token). */
  guards?: readonly Guard[];
  /**
   * The server's own endpoints: serves the request when its path is one of theirs (the promise
   * settles once it is served), else answers undefined and the request goes on to `rest`.
   */
  endpoints?: (req: ServedRequest, res: ServedResponse, path: string) => Promise<void> | undefined;
  /** Everything the endpoints leave: an express app (static files: pages and assets; the 404). */
  rest: (req: ServedRequest, res: ServedResponse) => void;
}

/**
 * A check of every request: throws an `ApiError` to refuse it, answers `answered` when it answered
 * the request itself (a CORS preflight), else `pass`.
 */
export type Guard = (req: ServedRequest, res: ServedResponse, path: string) => 'pass' | 'answered';

/**
 * What every request of a Studio HTTP server meets first, on Node's own request and response: its
 * id, its dialect, its log line, its metrics and traces, the drain's count, the Content-Encodings
 * refused; then the server's endpoints, else `rest`. Anything thrown is answered in the one error
 * envelope. Endpoints never pass through express: express gives every request and response it
 * handles other prototypes, and V8 makes an object whose prototype changed slow for every later
 * access, Node's own HTTP code included (docs/decisions.md, "HTTP").
 */
export function frontDoor(options: FrontDoorOptions): RequestListener {
  const log = requestLog(options.logger);
  const answer = answerError(options.logger);
  // Nothing may escape from here: a rejection no one handles would end the process.
  const fail = (error: unknown, res: ServedResponse) => {
    try {
      answer(error, res);
    } catch (failure) {
      options.logger.error({ err: failure, requestId: res.req.requestId }, 'an error could not be answered');
      res.destroy();
    }
  };
  const { observe, dialectAt, drain, guards = [], endpoints, rest } = options;
  return (incoming, outgoing) => {
    const req = incoming as ServedRequest;
    const res = outgoing as ServedResponse;
    const enter = () => {
      const path = pathOf(req.url);
      const asked = headerOf(req, 'x-request-id');
      req.requestId = asked && REQUEST_ID.test(asked) ? asked : randomUUID();
      req.identity = GUEST;
      req.clientAddress = clientAddressOf(req, options.trustedProxies);
      res.setHeader('x-request-id', req.requestId);
      const dialect = dialectAt?.(path);
      if (dialect) speak(req, res, dialect);
      log(req, res);
      try {
        drain?.admit(req, res, path);
        refuseContentEncoding(req, res);
        for (const guard of guards) if (guard(req, res, path) === 'answered') return;
        const served = endpoints?.(req, res, path);
        if (served) served.catch((error: unknown) => fail(error, res));
        else rest(req, res);
      } catch (error) {
        fail(error, res);
      }
    };
    if (observe) observe(req, res, enter);
    else enter();
  };
}

/** Bodies may come compressed; `readJsonBody` decodes these and applies each endpoint's limit to the decoded bytes. */
const DECODED_CONTENT_ENCODINGS = new Set(['identity', 'gzip', 'deflate', 'br']);

/** Any other Content-Encoding is refused at once, everywhere, before a byte of the body is read. */
function refuseContentEncoding(req: IncomingMessage, res: ServerResponse): void {
  const encoding = req.headers['content-encoding'];
  if (encoding === undefined || DECODED_CONTENT_ENCODINGS.has(encoding.trim().toLowerCase())) return;
  res.setHeader('Connection', 'close');
  throw new ApiError(
    'unsupported_media_type',
    'this Content-Encoding is not supported: send the body as identity, gzip, deflate or br',
    { headers: { 'Accept-Encoding': 'gzip, deflate, br' } },
  );
}

/**
 * One line per request once its response is done (or the client left): at `info`, or `error` for a
 * 5xx. Only what is needed to follow a request: never headers or bodies, query values elided.
 * One `close` listener and no per-request child logger: at LOG_LEVEL=warn a 2xx costs next to nothing.
 */
function requestLog(logger: Logger): (req: ServedRequest, res: ServedResponse) => void {
  // The line is made of fields that carry no secret (a checked request id, the method, the path with
  // query values removed, the status, a time), so it skips redaction: pino's walk of every object
  // of a line for the redacted paths cost more than writing the line.
  const lines = logger.child({}, { redact: [] });
  return (req, res) => {
    const start = Date.now();
    // As it arrived: express rewrites `req.url` while a router mounted at a path handles it.
    const url = req.url ?? '/';
    // `close` comes once per response: after `finish`, or alone when the connection went first.
    res.once('close', () => {
      const failed = res.statusCode >= 500;
      if (!lines.isLevelEnabled(failed ? 'error' : 'info')) return;
      const line = {
        req: { id: req.requestId, method: req.method, url: withoutQueryValues(url) },
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
function withoutQueryValues(url: string): string {
  const at = url.indexOf('?');
  if (at < 0) return url;
  const names = url
    .slice(at + 1)
    .split('&')
    .filter(Boolean)
    .map((pair) => `${pair.split('=')[0]}=…`);
  return `${url.slice(0, at)}?${names.join('&')}`;
}
