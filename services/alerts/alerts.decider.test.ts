import { describe, it } from 'vitest';
import { deciderSpec } from '../../shared/decider-spec.ts';
import { type AlertEvent, alertsDecider, type BudgetThresholdData, type ErrorRateData } from './alerts.ts';

const spec = deciderSpec(alertsDecider);
const at = (threshold: 50 | 80 | 100, spentMicroUsd: number): BudgetThresholdData => ({
  studioId: 'acme',
  tokenId: null,
  window: 'day',
  windowKey: 'day:2026-11-29',
  threshold,
  spentMicroUsd,
  amountMicroUsd: 1_000_000,
});
const crossed = (data: BudgetThresholdData): AlertEvent => ({ type: 'BudgetThresholdCrossed', data });
const rate: ErrorRateData = {
  studioId: 'acme',
  rate: 0.5,
  requests: 10,
  failures: 5,
  windowStart: '2026-11-29T10:00:00.000Z',
  windowEnd: '2026-11-29T10:05:00.000Z',
};

describe('alerts decider', () => {
  it('raises every threshold crossed that was not raised in the window yet', () => {
    spec
      .given([])
      .when({ type: 'CrossBudgetThresholds', crossed: [at(50, 850_000), at(80, 850_000)] })
      .thenEmits([crossed(at(50, 850_000)), crossed(at(80, 850_000))]);
    spec
      .given([crossed(at(50, 600_000))])
      .when({ type: 'CrossBudgetThresholds', crossed: [at(50, 850_000), at(80, 850_000)] })
      .thenEmits([crossed(at(80, 850_000))]);
  });

  it('a threshold is raised once per window: decided again (a replay after a restart), nothing', () => {
    spec
      .given([crossed(at(50, 600_000)), crossed(at(80, 850_000))])
      .when({ type: 'CrossBudgetThresholds', crossed: [at(50, 900_000), at(80, 900_000)] })
      .thenEmits([]);
  });

  it("another window, or another token's budget, is another alert", () => {
    const tomorrow = { ...at(50, 600_000), windowKey: 'day:2026-11-30' };
    const token = { ...at(50, 600_000), tokenId: 'tok_1' };
    spec
      .given([crossed(at(50, 600_000))])
      .when({ type: 'CrossBudgetThresholds', crossed: [tomorrow, token] })
      .thenEmits([crossed(tomorrow), crossed(token)]);
  });

  it('an error rate is raised once per window', () => {
    spec
      .given([])
      .when({ type: 'ExceedErrorRate', data: rate })
      .thenEmits([{ type: 'ErrorRateExceeded', data: rate }]);
    spec
      .given([{ type: 'ErrorRateExceeded', data: rate }])
      .when({ type: 'ExceedErrorRate', data: { ...rate, requests: 12, failures: 7 } })
      .thenEmits([]);
    const next = { ...rate, windowStart: '2026-11-29T10:05:00.000Z', windowEnd: '2026-11-29T10:10:00.000Z' };
    spec
      .given([{ type: 'ErrorRateExceeded', data: rate }])
      .when({ type: 'ExceedErrorRate', data: next })
      .thenEmits([{ type: 'ErrorRateExceeded', data: next }]);
  });
});
