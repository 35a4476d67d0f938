import { type Decider, unknownCase } from '../../../shared/decider.ts';
import { DomainError } from '../../../shared/errors.ts';

/** One stream per studio (`limits-<id>`) holds the rate limits of the studio and of its tokens. */
export const limitsStreamId = (studioId: string) => `limits-${studioId}`;

/** Generations per minute, tokens per minute, generations at once; null: not limited. */
export interface RateLimitValues {
  rpm: number | null;
  tpm: number | null;
  maxConcurrent: number | null;
}

export type LimitsEvent =
  | {
      type: 'LimitsSet';
      /** `tokenId` null: the studio's own limits, over all its tokens together. */
      data: { studioId: string; tokenId: string | null } & RateLimitValues;
    }
  | { type: 'LimitsRemoved'; data: { studioId: string; tokenId: string | null } };

export type LimitsCommand =
  | { type: 'SetLimits'; studioId: string; tokenId: string | null; limits: RateLimitValues }
  | { type: 'RemoveLimits'; studioId: string; tokenId: string | null };

/** Token id, or '' for the studio itself → its limits. */
export interface LimitsState {
  scopes: ReadonlyMap<string, RateLimitValues>;
}

export const LIMITS_EVENT_TYPES = [
  'LimitsSet',
  'LimitsRemoved',
] as const satisfies readonly LimitsEvent['type'][];

/** The key of a scope in the state and the read model: the token id, or '' for the studio. */
export const scopeKey = (tokenId: string | null) => tokenId ?? '';

const scopeName = (studioId: string, tokenId: string | null) =>
  tokenId === null ? `studio ${studioId}` : `token ${tokenId} of studio ${studioId}`;

const sameLimits = (a: RateLimitValues, b: RateLimitValues) =>
  a.rpm === b.rpm && a.tpm === b.tpm && a.maxConcurrent === b.maxConcurrent;

function decide(command: LimitsCommand, state: LimitsState): LimitsEvent[] {
  const { studioId, tokenId } = command;
  const current = state.scopes.get(scopeKey(tokenId));
  switch (command.type) {
    case 'SetLimits': {
      // The action refuses this with a 400 first; the rule is the decider's all the same.
      const { rpm, tpm, maxConcurrent } = command.limits;
      if (rpm === null && tpm === null && maxConcurrent === null)
        throw new Error('SetLimits needs at least one limit');
      // Setting what is already set changes nothing, and records nothing.
      if (current && sameLimits(current, command.limits)) return [];
      return [{ type: 'LimitsSet', data: { studioId, tokenId, rpm, tpm, maxConcurrent } }];
    }
    case 'RemoveLimits':
      if (!current) throw new DomainError('not_found', `${scopeName(studioId, tokenId)} has no rate limits`);
      return [{ type: 'LimitsRemoved', data: { studioId, tokenId } }];
    default:
      return unknownCase('command', command);
  }
}

function evolve(state: LimitsState, event: LimitsEvent): LimitsState {
  switch (event.type) {
    case 'LimitsSet': {
      const { tokenId, rpm, tpm, maxConcurrent } = event.data;
      return { scopes: new Map(state.scopes).set(scopeKey(tokenId), { rpm, tpm, maxConcurrent }) };
    }
    case 'LimitsRemoved': {
      const scopes = new Map(state.scopes);
      scopes.delete(scopeKey(event.data.tokenId));
      return { scopes };
    }
    default:
      return unknownCase('event', event);
  }
}

export const limitsDecider: Decider<LimitsCommand, LimitsEvent, LimitsState> = {
  initialState: () => ({ scopes: new Map() }),
  decide,
  evolve,
};
