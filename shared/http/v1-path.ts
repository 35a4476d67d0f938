/** Reading a path under `/v1` without express's router (see `createHttpApp`). */

/** `/v1` or below it, as express matched `app.use('/v1')`: case-insensitive, whole segments. */
export function isUnderV1(path: string): boolean {
  if (path.length < 3 || (path.length > 3 && path[3] !== '/')) return false;
  return path.slice(0, 3).toLowerCase() === '/v1';
}

/**
 * The key a GET route under /v1 is found by, as express matches a route's path: case-insensitive,
 * a trailing slash allowed.
 */
export function routeKeyOf(path: string): string {
  const lower = path.toLowerCase();
  return lower.length > 1 && lower.endsWith('/') ? lower.slice(0, -1) : lower;
}

/**
 * The registry action a path under /v1 names: `/v1/{service}/{action…}` with a non-empty service
 * and action, each segment percent-decoded (a URIError when one is not: a 400). Anything else is
 * no route (undefined).
 */
export function v1ActionOf(path: string): { service: string; action: string } | undefined {
  const rest = path.slice(4);
  const slash = rest.indexOf('/');
  if (slash <= 0 || slash === rest.length - 1) return undefined;
  return {
    service: decodeURIComponent(rest.slice(0, slash)),
    action: rest
      .slice(slash + 1)
      .split('/')
      .map(decodeURIComponent)
      .join('/'),
  };
}
