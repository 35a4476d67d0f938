import type { Modality } from '../providers/types.ts';

/** One stream per studio: `usage-<studio>`. */
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
  /** The HTTP status the client got (or would have got, when it went away first). */
  status: number;
}

export type UsageEvent =
  | { type: 'GenerationCompleted'; data: GenerationData }
  | { type: 'GenerationFailed'; data: GenerationData & { errorCode: string } };

export const USAGE_EVENT_TYPES = [
  'GenerationCompleted',
  'GenerationFailed',
] as const satisfies readonly UsageEvent['type'][];
