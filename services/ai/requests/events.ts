import type { Modality } from '../providers/types.ts';

/** Refused generation requests of a studio: `refusals-<studio>` (its answered and failed ones are in `usage-<studio>`). */
export const refusalsStreamId = (studioId: string) => `refusals-${studioId}`;

/** A generation request refused before any upstream call: bad body, model not found or not allowed, budget, rate limit. */
export interface RefusalData {
  studioId: string;
  tokenId: string;
  requestId: string;
  /** The route the request came to (`chat/completions`, `responses`, `anthropic/v1/messages` …). */
  format: string;
  /** The model asked for, as the body named it (null when it named none). */
  model: string | null;
  modality: Modality;
  status: number;
  errorCode: string;
  errorMessage: string;
  latencyMs: number;
}

/** The refusals of one token and code in one minute beyond those recorded one by one. */
export interface RefusalsCountedData {
  studioId: string;
  tokenId: string;
  errorCode: string;
  modality: Modality;
  count: number;
  /** The minute (ISO 8601 UTC, `YYYY-MM-DDTHH:MM`). */
  minute: string;
}

export type RefusalEvent =
  | { type: 'GenerationRefused'; data: RefusalData }
  | { type: 'GenerationRefusalsCounted'; data: RefusalsCountedData };

export const REFUSAL_EVENT_TYPES = [
  'GenerationRefused',
  'GenerationRefusalsCounted',
] as const satisfies readonly RefusalEvent['type'][];
