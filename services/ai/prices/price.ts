/** A model's price in USD. Token prices are per million tokens; absent means free in that unit. */
export interface Price {
  input_per_mtok: number;
  output_per_mtok: number;
  per_image: number;
  per_audio_second: number;
  per_video_second: number;
}

export const PRICE_FIELDS = [
  'input_per_mtok',
  'output_per_mtok',
  'per_image',
  'per_audio_second',
  'per_video_second',
] as const satisfies readonly (keyof Price)[];

export const FREE: Price = {
  input_per_mtok: 0,
  output_per_mtok: 0,
  per_image: 0,
  per_audio_second: 0,
  per_video_second: 0,
};

/** What one generation consumed. */
export interface Consumption {
  inputTokens: number;
  outputTokens: number;
  images?: number;
  audioSeconds?: number;
  videoSeconds?: number;
}

/**
 * The cost in micro-dollars. A price per million tokens is exactly micro-dollars per token, so
 * token costs need no scaling; the other units are priced in dollars.
 */
export function costMicroUsd(price: Price, used: Consumption): number {
  return Math.round(exactMicroUsd(price, used));
}

/** The cost rounded up: what a reservation sets aside, never less than `costMicroUsd` of as much. */
export function costCeilingMicroUsd(price: Price, used: Consumption): number {
  return Math.ceil(exactMicroUsd(price, used));
}

function exactMicroUsd(price: Price, used: Consumption): number {
  return (
    used.inputTokens * price.input_per_mtok +
    used.outputTokens * price.output_per_mtok +
    ((used.images ?? 0) * price.per_image +
      (used.audioSeconds ?? 0) * price.per_audio_second +
      (used.videoSeconds ?? 0) * price.per_video_second) *
      1_000_000
  );
}
