import { ApiError } from '../../../shared/errors.ts';
import type { Identity } from '../../../shared/http/identity.ts';
import { MAX_CACHE_TTL_S } from '../../studios/settings.ts';

/** The request header that asks for the cache (`ttl=N`, `no-store`), and the answer's (`hit|miss|bypass`). */
export const CACHE_HEADER = 'x-studio-cache';

/** Whether a generation goes through the cache, for which studio, accepting answers how old. */
export type CachePolicy = { use: false } | { use: true; studioId: string; ttlS: number };

const BYPASS: CachePolicy = { use: false };

/**
 * The header decides, else the studio's setting: `no-store` keeps the request out of the cache
 * both ways (nothing read, nothing stored); `ttl=N` uses it for this request, taking an answer at
 * most N seconds old and keeping its own for N seconds. The admin key has no studio: never cached.
 */
export function cachePolicy(
  identity: Identity,
  header: string | undefined,
  studioTtlS: (studioId: string) => number,
): CachePolicy {
  const asked = parseCacheHeader(header);
  if (identity.kind !== 'user' || asked === 'no-store') return BYPASS;
  const ttlS = asked?.ttlS ?? studioTtlS(identity.studioId);
  return ttlS > 0 ? { use: true, studioId: identity.studioId, ttlS } : BYPASS;
}

/** `ttl=<seconds>` or `no-store` (any case, spaces around); anything else is a 400. */
export function parseCacheHeader(header: string | undefined): { ttlS: number } | 'no-store' | undefined {
  if (header === undefined) return undefined;
  const value = header.trim().toLowerCase();
  if (value === 'no-store') return 'no-store';
  const ttl = /^ttl\s*=\s*(\d{1,8})$/.exec(value);
  const ttlS = ttl ? Number(ttl[1]) : 0;
  if (ttlS < 1 || ttlS > MAX_CACHE_TTL_S) {
    throw new ApiError(
      'validation_failed',
      `${CACHE_HEADER} is "ttl=<seconds>" (1 to ${MAX_CACHE_TTL_S}) or "no-store"`,
      { param: CACHE_HEADER },
    );
  }
  return { ttlS };
}
