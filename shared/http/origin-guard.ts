import { isIP } from 'node:net';
import cors from 'cors';
import { ApiError } from '../errors.ts';
import type { Guard } from './front-door.ts';

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
export function originGuard(policy: OriginPolicy): Guard {
  const extraHosts = new Set(policy.extraHosts);
  const allowed = new Set(policy.allowedOrigins);
  const corsForListed = cors({
    origin: (origin, callback) => callback(null, origin !== undefined && allowed.has(origin)),
    methods: ['GET', 'POST', 'DELETE'],
    allowedHeaders: ['authorization', 'content-type', 'last-event-id', 'x-request-id', 'x-correlation-id'],
    exposedHeaders: ['x-request-id'],
    maxAge: 600,
  });
  return (req, res) => {
    const host = hostName(req.headers.host ?? '');
    if (!isLoopbackName(host) && !extraHosts.has(host)) {
      throw new ApiError(
        'host_not_allowed',
        'this server answers only to its own host names (see docs/security.md)',
      );
    }
    const origin = req.headers.origin;
    if (origin !== undefined && !allowed.has(origin) && !sameOrigin(origin, req.headers.host ?? '')) {
      throw new ApiError(
        'origin_not_allowed',
        'requests from this origin are refused; list it in STUDIO_ALLOWED_ORIGINS to allow it',
      );
    }
    const site = req.headers['sec-fetch-site'];
    if (origin === undefined && site === 'cross-site' && req.headers['sec-fetch-mode'] !== 'navigate') {
      throw new ApiError('origin_not_allowed', 'cross-site requests are refused');
    }
    // CORS headers for a listed origin; a preflight is answered here (cors decides synchronously).
    let passed = false;
    let failed: unknown;
    corsForListed(req, res, (error?: unknown) => {
      passed = true;
      failed = error;
    });
    if (failed) throw failed;
    return passed ? 'pass' : 'answered';
  };
}
function sameOrigin(origin: string, hostHeader: string): boolean {
  try {
    const url = new URL(origin);
    return /^https?:$/.test(url.protocol) && url.host.toLowerCase() === hostHeader.toLowerCase();
  } catch {
    return false;
  }
}
