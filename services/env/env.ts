import { type Decider, unknownCase } from '../../shared/decider.ts';
import { DomainError } from '../../shared/errors.ts';

/** Every runtime env variable lives in the single `env` stream. */
export const ENV_STREAM = 'env';

export const ENV_KEY_PATTERN = /^[A-Z_][A-Z0-9_]*$/;

/** A value as stored: plain when not secret, encrypted (AES-256-GCM under the master key) when secret; the field `sealed` keeps its name from the log's first events. */
export type StoredValue = { secret: false; value: string } | { secret: true; sealed: string };

export type EnvEvent =
  | { type: 'EnvVariableSet'; data: { key: string } & StoredValue }
  | { type: 'EnvVariableRemoved'; data: { key: string } }
  | { type: 'EnvImported'; data: { imported: string[]; skipped: string[] } };

export type EnvCommand =
  | { type: 'SetVariable'; key: string; stored: StoredValue }
  | { type: 'RemoveVariable'; key: string }
  | { type: 'ImportVariables'; entries: { key: string; stored: StoredValue }[]; overwrite: boolean };

export interface EnvState {
  keys: ReadonlySet<string>;
}

export const ENV_EVENT_TYPES = [
  'EnvVariableSet',
  'EnvVariableRemoved',
  'EnvImported',
] as const satisfies readonly EnvEvent['type'][];

function decide(command: EnvCommand, state: EnvState): EnvEvent[] {
  switch (command.type) {
    case 'SetVariable':
      return [{ type: 'EnvVariableSet', data: { key: command.key, ...command.stored } }];
    case 'RemoveVariable':
      if (!state.keys.has(command.key))
        throw new DomainError('not_found', `env variable ${command.key} is not set`);
      return [{ type: 'EnvVariableRemoved', data: { key: command.key } }];
    case 'ImportVariables': {
      // A key repeated in one file: the last line wins, as in a shell.
      const entries = [...new Map(command.entries.map((e) => [e.key, e])).values()];
      const skipped = command.overwrite ? [] : entries.filter((e) => state.keys.has(e.key)).map((e) => e.key);
      const imported = entries.filter((e) => !skipped.includes(e.key));
      if (imported.length === 0 && skipped.length === 0) return [];
      return [
        ...imported.map((e): EnvEvent => ({ type: 'EnvVariableSet', data: { key: e.key, ...e.stored } })),
        { type: 'EnvImported', data: { imported: imported.map((e) => e.key), skipped } },
      ];
    }
    default:
      return unknownCase('command', command);
  }
}

function evolve(state: EnvState, event: EnvEvent): EnvState {
  switch (event.type) {
    case 'EnvVariableSet':
      return { keys: new Set(state.keys).add(event.data.key) };
    case 'EnvVariableRemoved': {
      const keys = new Set(state.keys);
      keys.delete(event.data.key);
      return { keys };
    }
    case 'EnvImported':
      return state;
    default:
      return unknownCase('event', event);
  }
}

export const envDecider: Decider<EnvCommand, EnvEvent, EnvState> = {
  initialState: () => ({ keys: new Set() }),
  decide,
  evolve,
};
