import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AnyAction, AnyEndpoint, AnyPathEndpoint } from '../http/action.ts';
import type { ServedRequest } from '../http/request.ts';
import type { MetricsRegistry } from './metrics.ts';
import type { RequestTracing } from './tracing.ts';

/** What the observing middleware keeps of a request, for the hooks that run later in it. */
interface ObservedRequest {
  start: number;
  metrics: MetricsRegistry;
  /** The endpoint `serve` runs, once known: its pattern names the request's route. */
  endpoint?: AnyEndpoint;
  /** The pattern of a path the app matched itself (not through express's router), until an endpoint is known. */
  pattern?: string;
}

/** What is observed of each response in flight. */
const observedOf = new WeakMap<ServerResponse, ObservedRequest>();

/** A step of the front door: observes the request, then calls `next` (inside its span, when traced). */
export type RequestObserver = (req: ServedRequest, res: ServerResponse, next: () => void) => void;

/**
 * Counts and times every request by the route pattern that served it, and (when traces are on)
 * runs it in a server span. Registered first, before the request log, so the log's line comes from
 * inside the span.
 */
export function observeRequests(
  metrics: MetricsRegistry,
  tracing?: RequestTracing & { enabled: boolean },
): RequestObserver {
  const traced = tracing?.enabled ? tracing : undefined;
  return (req, res, next) => {
    const observed: ObservedRequest = { start: performance.now(), metrics };
    observedOf.set(res, observed);
    res.once('close', () => {
      const seconds = (performance.now() - observed.start) / 1000;
      // 499: the client left before an answer began (nginx's convention).
      metrics.request(routeOf(req, observed), req.method, res.headersSent ? res.statusCode : 499, seconds);
    });
    if (traced) traced.serve(req, res, () => routeOf(req, observed), next);
    else next();
  };
}

/** `serve` names the endpoint it runs, so the request is counted under its pattern. */
export function noteEndpoint(res: ServerResponse, endpoint: AnyEndpoint): void {
  const observed = observedOf.get(res);
  if (observed) observed.endpoint = endpoint;
}

/** The app matched the request's path to `pattern` itself (express's router set no route). */
export function notePattern(res: ServerResponse, pattern: string): void {
  const observed = observedOf.get(res);
  if (observed) observed.pattern = pattern;
}

/** Seconds since the request arrived (0 when nothing observes it). */
export function secondsSinceArrival(res: ServerResponse): number {
  const observed = observedOf.get(res);
  return observed ? (performance.now() - observed.start) / 1000 : 0;
}

/** An SSE answer began: counted as open until its response closes. */
export function noteSseOpened(req: IncomingMessage, res: ServerResponse): void {
  const observed = observedOf.get(res);
  if (!observed) return;
  res.once('close', observed.metrics.sseOpened(routeOf(req, observed)));
}

const patterns = new WeakMap<AnyEndpoint, string>();

/** The pattern that served a request: a registry action, a route's path, express's route or mount path, or `unmatched`. */
function routeOf(req: IncomingMessage, observed: ObservedRequest): string {
  const { endpoint } = observed;
  if (endpoint === undefined) {
    // Not served by `serve`: the pattern the app matched, else (served by express) express's
    // route, else the path a middleware was mounted at (static files).
    const { route, baseUrl } = req as { route?: { path?: unknown }; baseUrl?: string };
    return observed.pattern ?? route?.path?.toString() ?? (baseUrl || 'unmatched');
  }
  let pattern = patterns.get(endpoint);
  if (pattern === undefined) {
    const named = endpoint as Partial<AnyAction & AnyPathEndpoint>;
    pattern =
      named.service === undefined ? (named.path ?? 'unmatched') : `/v1/${named.service}/${named.action}`;
    patterns.set(endpoint, pattern);
  }
  return pattern;
}
