import { secretEquals } from '../crypto.ts';
import { ApiError } from '../errors.ts';
import { defineEndpoint, noInput } from '../http/action.ts';
import { sendBody } from '../http/request.ts';
import type { MetricsRegistry } from './metrics.ts';

/** Who may scrape: `allowed` for the admin key or STUDIO_METRICS_TOKEN, `forbidden` for another valid credential. */
export type ScrapeAccess = (bearer: string) => 'allowed' | 'forbidden' | 'unknown';

/** Compares a bearer with each secret that opens /metrics, in constant time. */
export function scrapeSecrets(secrets: readonly (string | undefined)[]): (bearer: string) => boolean {
  const kept = secrets.filter((secret): secret is string => secret !== undefined && secret !== '');
  return (bearer) => kept.reduce((found, secret) => secretEquals(bearer, secret) || found, false);
}

/**
 * GET /metrics in Prometheus' text format: the admin key or STUDIO_METRICS_TOKEN as a bearer, else
 * 401 (no or unknown credential) or 403 (a credential that opens something else), in the one envelope.
 */
export function metricsRoute(metrics: MetricsRegistry, access: ScrapeAccess) {
  return defineEndpoint({
    method: 'GET',
    path: '/metrics',
    identities: [],
    input: noInput,
    produces: ['text/plain'],
    errors: ['unauthenticated', 'forbidden'],
    handler: async (_input, { req, res }) => {
      const match = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
      const verdict = match ? access(match[1]!) : 'unknown';
      if (verdict === 'unknown')
        throw new ApiError(
          'unauthenticated',
          'metrics need Authorization: Bearer <the admin key or STUDIO_METRICS_TOKEN>',
        );
      if (verdict === 'forbidden')
        throw new ApiError('forbidden', 'metrics are for the admin key or STUDIO_METRICS_TOKEN');
      const { contentType, text } = await metrics.scrape();
      sendBody(res, 200, contentType, text);
      return undefined;
    },
  });
}
