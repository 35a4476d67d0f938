/** What the gateway bench runs against, and how hard (see index.ts). */
import type { Child } from './processes.ts';

export const TITLE = '## Gateway overhead on chat completions';
export const CONNECTIONS = 50;
/** The even rate of the unloaded p50 aim, and of the chunk timings. */
export const UNLOADED_RATE = 100;
/** The even rate of the p99 aim, where the thin proxy serves at least twice as much (see `evenRateFor`). */
export const EVEN_RATE = 1_000;
/**
 * The V8 flags of the target studio-governed-heap-growth: after each full collection the old
 * generation may grow to 1.5× what survived it, where V8's own factor goes up to 4× on a fast
 * machine (garbage then piles up further before the next collection).
 */
export const HEAP_GROWTH_FLAGS = '--heap-growing-percent=50';

/**
 * The chat completion every gateway benchmark asks for, so that they all measure the same request:
 * a system and a user message, at most 32 tokens, JSON or streamed.
 */
export function chatRequestBody(model: string, stream = false): string {
  return JSON.stringify({
    model,
    messages: [
      { role: 'system', content: 'You are a helpful assistant.' },
      { role: 'user', content: 'Say hello in a few words.' },
    ],
    max_tokens: 32,
    ...(stream ? { stream: true } : {}),
  });
}

/**
 * The even rate of the p99 aim: EVEN_RATE, or half of what the thin proxy served in the closed loop
 * (JSON) where that is less than twice EVEN_RATE: a rate closer to its capacity would measure the
 * machine's queue, not a proxy's latency.
 */
export function evenRateFor(thinClosedLoop: number | undefined): number {
  if (thinClosedLoop === undefined || !Number.isFinite(thinClosedLoop) || thinClosedLoop >= EVEN_RATE * 2)
    return EVEN_RATE;
  return Math.max(1, Math.floor(thinClosedLoop / 2));
}

export type TargetKey =
  | 'direct'
  | 'nginx'
  | 'thin'
  | 'studio'
  | 'studio-governed'
  | 'studio-limited'
  | 'gateway-governed'
  | 'studio-governed-memory'
  | 'studio-unheld'
  | 'studio-governed-unsynced'
  | 'studio-governed-heap-growth'
  | 'studio-routed'
  | 'portkey';
export type Mode = 'json' | 'stream';
export const ALL_TARGETS: readonly TargetKey[] = [
  'direct',
  'nginx',
  'thin',
  'studio',
  'studio-governed',
  'studio-limited',
  'gateway-governed',
  'studio-governed-memory',
  'studio-unheld',
  'studio-governed-unsynced',
  'studio-governed-heap-growth',
  'studio-routed',
  'portkey',
];
export const LABELS: Record<TargetKey, string> = {
  direct: 'direct (client → mock)',
  nginx: 'nginx (proxy_pass, keep-alive upstream)',
  thin: 'thin proxy (express 5 + undici Pool, plain node)',
  // Every Studio target but `gateway-governed` is started as users start it: `studio start`.
  studio: 'Studio (`studio start`)',
  // The same Studio with a priced model, a hard budget and rate limits on the bench studio: every
  // generation reserves and settles in the log and passes the limiter.
  'studio-governed': 'Studio (`studio start`), hard budget and rate limits set',
  // The same with the rate limits alone: no hard budget, so no reservation event before the upstream call.
  'studio-limited': 'Studio (`studio start`), rate limits set, no budget',
  // The same started as `studio gateway start`: the gateway alone, no agent runtime in its process.
  'gateway-governed': 'Studio (`studio gateway start`), hard budget and rate limits set',
  // The same on the memory store whatever BENCH_GATEWAY_STORE says: Studio's own code without the
  // embedded store, so each run shows which part of a gap is the store's.
  'studio-governed-memory': "Studio's own code (`studio start`, budget and limits set, memory event store)",
  // Studio started with the bench-only `answerBeforeDurable`: what holding answers costs is measured against it.
  'studio-unheld': 'Studio (`studio start`), answers not held for the usage append',
  // The same as studio-governed with `STUDIO_SQLITE_SYNCHRONOUS=normal`: commits not synced (a power loss may lose them).
  'studio-governed-unsynced':
    'Studio (`studio start`), hard budget and rate limits set, SQLite commits not synced',
  // The same as studio-governed with V8's old generation grown by a smaller factor (`BENCH_V8_FLAGS`).
  'studio-governed-heap-growth':
    'Studio (`studio start`), hard budget and rate limits set, heap grown by 1.5×',
  // The model asked through a fallback route (`bench/fallback`) whose first target is compat/bench.
  'studio-routed': 'Studio (`studio start`) via a fallback route',
  portkey: 'Portkey',
};

export interface Target {
  key: TargetKey;
  label: string;
  /** The process whose CPU and RSS are measured (the mock itself for `direct`). */
  proc?: Child;
  origin: string;
  path: string;
  headers: Record<string, string>;
  model: string;
  notRun?: string;
}

export interface Samples {
  rps: Record<Mode, number[]>;
  cpu: Record<Mode, number[]>;
  rss: number[];
  /** Open loop at UNLOADED_RATE: p50/p99 of total (JSON), first chunk and last chunk (stream). */
  json: { p50: number[]; p99: number[] };
  first: { p50: number[]; p99: number[] };
  last: { p50: number[]; p99: number[] };
  /** Streams at UNLOADED_RATE: the mock's write of a chunk to its arrival, first chunk and slowest of each answer. */
  transitFirst: { p50: number[]; p99: number[] };
  transitMax: { p50: number[]; p99: number[] };
  /** Open loop at the p99 aim's even rate (`evenRateFor`), JSON. */
  even: { p50: number[]; p99: number[] };
  errors: string[];
}

export const emptySamples = (): Samples => ({
  rps: { json: [], stream: [] },
  cpu: { json: [], stream: [] },
  rss: [],
  json: { p50: [], p99: [] },
  first: { p50: [], p99: [] },
  last: { p50: [], p99: [] },
  transitFirst: { p50: [], p99: [] },
  transitMax: { p50: [], p99: [] },
  even: { p50: [], p99: [] },
  errors: [],
});
