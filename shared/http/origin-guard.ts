import { isIP } from 'node:net';
import cors from 'cors';
import type { RequestHandler } from 'express';
import { ApiError } from '../errors.ts';

export interface OriginPolicy {
  /** Host names (besides loopback) a request's `Host` may carry: the bind host, the public host. */
  extraHosts: readonly string[];
  /** Browser origins allowed to call this server from another origin (CORS). */
  allowedOrigins: readonly string[];
}

const WILDCARD_HOSTS = new Set(['0.0.0.0', '::', '']);

/** The host names a server bound to `bindHost` answers to besides loopback, and the host of `publicUrl`. */
export function hostsOf(bindHost: string, publicUrl: string | undefined): string[] {
  const hosts: string[] = [];
  if (!WILDCARD_HOSTS.has(bindHost)) hosts.push(bindHost.toLowerCase());
  if (publicUrl) hosts.push(new URL(publicUrl).hostname.toLowerCase().replace(/^\[|\]$/g, ''));
  return hosts;
}

function isLoopbackName(host: string): boolean {
  if (host === 'localhost' || host === '::1') return true;
  return isIP(host) === 4 && host.startsWith('127.');
}

/** `Host: name:port` or `[v6]:port` → the name, lower case, without brackets. */
function hostName(header: string): string {
  const match = /^\[([^\]]+)\](?::\d+)?$/.exec(header) ?? /^([^:]+)(?::\d+)?$/.exec(header);
  return (match?.[1] ?? '').toLowerCase();
}

/**
 * A server that holds the user's files must not be reachable from web pages the user happens to
 * visit: a `Host` that is not one of ours is DNS rebinding, and a browser request from another origin
 * is refused unless that origin is listed (then it gets CORS, preflight included). Requests without
 * `Origin` (curl, SDKs, other servers) are not browsers' and pass.
 */
export function originGuard(policy: OriginPolicy): RequestHandler[] {
  const extraHosts = new Set(policy.extraHosts);
  const allowed = new Set(policy.allowedOrigins);
  const guard: RequestHandler = (req, _res, next) => {
    const host = hostName(req.headers.host ?? '');
    if (!isLoopbackName(host) && !extraHosts.has(host)) {
      return next(
        new ApiError(
          'host_not_allowed',
          'this server answers only to its own host names (see docs/security.md)',
        ),
      );
    }
    const origin = req.headers.origin;
    if (origin !== undefined) {
      if (allowed.has(origin) || sameOrigin(origin, req.headers.host ?? '')) return next();
      return next(
        new ApiError(
          'origin_not_allowed',
          'requests from this origin are refused; list it in STUDIO_ALLOWED_ORIGINS to allow it',
        ),
      );
    }
    const site = req.headers['sec-fetch-site'];
    if (site === 'cross-site' && req.headers['sec-fetch-mode'] !== 'navigate') {
      return next(new ApiError('origin_not_allowed', 'cross-site requests are refused'));
    }
    next();
  };
  const corsForListed = cors({
    origin: (origin, callback) => callback(null, origin !== undefined && allowed.has(origin)),
    methods: ['GET', 'POST'],
    allowedHeaders: ['authorization', 'content-type', 'last-event-id', 'x-request-id', 'x-correlation-id'],
    exposedHeaders: ['x-request-id'],
    maxAge: 600,
  });
  return [guard, corsForListed];
}

function sameOrigin(origin: string, hostHeader: string): boolean {
  try {
    const url = new URL(origin);
    return /^https?:$/.test(url.protocol) && url.host.toLowerCase() === hostHeader.toLowerCase();
  } catch {
    return false;
  }
}
