import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { AiMetrics, MAX_MODEL_LABELS, MAX_STUDIO_LABELS } from '../../services/ai/ai-metrics.ts';
import type { GenerationData } from '../../services/ai/usage/events.ts';
import { parsePrometheus, sumOf } from '../support/prometheus.ts';

const generation = (studioId: string, model: string): GenerationData => ({
  studioId,
  tokenId: null,
  requestId: 'r',
  model,
  modality: 'chat',
  inputTokens: 3,
  outputTokens: 5,
  latencyMs: 1,
  costMicroUsd: 2_000_000,
  status: 200,
});

describe('AiMetrics', () => {
  it('folds studios and models past their caps into `other`, so a label never grows without bound', async () => {
    const registry = new Registry();
    const metrics = new AiMetrics(registry);
    const extra = 5;
    for (let i = 0; i < MAX_MODEL_LABELS + extra; i++)
      metrics.recorded({ type: 'GenerationCompleted', data: generation(`s${i}`, `m/${i}`) });
    const samples = parsePrometheus(await registry.metrics()).filter(
      (s) => s.name === 'studio_ai_generations_total',
    );
    expect(new Set(samples.map((s) => s.labels.model)).size).toBe(MAX_MODEL_LABELS + 1);
    expect(new Set(samples.map((s) => s.labels.studio)).size).toBe(MAX_STUDIO_LABELS + 1);
    expect(sumOf(samples, 'studio_ai_generations_total', { model: 'other', studio: 'other' })).toBe(extra);
  });

  it('counts tokens by direction and cost in dollars; a failed upstream call by its reason', async () => {
    const registry = new Registry();
    const metrics = new AiMetrics(registry);
    metrics.recorded({ type: 'GenerationCompleted', data: generation('s', 'm/a') });
    metrics.recorded({
      type: 'GenerationFailed',
      data: { ...generation('s', 'm/a'), status: 504, errorCode: 'upstream_timeout' },
    });
    metrics.recorded({
      type: 'GenerationFailed',
      data: { ...generation('s', 'm/a'), status: 400, errorCode: 'validation_failed' },
    });
    const samples = parsePrometheus(await registry.metrics());
    expect(sumOf(samples, 'studio_ai_tokens_total', { direction: 'input' })).toBe(9);
    expect(sumOf(samples, 'studio_ai_tokens_total', { direction: 'output' })).toBe(15);
    expect(sumOf(samples, 'studio_ai_cost_usd_total', { studio: 's', model: 'm/a' })).toBe(6);
    expect(sumOf(samples, 'studio_ai_upstream_errors_total')).toBe(1);
    expect(sumOf(samples, 'studio_ai_upstream_errors_total', { reason: 'timeout' })).toBe(1);
    expect(sumOf(samples, 'studio_ai_generations_total', { outcome: 'failed' })).toBe(2);
  });
});
