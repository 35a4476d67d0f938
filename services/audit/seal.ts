import { z } from 'zod';
import { canonicalJson } from '../../shared/canonical-json.ts';
import { sha256Hex } from '../../shared/crypto.ts';
import { type Decider, unknownCase } from '../../shared/decider.ts';
import { DomainError } from '../../shared/errors.ts';
import { EVENT_DIGEST_LENGTH } from './digest.ts';

/** The seals of the log, one stream. Its events are covered by the chain of seals, not by a range. */
export const SEALS_STREAM = 'audit-seals';

/** What the first seal names as its previous seal. */
export const GENESIS_HASH = '0'.repeat(64);

/** An event as a seal lists it: its position and its digest. */
export type SealedEntry = readonly [position: number, digest: string];

/** What a seal's hash covers: the previous seal's hash, the range, every event of the range in order. */
export interface SealBody {
  previous: string;
  /** Positions of the first and last event of the range. */
  first: number;
  last: number;
  events: SealedEntry[];
}

export interface LogSealedData extends SealBody {
  /** SHA-256 of the canonical JSON of the body. */
  hash: string;
}

export type SealEvent = { type: 'LogSealed'; data: LogSealedData };

export type SealCommand = { type: 'SealRange'; events: readonly SealedEntry[] };

/** The head of the chain: the last seal's hash and the last position it covers (only the last seal counts). */
export interface SealChainState {
  hash: string;
  last: number;
}

export const SEAL_EVENT_TYPES = ['LogSealed'] as const satisfies readonly SealEvent['type'][];

export const sealHash = (body: SealBody): string => sha256Hex(canonicalJson(body));

const hex = (length: number) => z.string().regex(new RegExp(`^[0-9a-f]{${length}}$`));
const position = z.number().int().positive();

/**
 * A seal as the sealer writes it: its events in increasing positions, `first` and `last` theirs.
 * Anything else found in the seals stream is a break of the chain.
 */
export const LogSealedSchema = z
  .strictObject({
    previous: hex(64),
    first: position,
    last: position,
    events: z.array(z.tuple([position, hex(EVENT_DIGEST_LENGTH)])).min(1),
    hash: hex(64),
  })
  .refine(
    ({ first, last, events }) =>
      events[0]![0] === first &&
      events.at(-1)![0] === last &&
      events.every(([p], i) => i === 0 || p > events[i - 1]![0]),
    'a seal lists its events in increasing positions, from first to last',
  );

function decide(command: SealCommand, state: SealChainState): SealEvent[] {
  switch (command.type) {
    case 'SealRange': {
      const { events } = command;
      if (events.length === 0) throw new DomainError('conflict', 'a seal covers at least one event');
      let after = state.last;
      for (const [position] of events) {
        if (position <= after)
          throw new DomainError(
            'conflict',
            `position ${position} is not after ${after}: already sealed or out of order`,
          );
        after = position;
      }
      const body: SealBody = {
        previous: state.hash,
        first: events[0]![0],
        last: events.at(-1)![0],
        events: events.map(([p, digest]) => [p, digest] as const),
      };
      return [{ type: 'LogSealed', data: { ...body, hash: sealHash(body) } }];
    }
    default:
      return unknownCase('command', command.type);
  }
}

function evolve(_state: SealChainState, event: SealEvent): SealChainState {
  switch (event.type) {
    case 'LogSealed':
      return { hash: event.data.hash, last: event.data.last };
    default:
      return unknownCase('event', event.type);
  }
}

/** The chain of seals: each seal covers the events after the previous one and names its hash. */
export const sealDecider: Decider<SealCommand, SealEvent, SealChainState> = {
  initialState: () => ({ hash: GENESIS_HASH, last: 0 }),
  decide,
  evolve,
};
