import type { BudgetWindow } from '../budgets/budgets.ts';
import type { Modality } from '../providers/types.ts';

/** One stream per studio: `usage-<studio>`: its generations and what they reserved of its budgets. */
export const usageStreamId = (studioId: string) => `usage-${studioId}`;

export interface GenerationData {
  studioId: string;
  tokenId: string | null;
  /** The request that generated (one append may carry many requests). */
  requestId: string;
  model: string;
  modality: Modality;
  inputTokens: number;
  outputTokens: number;
  latencyMs: number;
  /** What it cost at the price in force when it started, in micro-dollars (1e-6 USD). */
  costMicroUsd: number;
  /**
   * What its usage came to above the reservation it settles, not charged: the upstream produced
   * more than the cap it was sent, and a hard budget is never charged past what it reserved.
   */
  unchargedMicroUsd?: number;
  /** The HTTP status the client got (or would have got, when it went away first). */
  status: number;
  /** When it started (ISO 8601 UTC): the budget windows it is charged to. Absent in early events. */
  startedAt?: string;
  /** The reservation this generation settles, when a hard budget made it reserve. */
  reservationId?: string;
  /**
   * What that reservation set aside, when it was never written as an event of its own (a log with
   * one writer holds reservations in its process): this event records it instead.
   */
  reservedMicroUsd?: number;
  /** Answered by the response cache: nothing went upstream, it cost 0 and charged no budget. */
  cached?: true;
  /** Looked up in the response cache and not found (absent with `cached`: the cache was not asked). */
  cacheMiss?: true;
  /** The route asked for, when the generation went through one (`model` is its target that answered). */
  route?: string;
  /** Every target the route tried, in order. */
  attempts?: GenerationAttempt[];
  /** The route the request came to (`chat/completions`, `responses` …). Absent in early events. */
  format?: string;
  /** A stream's time to its first frame, from when the generation was admitted. */
  firstByteMs?: number;
}

/** One try of a route's target. */
export interface GenerationAttempt {
  model: string;
  /** `answered`: its answer went to the client; `moved_on`: it failed and the next target was tried; `failed`: it failed and so did the request. */
  outcome: 'answered' | 'moved_on' | 'failed';
  /** Until its answer was ready (a stream: its first chunk) or it failed. */
  latencyMs: number;
  /** Why it moved on or failed: `status 503`, `timeout`, `connection_error`, or the error's code. */
  reason?: string;
}

/** A reservation given back unspent: the target it was made for failed and a route moved on. */
export interface ReleaseData {
  reservationId: string;
  studioId: string;
  tokenId: string | null;
  requestId: string;
}

/** What a generation set aside of its studio's hard budgets before its upstream call. */
export interface ReservationData {
  reservationId: string;
  studioId: string;
  tokenId: string | null;
  requestId: string;
  model: string;
  /** The worst case the generation can cost: it never settles above this. */
  amountMicroUsd: number;
  startedAt: string;
  /** After this instant an unsettled reservation no longer holds budget back (its process died). */
  expiresAt: string;
}

/** A reservation held on while its generation still runs: it now lasts until `expiresAt`. */
export interface LeaseExtendedData {
  reservationId: string;
  studioId: string;
  expiresAt: string;
}

export interface BudgetExceededData {
  studioId: string;
  tokenId: string | null;
  window: BudgetWindow;
  /** The window it was exceeded in: `total`, `day:2026-11-24` or `month:2026-11`. */
  windowKey: string;
  amountMicroUsd: number;
  spentMicroUsd: number;
}

export type GenerationEvent =
  | { type: 'GenerationCompleted'; data: GenerationData }
  | {
      type: 'GenerationFailed';
      /** `errorMessage`: what the client was told (an upstream's message scrubbed of credentials). Absent in early events. */
      data: GenerationData & { errorCode: string; errorMessage?: string };
    };

export type UsageEvent =
  | GenerationEvent
  | { type: 'BudgetReserved'; data: ReservationData }
  | { type: 'BudgetReleased'; data: ReleaseData }
  | { type: 'BudgetLeaseExtended'; data: LeaseExtendedData }
  | { type: 'BudgetExceeded'; data: BudgetExceededData };

export const USAGE_EVENT_TYPES = [
  'GenerationCompleted',
  'GenerationFailed',
] as const satisfies readonly GenerationEvent['type'][];

export const LEDGER_EVENT_TYPES = [
  ...USAGE_EVENT_TYPES,
  'BudgetReserved',
  'BudgetReleased',
  'BudgetLeaseExtended',
  'BudgetExceeded',
] as const satisfies readonly UsageEvent['type'][];
