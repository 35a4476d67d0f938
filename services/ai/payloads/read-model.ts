import { defineProjection } from '../../../shared/projections/projection.ts';
import { CAPTURE_EVENT_TYPES, type CaptureEvent, type CaptureSettings } from './capture.ts';

/** Each studio's capture settings (a studio not in it: the default). */
export const captureProjection = defineProjection<Map<string, CaptureSettings>, CaptureEvent>({
  name: 'capture',
  schemaVersion: 1,
  handles: CAPTURE_EVENT_TYPES,
  initialState: () => new Map(),
  toSnapshot: (state) => [...state],
  fromSnapshot: (snapshot) => new Map(snapshot as [string, CaptureSettings][]),
  apply(state, event) {
    if (event.type !== 'PayloadCaptureSet') return;
    const { studioId, mode, retentionDays } = event.data;
    state.set(studioId, { mode, retentionDays });
  },
});
