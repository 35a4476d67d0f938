import { FREE, type Price } from './price.ts';

const tokens = (input_per_mtok: number, output_per_mtok: number): Price => ({
  ...FREE,
  input_per_mtok,
  output_per_mtok,
});
const perImage = (per_image: number, input_per_mtok = 0): Price => ({ ...FREE, per_image, input_per_mtok });
const perAudioSecond = (per_audio_second: number): Price => ({ ...FREE, per_audio_second });
const perVideoSecond = (per_video_second: number): Price => ({ ...FREE, per_video_second });

/**
 * Built-in list prices in USD, taken from the providers' public price pages in January 2026.
 * Where a provider prices a unit the gateway does not measure, the value is converted to one it
 * does: images at the medium-quality 1024x1024 price, speech per audio second from the per-minute
 * (or per-character, at about 15 characters a second) price. Admins override any of them with
 * `POST /v1/ai/prices/upsert`. The `dev/*` prices are not free so budgets can be tried offline.
 */
const LIST_PRICES: Readonly<Record<string, Price>> = {
  'dev/echo': tokens(1, 2),
  'dev/image': perImage(0.01),
  'dev/tts': perAudioSecond(0.001),
  'dev/asr': perAudioSecond(0.0005),
  'dev/video': perVideoSecond(0.05),
  'dev/embed': tokens(0.02, 0),

  'openai/gpt-5': tokens(1.25, 10),
  'openai/gpt-5-mini': tokens(0.25, 2),
  'openai/gpt-5-nano': tokens(0.05, 0.4),
  'openai/gpt-4.1': tokens(2, 8),
  'openai/gpt-4.1-mini': tokens(0.4, 1.6),
  'openai/gpt-4o': tokens(2.5, 10),
  'openai/gpt-4o-mini': tokens(0.15, 0.6),
  'openai/o4-mini': tokens(1.1, 4.4),
  'openai/gpt-image-1': perImage(0.042, 5),
  'openai/gpt-image-1-mini': perImage(0.011, 2),
  'openai/dall-e-3': perImage(0.04),
  'openai/gpt-4o-mini-tts': perAudioSecond(0.00025),
  'openai/tts-1': perAudioSecond(0.000225),
  'openai/tts-1-hd': perAudioSecond(0.00045),
  'openai/whisper-1': perAudioSecond(0.0001),
  'openai/gpt-4o-transcribe': perAudioSecond(0.0001),
  'openai/gpt-4o-mini-transcribe': perAudioSecond(0.00005),
  'openai/sora-2': perVideoSecond(0.1),
  'openai/sora-2-pro': perVideoSecond(0.3),
  'openai/text-embedding-3-small': tokens(0.02, 0),
  'openai/text-embedding-3-large': tokens(0.13, 0),
  'openai/text-embedding-ada-002': tokens(0.1, 0),

  'anthropic/claude-opus-4-5': tokens(5, 25),
  'anthropic/claude-opus-4-1': tokens(15, 75),
  'anthropic/claude-sonnet-4-5': tokens(3, 15),
  'anthropic/claude-haiku-4-5': tokens(1, 5),
};

/**
 * The built-in price of a model; models the table does not know are free: `compat/*` until an admin
 * prices them, `local/*` because they run on this machine.
 */
/** Keyed by model id in a Map, as every id-keyed table: no id reaches `Object.prototype`. */
export const DEFAULT_PRICES: ReadonlyMap<string, Price> = new Map(Object.entries(LIST_PRICES));

export const defaultPriceOf = (model: string): Price => DEFAULT_PRICES.get(model) ?? FREE;
