/** The SSE bench's settings, from the environment (see index.ts). */
import { listFromEnv, positiveFromEnv, switchFromEnv } from '../lib/env.ts';
import type { Ready } from './protocol.ts';

export const QUICK = switchFromEnv('BENCH_QUICK');
export const LARGE = positiveFromEnv('BENCH_SSE_SUBSCRIBERS', { integer: true }) ?? 1_000;
export const SMALL = 100;
export const RATE = 20;
export const STEADY_MS = QUICK ? 2_000 : 10_000;
/** The 100-subscriber comparison row needs fewer events for a steady p99 (100 per client is 10,000 samples). */
export const SMALL_STEADY_MS = QUICK ? 2_000 : 5_000;
export const BURST = QUICK ? 50 : 100;
/** A burst of large events (e.g. big message parts): more than the 1 MB a client may have pending, in total. */
export const LARGE_BURST = 50;
export const LARGE_EVENT_BYTES = 32 * 1024;
export const REPS = positiveFromEnv('BENCH_REPS', { integer: true }) ?? (QUICK ? 1 : 2);
export type Target = Ready['store'];
export const TARGETS = listFromEnv<Target>(
  'BENCH_SSE_TARGETS',
  ['memory', 'reference', 'sqlite'],
  QUICK ? ['memory', 'reference'] : ['memory', 'reference', 'sqlite'],
);
export const TARGET_LABEL: Record<Target, string> = {
  memory: 'Studio, memory store',
  sqlite: 'Studio, SQLite store',
  reference: 'bare node:http (reference)',
};
export const PROFILE = switchFromEnv('BENCH_SSE_PROFILE');
export const KEEP_PROFILE = switchFromEnv('BENCH_SSE_KEEP_PROFILE');
export const AIM_P99_MS = 50;
/** Connections opened at once (the listen backlog is 511). */
export const CONNECT_WAVE = 100;
/** How long the last event may take to reach every client before the run counts what is missing. */
export const DRAIN_TIMEOUT_MS = 20_000;
