import { describe, expect, it } from 'vitest';
import { deciderSpec } from '../../../shared/decider-spec.ts';
import { captureDecider, DEFAULT_CAPTURE } from './capture.ts';

const spec = deciderSpec(captureDecider);

describe('capture decider', () => {
  it('sets what is captured; an erasure is recorded whatever the settings', () => {
    spec
      .given([])
      .when({ type: 'SetCapture', studioId: 'acme', settings: { mode: 'full', retentionDays: 7 } })
      .thenEmits([{ type: 'PayloadCaptureSet', data: { studioId: 'acme', mode: 'full', retentionDays: 7 } }]);
    spec
      .given([{ type: 'PayloadCaptureSet', data: { studioId: 'acme', mode: 'none', retentionDays: 1 } }])
      .when({
        type: 'RecordErasure',
        studioId: 'acme',
        keyIds: ['payload.acme.2026-11-29'],
        reason: 'request',
      })
      .thenEmits([
        {
          type: 'PayloadsErased',
          data: { studioId: 'acme', keyIds: ['payload.acme.2026-11-29'], reason: 'request' },
        },
      ]);
  });

  it('a studio that never set it captures metadata, kept 30 days', () => {
    expect(captureDecider.initialState()).toEqual(DEFAULT_CAPTURE);
    expect(DEFAULT_CAPTURE).toEqual({ mode: 'metadata', retentionDays: 30 });
  });
});
