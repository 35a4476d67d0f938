/**
 * An open-loop load generator: requests are scheduled evenly (`rate` per second) whatever the
 * answers do, and each is timed from its *scheduled* send time, so a slow server cannot hide its
 * queueing (no coordinated omission). For streams, it records the time to the first body chunk
 * and to the end of the body.
 */
import { Pool } from 'undici';
import { percentile } from '../lib/stats.ts';
import { SENT_AT_PATTERN } from './mock-upstream.ts';

export interface OpenLoopOptions {
  /** Origin, e.g. http://127.0.0.1:8600 */
  origin: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  rate: number;
  /** How long the timed requests are sent for. */
  durationMs: number;
  /**
   * Sent at the same rate before the timed requests, checked but not timed (default 0): the
   * pool's connections, the server's heap and its store reach the rate's steady state first.
   */
  warmUpMs?: number;
  /** Checks a whole answer; false counts it as an error. */
  valid(status: number, body: string): boolean;
}

export interface OpenLoopResult {
  sent: number;
  errors: number;
  /** ms from scheduled send to the last byte, of the valid answers. */
  total: number[];
  /** ms from scheduled send to the first body chunk. */
  first: number[];
  /**
   * Streams: ms from the mock writing the first chunk to its arrival here, and the most of any
   * chunk of the answer (the mock stamps each; see mock-upstream.ts). Against direct's, what a
   * proxy adds to a chunk on its way, the request's own handling excluded.
   */
  firstChunkTransit: number[];
  chunkTransitMax: number[];
  /** How late the generator itself fired, p99 in ms (context for the figures above). */
  lateP99: number;
  firstError?: string;
}

export async function openLoop(options: OpenLoopOptions): Promise<OpenLoopResult> {
  const pool = new Pool(options.origin, { connections: 256, keepAliveTimeout: 30_000, pipelining: 1 });
  const result: OpenLoopResult = {
    sent: 0,
    errors: 0,
    total: [],
    first: [],
    firstChunkTransit: [],
    chunkTransitMax: [],
    lateP99: 0,
  };
  const late: number[] = [];
  const inflight = new Set<Promise<void>>();

  const fire = (scheduled: number, timed: boolean) => {
    result.sent++;
    if (timed) late.push(performance.now() - scheduled);
    const done = (async () => {
      let first = Number.NaN;
      let text = '';
      const transits: number[] = [];
      try {
        const answer = await pool.request({
          path: options.path,
          method: 'POST',
          headers: options.headers,
          body: options.body,
        });
        for await (const chunk of answer.body) {
          if (Number.isNaN(first)) first = performance.now() - scheduled;
          const arrived = performance.timeOrigin + performance.now();
          const piece = (chunk as Buffer).toString('utf8');
          // A stamp split across two reads is not matched in either: a lost sample, nothing worse.
          for (const match of piece.matchAll(SENT_AT_PATTERN)) transits.push(arrived - Number(match[1]));
          text += piece;
        }
        const total = performance.now() - scheduled;
        if (options.valid(answer.statusCode, text)) {
          if (!timed) return;
          result.total.push(total);
          result.first.push(first);
          if (transits.length > 0) {
            result.firstChunkTransit.push(transits[0]!);
            result.chunkTransitMax.push(Math.max(...transits));
          }
        } else {
          result.errors++;
          result.firstError ??= `HTTP ${answer.statusCode}: ${text.slice(0, 300)}`;
        }
      } catch (error) {
        result.errors++;
        result.firstError ??= error instanceof Error ? error.message : String(error);
      }
    })();
    inflight.add(done);
    void done.finally(() => inflight.delete(done));
  };

  // Warm-up, untimed: open a few keep-alive connections first.
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      const answer = await pool.request({
        path: options.path,
        method: 'POST',
        headers: options.headers,
        body: options.body,
      });
      await answer.body.text();
    }),
  );

  const interval = 1000 / options.rate;
  const untimed = Math.round((options.rate * (options.warmUpMs ?? 0)) / 1000);
  const count = untimed + Math.max(1, Math.round((options.rate * options.durationMs) / 1000));
  const start = performance.now() + 10;
  let next = 0;
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now();
      for (; next < count && start + next * interval <= now; next++)
        fire(start + next * interval, next >= untimed);
      if (next >= count) return resolve();
      setTimeout(tick, Math.max(0, start + next * interval - performance.now()));
    };
    tick();
  });
  while (inflight.size > 0) await Promise.all([...inflight]);
  await pool.close();
  result.total.sort((a, b) => a - b);
  result.first.sort((a, b) => a - b);
  result.firstChunkTransit.sort((a, b) => a - b);
  result.chunkTransitMax.sort((a, b) => a - b);
  late.sort((a, b) => a - b);
  result.lateP99 = percentile(late, 99);
  return result;
}
