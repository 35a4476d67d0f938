import { type Decider, unknownCase } from '../../../shared/decider.ts';

/**
 * What the request log keeps of a studio's requests: `none` keeps no error messages (an upstream's
 * may echo the prompt) and no payloads, `metadata` (the default) the log's fields, `full` the request
 * and answer bodies as well, sealed under a key of the studio's own.
 */
export const CAPTURE_MODES = ['none', 'metadata', 'full'] as const;
export type CaptureMode = (typeof CAPTURE_MODES)[number];
export const DEFAULT_CAPTURE: CaptureSettings = { mode: 'metadata', retentionDays: 30 };

export interface CaptureSettings {
  mode: CaptureMode;
  /** Payloads older than this many days become unreadable: their day's key is destroyed. */
  retentionDays: number;
}

/** A studio's capture settings and erasures: `capture-<studio>`. Its payloads: `payloads-<studio>`. */
export const captureStreamId = (studioId: string) => `capture-${studioId}`;
export const payloadsStreamId = (studioId: string) => `payloads-${studioId}`;

/** One request's bodies, sealed under the studio's key of the day (`keyId`). */
export interface PayloadCapturedData {
  studioId: string;
  requestId: string;
  keyId: string;
  /** AES-256-GCM under the key: `v1.<iv>.<tag>.<ciphertext>`. */
  sealed: string;
  /** The size of what was sealed, and whether a body was cut at the capture bound. */
  bytes: number;
  truncated: boolean;
}

export type CaptureEvent =
  | { type: 'PayloadCaptureSet'; data: { studioId: string } & CaptureSettings }
  | {
      type: 'PayloadsErased';
      data: { studioId: string; keyIds: string[]; reason: 'request' | 'retention' };
    };

export type PayloadEvent = { type: 'PayloadCaptured'; data: PayloadCapturedData };

export const CAPTURE_EVENT_TYPES = [
  'PayloadCaptureSet',
  'PayloadsErased',
] as const satisfies readonly CaptureEvent['type'][];

export type CaptureCommand =
  | { type: 'SetCapture'; studioId: string; settings: CaptureSettings }
  | { type: 'RecordErasure'; studioId: string; keyIds: string[]; reason: 'request' | 'retention' };

export const captureDecider: Decider<CaptureCommand, CaptureEvent, CaptureSettings> = {
  initialState: () => DEFAULT_CAPTURE,
  decide(command) {
    switch (command.type) {
      case 'SetCapture':
        return [{ type: 'PayloadCaptureSet', data: { studioId: command.studioId, ...command.settings } }];
      case 'RecordErasure': {
        const { studioId, keyIds, reason } = command;
        return [{ type: 'PayloadsErased', data: { studioId, keyIds, reason } }];
      }
      default:
        return unknownCase('command', command);
    }
  },
  evolve(state, event) {
    switch (event.type) {
      case 'PayloadCaptureSet':
        return { mode: event.data.mode, retentionDays: event.data.retentionDays };
      case 'PayloadsErased':
        return state;
      default:
        return unknownCase('event', event);
    }
  },
};
