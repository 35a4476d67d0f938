import { z } from 'zod';
import { ApiError } from '../../../shared/errors.ts';
import { type ActionContext, defineAction } from '../../../shared/http/action.ts';
import { callContext } from '../call-context.ts';
import type { AiDeps } from '../deps.ts';
import { Generation } from '../generation.ts';
import { tokensAtMost } from '../generation-ask.ts';
import { tokensAtLeast } from '../usage/metering.ts';

const studio_id = z.string().optional();
/** Audio arrives base64 inside JSON: 25 MiB of audio is about 33 MiB of base64. */
export const ASR_BODY_LIMIT = 34 * 1024 * 1024;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Images for a prompt, admitted, budgeted and recorded as one generation of `n` images. */
export async function generateImages(
  deps: AiDeps,
  ctx: ActionContext,
  input: { model: string; prompt: string; n: number; size?: string | undefined },
) {
  const { provider, model } = deps.catalog.resolve(input.model, 'image');
  const generation = await Generation.start(deps, ctx, model, 'image', {
    inputTokensAtMost: tokensAtMost(input.prompt),
    inputTokensAtLeast: tokensAtLeast(input.prompt),
    images: input.n,
  });
  const result = await generation.guard(() =>
    provider.image!(
      model,
      { prompt: input.prompt, n: input.n, ...(input.size ? { size: input.size } : {}) },
      callContext(deps.env, ctx),
    ),
  );
  await generation.completed({ deliveredOutputTokens: 0 }, { images: input.n });
  return result;
}

/** Speech for a text, admitted, budgeted and recorded by its seconds of audio. */
export async function speak(
  deps: AiDeps,
  ctx: ActionContext,
  input: { model: string; input: string; format: SpeechFormat; voice?: string | undefined },
) {
  const { provider, model } = deps.catalog.resolve(input.model, 'tts');
  const seconds = speechSecondsOf(input.input);
  const generation = await Generation.start(deps, ctx, model, 'tts', {
    inputTokensAtMost: tokensAtMost(input.input),
    inputTokensAtLeast: tokensAtLeast(input.input),
    audioSeconds: seconds,
  });
  const result = await generation.guard(() =>
    provider.tts!(
      model,
      { input: input.input, format: input.format, ...(input.voice ? { voice: input.voice } : {}) },
      callContext(deps.env, ctx),
    ),
  );
  await generation.completed({ deliveredOutputTokens: 0 }, { audioSeconds: seconds });
  return result;
}

/** The text of an audio file, admitted and budgeted by the most seconds it can hold. */
export async function transcribe(
  deps: AiDeps,
  ctx: ActionContext,
  input: { model: string; audio: Buffer; mime_type: string; language?: string | undefined },
) {
  const { provider, model } = deps.catalog.resolve(input.model, 'asr');
  const { audio } = input;
  const generation = await Generation.start(deps, ctx, model, 'asr', {
    inputTokensAtMost: 0,
    inputTokensAtLeast: 0,
    audioSeconds: asrSecondsAtMost(audio),
  });
  const request = {
    audio,
    mime_type: input.mime_type,
    ...(input.language ? { language: input.language } : {}),
  };
  const result = await generation.guard(() => provider.asr!(model, request, callContext(deps.env, ctx)));
  await generation.completed(
    { deliveredOutputTokens: tokensAtLeast(result.text) },
    { audioSeconds: Math.min(speechSecondsOf(result.text), asrSecondsAtMost(audio)) },
  );
  return result;
}

/** The audio formats speech may be asked in. */
export const SPEECH_FORMATS = ['mp3', 'wav', 'opus', 'aac', 'flac', 'pcm'] as const;
export type SpeechFormat = (typeof SPEECH_FORMATS)[number];

export function imageAction(deps: AiDeps) {
  return defineAction({
    service: 'ai',
    action: 'image',
    method: 'POST',
    summary: 'Generate images',
    input: z.strictObject({
      model: z.string().min(1),
      prompt: z.string().min(1, 'prompt must not be empty').max(32_000),
      size: z
        .string()
        .regex(/^\d{2,5}x\d{2,5}$|^auto$/, 'WIDTHxHEIGHT, e.g. 1024x1024')
        .optional(),
      n: z.number().int().min(1).max(4).default(1),
      studio_id,
    }),
    handler: (input, ctx) => generateImages(deps, ctx, input),
  });
}

export function ttsAction(deps: AiDeps) {
  return defineAction({
    service: 'ai',
    action: 'tts',
    method: 'POST',
    summary: 'Text to speech',
    input: z.strictObject({
      model: z.string().min(1),
      input: z.string().min(1, 'input must not be empty').max(4096),
      voice: z.string().max(100).optional(),
      format: z.enum(SPEECH_FORMATS).default('mp3'),
      studio_id,
    }),
    handler: async (input, ctx) => {
      const result = await speak(deps, ctx, input);
      return { audio: result.audio.toString('base64'), mime_type: result.mime_type };
    },
  });
}

export function asrAction(deps: AiDeps) {
  return defineAction({
    service: 'ai',
    action: 'asr',
    method: 'POST',
    summary: 'Speech recognition',
    bodyLimitBytes: ASR_BODY_LIMIT,
    input: z.strictObject({
      model: z.string().min(1),
      audio: z.string().min(1, 'audio must not be empty'),
      mime_type: z.string().regex(/^audio\/[\w.+-]+$/, 'an audio media type, e.g. audio/wav'),
      language: z
        .string()
        .regex(/^[a-z]{2,3}(-[A-Za-z0-9]+)?$/, 'a language code, e.g. en')
        .optional(),
      studio_id,
    }),
    handler: async (input, ctx) => {
      const base64 = input.audio.replace(/\s+/g, '');
      if (base64.length % 4 !== 0 || !BASE64.test(base64)) {
        throw new ApiError('validation_failed', 'audio must be base64', { param: 'audio' });
      }
      const audio = Buffer.from(base64, 'base64');
      return transcribe(deps, ctx, { ...input, audio });
    },
  });
}

/** Seconds of speech in a text, at about 15 characters a second: audio length is not measured. */
const speechSecondsOf = (text: string) => Math.max(1, Math.ceil(text.length / 15));

/**
 * An upper bound on the seconds of speech in an audio file of unknown format: at 8 kbit/s (below
 * the speech codecs people send) every 1,000 bytes last at most one second.
 */
const asrSecondsAtMost = (audio: Buffer) => Math.max(1, Math.ceil(audio.length / 1_000));
