import { type Decider, unknownCase } from '../../shared/decider.ts';
import { DomainError } from '../../shared/errors.ts';

/** One stream per studio (`studio-<id>`) holds its lifecycle and the tokens issued for it. */
export const studioStreamId = (studioId: string) => `studio-${studioId}`;

export type StudioEvent =
  | {
      type: 'StudioCreated';
      /** `cacheTtlS` only when the studio was created with its response cache on. */
      data: { studioId: string; name: string; cacheTtlS?: number };
    }
  | { type: 'StudioPaused'; data: { studioId: string; reason: string | null } }
  | { type: 'StudioActivated'; data: { studioId: string } }
  | { type: 'StudioRemoved'; data: { studioId: string } }
  /** The studio's settings, whole: `cacheTtlS` 0 turns its response cache off. */
  | { type: 'StudioSettingsChanged'; data: { studioId: string; cacheTtlS: number } }
  | {
      type: 'TokenIssued';
      data: {
        studioId: string;
        tokenId: string;
        name: string;
        /** The first characters of the token, to tell tokens apart; never enough to use one. */
        prefix: string;
        /** SHA-256 of the token, hex. The token itself is never stored. */
        tokenHash: string;
        expiresAt: string | null;
        /**
         * The models the token may call (ids or `*` patterns); null: every model. Absent from
         * tokens issued before tokens could be limited, which may call every model.
         */
        models?: readonly string[] | null;
        /** The MCP tools it may call through `/v1/mcp` (`<server>__<tool>` or `*` patterns); absent: none. */
        tools?: readonly string[];
      };
    }
  | {
      type: 'TokenRevoked';
      data: { studioId: string; tokenId: string; reason: 'revoked' | 'studio_removed' };
    };

export type StudioCommand =
  | { type: 'CreateStudio'; studioId: string; name: string; cacheTtlS?: number }
  | { type: 'ChangeStudioSettings'; studioId: string; cacheTtlS: number }
  | { type: 'PauseStudio'; studioId: string; reason: string | null }
  | { type: 'ActivateStudio'; studioId: string }
  | { type: 'RemoveStudio'; studioId: string }
  | {
      type: 'IssueToken';
      studioId: string;
      tokenId: string;
      name: string;
      prefix: string;
      tokenHash: string;
      expiresAt: string | null;
      models: readonly string[] | null;
      tools?: readonly string[];
    }
  | { type: 'RevokeToken'; studioId: string; tokenId: string };

export type StudioStatus = 'active' | 'paused' | 'removed';

export interface StudioState {
  status: StudioStatus | 'none';
  /** How long its generations' answers are cached, in seconds; 0: not cached. */
  cacheTtlS: number;
  /** Token id → whether it can still be used. */
  tokens: ReadonlyMap<string, 'live' | 'revoked'>;
}

export const STUDIO_EVENT_TYPES = [
  'StudioCreated',
  'StudioPaused',
  'StudioActivated',
  'StudioRemoved',
  'StudioSettingsChanged',
  'TokenIssued',
  'TokenRevoked',
] as const satisfies readonly StudioEvent['type'][];

function decide(command: StudioCommand, state: StudioState): StudioEvent[] {
  const { studioId } = command;
  if (command.type === 'CreateStudio') {
    if (state.status !== 'none') throw new DomainError('conflict', `studio ${studioId} already exists`);
    const { name, cacheTtlS } = command;
    return [{ type: 'StudioCreated', data: { studioId, name, ...(cacheTtlS ? { cacheTtlS } : {}) } }];
  }
  if (state.status === 'none') throw new DomainError('not_found', `studio ${studioId} does not exist`);
  const removed = state.status === 'removed';

  switch (command.type) {
    case 'PauseStudio':
      if (removed) throw new DomainError('conflict', `studio ${studioId} is removed`);
      if (state.status === 'paused') return [];
      return [{ type: 'StudioPaused', data: { studioId, reason: command.reason } }];
    case 'ActivateStudio':
      if (removed) throw new DomainError('conflict', `studio ${studioId} is removed`);
      if (state.status === 'active') return [];
      return [{ type: 'StudioActivated', data: { studioId } }];
    case 'ChangeStudioSettings':
      if (removed) throw new DomainError('conflict', `studio ${studioId} is removed`);
      if (state.cacheTtlS === command.cacheTtlS) return [];
      return [{ type: 'StudioSettingsChanged', data: { studioId, cacheTtlS: command.cacheTtlS } }];
    case 'RemoveStudio': {
      if (removed) return [];
      const live = [...state.tokens].filter(([, status]) => status === 'live');
      return [
        { type: 'StudioRemoved', data: { studioId } },
        ...live.map(
          ([tokenId]): StudioEvent => ({
            type: 'TokenRevoked',
            data: { studioId, tokenId, reason: 'studio_removed' },
          }),
        ),
      ];
    }
    case 'IssueToken': {
      if (removed) throw new DomainError('conflict', `studio ${studioId} is removed`);
      if (state.tokens.has(command.tokenId))
        throw new DomainError('conflict', `token ${command.tokenId} already exists`);
      const { tokenId, name, prefix, tokenHash, expiresAt, models, tools } = command;
      const data = { studioId, tokenId, name, prefix, tokenHash, expiresAt, models };
      return [{ type: 'TokenIssued', data: tools === undefined ? data : { ...data, tools } }];
    }
    case 'RevokeToken': {
      const token = state.tokens.get(command.tokenId);
      if (!token) throw new DomainError('not_found', `token ${command.tokenId} does not exist`);
      if (token === 'revoked') return [];
      return [{ type: 'TokenRevoked', data: { studioId, tokenId: command.tokenId, reason: 'revoked' } }];
    }
    default:
      return unknownCase('command', command);
  }
}

function evolve(state: StudioState, event: StudioEvent): StudioState {
  switch (event.type) {
    case 'StudioCreated':
      return { ...state, status: 'active', cacheTtlS: event.data.cacheTtlS ?? 0 };
    case 'StudioActivated':
      return { ...state, status: 'active' };
    case 'StudioSettingsChanged':
      return { ...state, cacheTtlS: event.data.cacheTtlS };
    case 'StudioPaused':
      return { ...state, status: 'paused' };
    case 'StudioRemoved':
      return { ...state, status: 'removed' };
    case 'TokenIssued':
      return { ...state, tokens: new Map(state.tokens).set(event.data.tokenId, 'live') };
    case 'TokenRevoked':
      return { ...state, tokens: new Map(state.tokens).set(event.data.tokenId, 'revoked') };
    default:
      return unknownCase('event', event);
  }
}

export const studioDecider: Decider<StudioCommand, StudioEvent, StudioState> = {
  initialState: () => ({ status: 'none', cacheTtlS: 0, tokens: new Map() }),
  decide,
  evolve,
};
