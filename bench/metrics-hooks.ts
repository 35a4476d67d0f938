/**
 * What metrics cost on the hot path, measured in isolation (the gateway benchmark's CPU per request
 * varies by more than this on a shared machine): the per-request hook (`observeRequests`, the
 * endpoint noted by `serve`, the `close` observation) against the same request objects without
 * it; one generation's observations (`AiMetrics.recorded` and the first byte); one scrape.
 *   node --import tsx bench/metrics-hooks.ts        (BENCH_QUICK=1: fewer iterations)
 */
import { EventEmitter } from 'node:events';
import type { Request, Response } from 'express';
import { AiMetrics } from '../services/ai/ai-metrics.ts';
import type { GenerationEvent } from '../services/ai/usage/events.ts';
import { defineAction, noInput } from '../shared/http/action.ts';
import { noteEndpoint, observeRequests } from '../shared/observability/http.ts';
import { MetricsRegistry } from '../shared/observability/metrics.ts';
import { switchFromEnv } from './lib/env.ts';

const QUICK = switchFromEnv('BENCH_QUICK');
const N = QUICK ? 100_000 : 1_000_000;
const REPS = 5;

const action = defineAction({
  service: 'ai',
  action: 'chat/completions',
  method: 'POST',
  input: noInput,
  handler: () => ({}),
});

/** A request and response as far as the hook reads them. */
function exchange(): { req: Request; res: Response } {
  const res = Object.assign(new EventEmitter(), { locals: {}, headersSent: true, statusCode: 200 });
  const req = { method: 'POST' };
  return { req: req as unknown as Request, res: res as unknown as Response };
}

/** CPU nanoseconds per iteration (user + system), the median of REPS runs. */
function nsPerOp(run: (i: number) => void): number {
  const samples: number[] = [];
  for (let rep = 0; rep < REPS; rep++) {
    const start = process.cpuUsage();
    for (let i = 0; i < N; i++) run(i);
    const used = process.cpuUsage(start);
    samples.push(((used.user + used.system) * 1000) / N);
  }
  return samples.sort((a, b) => a - b)[Math.floor(REPS / 2)]!;
}

const metrics = new MetricsRegistry();
const hook = observeRequests(metrics);
const next = () => undefined;
const bare = nsPerOp(() => {
  const { res } = exchange();
  res.once('close', next);
  res.emit('close');
});
const observed = nsPerOp(() => {
  const { req, res } = exchange();
  hook(req, res, next);
  noteEndpoint(res, action);
  res.emit('close');
});

const ai = new AiMetrics(new MetricsRegistry().registry);
const generation = (i: number): GenerationEvent => ({
  type: 'GenerationCompleted',
  data: {
    studioId: `studio-${i % 50}`,
    tokenId: null,
    requestId: 'r',
    model: `compat/m${i % 10}`,
    modality: 'chat',
    inputTokens: 12,
    outputTokens: 40,
    latencyMs: 5,
    costMicroUsd: 90,
    status: 200,
  },
});
const events = Array.from({ length: 500 }, (_, i) => generation(i));
const perGeneration = nsPerOp((i) => {
  ai.recorded(events[i % 500]!);
  ai.firstByte(events[i % 500]!.data.model, 0.01);
});

const scrapeMs: number[] = [];
for (let rep = 0; rep < REPS; rep++) {
  const started = performance.now();
  await metrics.scrape();
  scrapeMs.push(performance.now() - started);
}
scrapeMs.sort((a, b) => a - b);

const lines = [
  `${N.toLocaleString('en')} iterations × ${REPS}, median CPU time per iteration (process.cpuUsage), Node ${process.version}.`,
  '',
  '| what | ns |',
  '|---|---:|',
  `| a request's objects and one \`close\` listener, no metrics | ${bare.toFixed(0)} |`,
  `| the same with the metrics hook (\`observeRequests\`, \`noteEndpoint\`, count and time on \`close\`) | ${observed.toFixed(0)} |`,
  `| **added by metrics per request** | **${(observed - bare).toFixed(0)}** |`,
  `| one generation's observations (\`AiMetrics.recorded\` + first byte; 50 studios × 10 models) | ${perGeneration.toFixed(0)} |`,
  '',
  `A scrape of the request metrics and the default process metrics: ${scrapeMs[Math.floor(REPS / 2)]!.toFixed(2)} ms.`,
];
process.stdout.write(`${lines.join('\n')}\n`);
