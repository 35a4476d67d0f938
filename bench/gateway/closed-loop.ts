/**
 * A minimal closed-loop load generator (N connections, each sending its next request as soon as
 * the previous answer is read), for profiling runs that should not need autocannon installed.
 */
import { Pool } from 'undici';

export async function closedLoop(options: {
  origin: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  connections: number;
  durationMs: number;
  /** Stop after this many requests were sent, if that comes before `durationMs`. */
  requests?: number;
}): Promise<{ ok: number; failed: number; ms: number }> {
  const pool = new Pool(options.origin, {
    connections: options.connections,
    keepAliveTimeout: 30_000,
    pipelining: 1,
  });
  let ok = 0;
  let failed = 0;
  let sent = 0;
  const most = options.requests ?? Number.POSITIVE_INFINITY;
  const started = performance.now();
  const deadline = started + options.durationMs;
  await Promise.all(
    Array.from({ length: options.connections }, async () => {
      while (performance.now() < deadline && sent < most) {
        sent++;
        try {
          const answer = await pool.request({
            path: options.path,
            method: 'POST',
            headers: options.headers,
            body: options.body,
          });
          await answer.body.text();
          if (answer.statusCode === 200) ok++;
          else failed++;
        } catch {
          failed++;
        }
      }
    }),
  );
  const ms = performance.now() - started;
  await pool.close();
  return { ok, failed, ms };
}
