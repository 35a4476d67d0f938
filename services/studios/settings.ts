import { z } from 'zod';

/** The longest a studio's answers may be kept by the response cache: 30 days. */
export const MAX_CACHE_TTL_S = 30 * 24 * 3600;

/** How long the response cache keeps a studio's answers, in seconds; 0: it keeps none. */
export const cacheTtlS = z.number().int().min(0).max(MAX_CACHE_TTL_S);
