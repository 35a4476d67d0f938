/** What the gateway bench runs against, and how hard (see index.ts). */
import type { Child } from './processes.ts';

export const TITLE = '## Gateway overhead on chat completions';
export const CONNECTIONS = 50;
export const UNLOADED_RATE = 200;
export const EVEN_RATE = 1_000;

export type TargetKey =
  | 'direct'
  | 'nginx'
  | 'thin'
  | 'studio'
  | 'studio-governed'
  | 'studio-governed-memory'
  | 'studio-unheld'
  | 'studio-routed'
  | 'portkey';
export type Mode = 'json' | 'stream';
export const ALL_TARGETS: readonly TargetKey[] = [
  'direct',
  'nginx',
  'thin',
  'studio',
  'studio-governed',
  'studio-governed-memory',
  'studio-unheld',
  'studio-routed',
  'portkey',
];
export const LABELS: Record<TargetKey, string> = {
  direct: 'direct (client → mock)',
  nginx: 'nginx (proxy_pass, keep-alive upstream)',
  thin: 'thin proxy (express 5 + undici Pool, plain node)',
  studio: 'Studio',
  // The same Studio with a priced model, a hard budget and rate limits on the bench studio: every
  // generation reserves and settles in the log and passes the limiter.
  'studio-governed': 'Studio, hard budget and rate limits set',
  // The same on the memory store whatever BENCH_GATEWAY_STORE says: Studio's own code without the
  // embedded store, so each run shows which part of a gap is the store's.
  'studio-governed-memory': "Studio's own code (budget and limits set, memory event store)",
  // Studio started with the bench-only `answerBeforeDurable`: what holding answers costs is measured against it.
  'studio-unheld': 'Studio, answers not held for the usage append',
  // The model asked through a fallback route (`bench/fallback`) whose first target is compat/bench.
  'studio-routed': 'Studio via a fallback route',
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
