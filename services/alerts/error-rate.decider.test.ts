import { describe, it } from 'vitest';
import { deciderSpec } from '../../shared/decider-spec.ts';
import { type ErrorRateRule, errorRateDecider } from './error-rate.ts';

const spec = deciderSpec(errorRateDecider);
const rule: ErrorRateRule = { studioId: 'acme', threshold: 0.2, windowMinutes: 5, minRequests: 10 };

describe('error-rate alert decider', () => {
  it("sets a studio's error-rate alert, and again when it changes", () => {
    spec
      .given([])
      .when({ type: 'SetErrorRateAlert', ...rule })
      .thenEmits([{ type: 'ErrorRateAlertSet', data: rule }]);
    spec
      .given([{ type: 'ErrorRateAlertSet', data: rule }])
      .when({ type: 'SetErrorRateAlert', ...rule, threshold: 0.5 })
      .thenEmits([{ type: 'ErrorRateAlertSet', data: { ...rule, threshold: 0.5 } }]);
  });

  it('the same setting again changes nothing', () => {
    spec
      .given([{ type: 'ErrorRateAlertSet', data: rule }])
      .when({ type: 'SetErrorRateAlert', ...rule })
      .thenEmits([]);
  });
});
