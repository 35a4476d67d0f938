import { type Decider, unknownCase } from '../../shared/decider.ts';

/** A studio's error-rate alert setting: `error-rate-<studio>`. */
export const errorRateStreamId = (studioId: string) => `error-rate-${studioId}`;

/** Alert when, within one window, failures / requests > threshold over at least `minRequests`. */
export interface ErrorRateRule {
  studioId: string;
  /** 0..1. */
  threshold: number;
  windowMinutes: number;
  minRequests: number;
}

export type ErrorRateEvent = { type: 'ErrorRateAlertSet'; data: ErrorRateRule };
export type ErrorRateCommand = { type: 'SetErrorRateAlert' } & ErrorRateRule;

export const ERROR_RATE_EVENT_TYPES = [
  'ErrorRateAlertSet',
] as const satisfies readonly ErrorRateEvent['type'][];

export type ErrorRateState = ErrorRateRule | null;

function decide(command: ErrorRateCommand, state: ErrorRateState): ErrorRateEvent[] {
  switch (command.type) {
    case 'SetErrorRateAlert': {
      const { type: _type, ...rule } = command;
      if (
        state &&
        state.threshold === rule.threshold &&
        state.windowMinutes === rule.windowMinutes &&
        state.minRequests === rule.minRequests
      )
        return [];
      return [{ type: 'ErrorRateAlertSet', data: rule }];
    }
    default:
      return unknownCase('command', command.type as never);
  }
}

function evolve(_state: ErrorRateState, event: ErrorRateEvent): ErrorRateState {
  switch (event.type) {
    case 'ErrorRateAlertSet':
      return event.data;
    default:
      return unknownCase('event', event.type as never);
  }
}

export const errorRateDecider: Decider<ErrorRateCommand, ErrorRateEvent, ErrorRateState> = {
  initialState: () => null,
  decide,
  evolve,
};
