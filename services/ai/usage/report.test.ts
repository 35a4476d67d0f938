import { describe, expect, it } from 'vitest';
import { type UsageState, usageProjection } from '../../../projections/usage.ts';
import type { Stored } from '../../../shared/projections/projection.ts';
import type { GenerationEvent } from './events.ts';
import { USAGE_FIELDS, type UsageDimension, usageReport } from './report.ts';

interface Generation {
  at: string;
  model?: string;
  modality?: 'text' | 'chat' | 'image';
  tokenId?: string | null;
  failed?: boolean;
  cost?: number;
  latencyMs?: number;
}

/** The read model after these generations of studio `acme`, through a snapshot's JSON round trip. */
function given(generations: Generation[]): UsageState {
  const state = usageProjection.initialState();
  generations.forEach((g, i) => {
    const data = {
      studioId: 'acme',
      tokenId: g.tokenId === undefined ? 'tok_a' : g.tokenId,
      requestId: `req-${i}`,
      model: g.model ?? 'dev/echo',
      modality: g.modality ?? 'text',
      inputTokens: 2,
      outputTokens: 3,
      latencyMs: g.latencyMs ?? 10,
      costMicroUsd: g.cost ?? 8,
      status: g.failed ? 502 : 200,
    };
    const event: GenerationEvent = g.failed
      ? { type: 'GenerationFailed', data: { ...data, errorCode: 'upstream_error' } }
      : { type: 'GenerationCompleted', data };
    usageProjection.apply(state, {
      ...event,
      id: `e${i}`,
      streamId: 'usage-acme',
      revision: i,
      position: i + 1,
      metadata: { actor: 'gateway' },
      createdAt: g.at,
    } as Stored<GenerationEvent>);
  });
  return usageProjection.fromSnapshot(JSON.parse(JSON.stringify(usageProjection.toSnapshot(state))));
}

const everything = { from: '', to: '\uffff' };
const report = (state: UsageState, by: UsageDimension[], range = everything) =>
  usageReport(state.get('acme') ?? new Map(), range, by);

const LOG: Generation[] = [
  { at: '2030-01-01T09:15:00.000Z' },
  { at: '2030-01-01T09:45:00.000Z', tokenId: 'tok_b', modality: 'chat' },
  { at: '2030-01-01T10:05:00.000Z', model: 'dev/image', modality: 'image', cost: 10_000 },
  { at: '2030-01-02T00:30:00.000Z', tokenId: null, failed: true, cost: 0, latencyMs: 31 },
];

describe('usage report', () => {
  it('groups by each dimension, in the order of its values (a null token last), with dollars', () => {
    const state = given(LOG);
    /** The dimensions of each group, its requests and its cost. */
    const slim = (by: UsageDimension[]) =>
      report(state, by).groups.map((g) => ({
        ...Object.fromEntries(by.map((d) => [USAGE_FIELDS[d], g[USAGE_FIELDS[d]]])),
        requests: g.requests,
        cost_usd: g.cost_usd,
      }));
    expect(slim(['model'])).toEqual([
      { model: 'dev/echo', requests: 3, cost_usd: 0.000016 },
      { model: 'dev/image', requests: 1, cost_usd: 0.01 },
    ]);
    expect(slim(['modality'])).toEqual([
      { modality: 'chat', requests: 1, cost_usd: 0.000008 },
      { modality: 'image', requests: 1, cost_usd: 0.01 },
      { modality: 'text', requests: 2, cost_usd: 0.000008 },
    ]);
    expect(slim(['token'])).toEqual([
      { token_id: 'tok_a', requests: 2, cost_usd: 0.010008 },
      { token_id: 'tok_b', requests: 1, cost_usd: 0.000008 },
      { token_id: null, requests: 1, cost_usd: 0 },
    ]);
    expect(slim(['day'])).toEqual([
      { day: '2030-01-01', requests: 3, cost_usd: 0.010016 },
      { day: '2030-01-02', requests: 1, cost_usd: 0 },
    ]);
    expect(slim(['hour'])).toEqual([
      { hour: '2030-01-01T09:00:00Z', requests: 2, cost_usd: 0.000016 },
      { hour: '2030-01-01T10:00:00Z', requests: 1, cost_usd: 0.01 },
      { hour: '2030-01-02T00:00:00Z', requests: 1, cost_usd: 0 },
    ]);
  });

  it('combines dimensions in the order named, and sums every measure', () => {
    const { groups, totals } = report(given(LOG), ['day', 'token']);
    expect(groups).toEqual([
      {
        day: '2030-01-01',
        token_id: 'tok_a',
        requests: 2,
        failures: 0,
        input_tokens: 4,
        output_tokens: 6,
        avg_latency_ms: 10,
        cost_usd: 0.010008,
      },
      {
        day: '2030-01-01',
        token_id: 'tok_b',
        requests: 1,
        failures: 0,
        input_tokens: 2,
        output_tokens: 3,
        avg_latency_ms: 10,
        cost_usd: 0.000008,
      },
      {
        day: '2030-01-02',
        token_id: null,
        requests: 1,
        failures: 1,
        input_tokens: 2,
        output_tokens: 3,
        avg_latency_ms: 31,
        cost_usd: 0,
      },
    ]);
    expect(totals).toEqual({
      requests: 4,
      failures: 1,
      input_tokens: 8,
      output_tokens: 12,
      cost_usd: 0.010016,
    });
  });

  it('keeps only the hours of the range, both ends included', () => {
    const { groups, totals } = report(given(LOG), ['hour'], { from: '2030-01-01T10', to: '2030-01-02T00' });
    expect(groups.map((g) => g.hour)).toEqual(['2030-01-01T10:00:00Z', '2030-01-02T00:00:00Z']);
    expect(totals.requests).toBe(2);
  });

  it('keeps a model whose id holds the characters a joined key would split on apart', () => {
    const state = given([
      { at: '2030-01-01T09:00:00.000Z', model: 'a|b', modality: 'text' },
      { at: '2030-01-01T09:00:00.000Z', model: 'a', modality: 'text', tokenId: 'b|text' },
    ]);
    expect(report(state, ['model', 'token']).groups.map((g) => [g.model, g.token_id])).toEqual([
      ['a', 'b|text'],
      ['a|b', 'tok_a'],
    ]);
  });

  it('sums cost in micro-dollars, so dollars are exact', () => {
    const state = given(
      Array.from({ length: 10 }, () => ({ at: '2030-01-01T09:00:00.000Z', cost: 100_000 })),
    );
    // 0.1 added ten times in floating point is 0.9999999999999999
    expect(report(state, ['model']).totals.cost_usd).toBe(1);
  });
});
