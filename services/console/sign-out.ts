import { type Decider, unknownCase } from '../../shared/decider.ts';

/** One stream per console session that was signed out: `console-session-<session id>`. */
export const consoleSessionStreamId = (sessionId: string) => `console-session-${sessionId}`;

export type ConsoleSessionEvent = {
  type: 'ConsoleSessionEnded';
  /** `expiresAt`: when its cookie would have expired anyway (ISO): the end can be forgotten after. */
  data: { sessionId: string; expiresAt: string };
};

export type ConsoleSessionCommand = { type: 'EndConsoleSession'; sessionId: string; expiresAt: string };

export const CONSOLE_SESSION_EVENT_TYPES = [
  'ConsoleSessionEnded',
] as const satisfies readonly ConsoleSessionEvent['type'][];

/** A session, ended or not: signing out twice records one end. */
export const consoleSessionDecider: Decider<ConsoleSessionCommand, ConsoleSessionEvent, { ended: boolean }> =
  {
    initialState: () => ({ ended: false }),
    decide(command, state) {
      switch (command.type) {
        case 'EndConsoleSession':
          return state.ended
            ? []
            : [
                {
                  type: 'ConsoleSessionEnded',
                  data: { sessionId: command.sessionId, expiresAt: command.expiresAt },
                },
              ];
        default:
          return unknownCase('command', command.type);
      }
    },
    evolve(_state, event) {
      switch (event.type) {
        case 'ConsoleSessionEnded':
          return { ended: true };
        default:
          return unknownCase('event', event.type);
      }
    },
  };
