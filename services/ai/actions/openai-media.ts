import { z } from 'zod';
import { defineAction, type UploadedFile } from '../../../shared/http/action.ts';
import { nowSeconds } from '../chat/ids.ts';
import type { AiDeps } from '../deps.ts';
import { ASR_BODY_LIMIT, generateImages, SPEECH_FORMATS, speak, transcribe } from './media.ts';

// OpenAI's image and speech routes in its own shapes, so `client.images.generate` and
// `client.audio.speech.create` of its SDK work unchanged; each is the gateway's `image` or `tts`
// generation underneath. Fields OpenAI's models read that the gateway's image and speech models do
// not (quality, style, speed …) are taken and left unused; what cannot be answered is refused.

/** POST /v1/ai/images/generations: images as base64 (`b64_json`), as OpenAI's gpt-image models answer. */
export function imagesGenerationsAction(deps: AiDeps) {
  return defineAction({
    service: 'ai',
    action: 'images/generations',
    method: 'POST',
    summary: "Generate images (OpenAI's images API)",
    input: z.object({
      model: z.string().min(1),
      prompt: z.string().min(1, 'prompt must not be empty').max(32_000),
      n: z.number().int().min(1).max(4).nullable().optional(),
      size: z
        .string()
        .regex(/^\d{2,5}x\d{2,5}$|^auto$/, 'WIDTHxHEIGHT, e.g. 1024x1024')
        .nullable()
        .optional(),
      response_format: z
        .enum(['b64_json'], { message: 'response_format: images are answered as b64_json (no hosted URLs)' })
        .nullable()
        .optional(),
      output_format: z.enum(['png'], { message: 'output_format: the images are PNG' }).nullable().optional(),
      quality: z.string().max(20).nullable().optional(),
      style: z.string().max(20).nullable().optional(),
      background: z.string().max(20).nullable().optional(),
      moderation: z.string().max(20).nullable().optional(),
      user: z.string().max(256).optional(),
      studio_id: z.string().optional(),
    }),
    handler: async (input, ctx) => {
      const n = input.n ?? 1;
      const result = await generateImages(deps, ctx, {
        model: input.model,
        prompt: input.prompt,
        n,
        ...(input.size ? { size: input.size } : {}),
      });
      return {
        created: nowSeconds(),
        data: result.images.map((image) => ({ b64_json: image.b64_json })),
        output_format: 'png',
      };
    },
  });
}

/** POST /v1/ai/audio/speech: the audio itself, in the format asked (default mp3), as OpenAI answers it. */
export function audioSpeechAction(deps: AiDeps) {
  return defineAction({
    service: 'ai',
    action: 'audio/speech',
    method: 'POST',
    summary: "Text to speech (OpenAI's audio API): the audio's bytes",
    produces: ['audio/*'],
    input: z.object({
      model: z.string().min(1),
      input: z.string().min(1, 'input must not be empty').max(4096),
      voice: z.union([z.string().max(100), z.object({ id: z.string().max(100) })]),
      response_format: z.enum(SPEECH_FORMATS).nullable().optional(),
      speed: z.number().min(0.25).max(4).nullable().optional(),
      instructions: z.string().max(4096).nullable().optional(),
      stream_format: z
        .enum(['audio'], { message: 'stream_format: the audio is answered whole (audio)' })
        .nullable()
        .optional(),
      studio_id: z.string().optional(),
    }),
    handler: async (input, ctx) => {
      const voice = typeof input.voice === 'string' ? input.voice : input.voice.id;
      const result = await speak(deps, ctx, {
        model: input.model,
        input: input.input,
        format: input.response_format ?? 'mp3',
        voice,
      });
      ctx.res.statusCode = 200;
      ctx.res.setHeader('content-type', result.mime_type);
      ctx.res.setHeader('content-length', result.audio.length);
      ctx.res.end(result.audio);
      return undefined;
    },
  });
}

const uploaded = z.custom<UploadedFile>(
  (value) => typeof value === 'object' && value !== null && Buffer.isBuffer((value as UploadedFile).data),
  { message: 'file: the audio, sent as a file of the form' },
);

/**
 * POST /v1/ai/audio/transcriptions: OpenAI's transcription API as its clients send it
 * (`multipart/form-data`: the audio file and its fields) → `{text}`, or the text alone with
 * `response_format: text`.
 */
export function audioTranscriptionsAction(deps: AiDeps) {
  return defineAction({
    service: 'ai',
    action: 'audio/transcriptions',
    method: 'POST',
    summary: "Speech recognition (OpenAI's audio API, multipart/form-data)",
    consumes: 'multipart/form-data',
    produces: ['application/json', 'text/plain'],
    bodyLimitBytes: ASR_BODY_LIMIT,
    input: z.object({
      file: uploaded,
      model: z.string().min(1),
      language: z
        .string()
        .regex(/^[a-z]{2,3}(-[A-Za-z0-9]+)?$/, 'a language code, e.g. en')
        .optional(),
      response_format: z
        .enum(['json', 'text'], { message: 'response_format: json or text (no timestamps or subtitles)' })
        .optional(),
      prompt: z.string().max(4096).optional(),
      temperature: z.string().optional(),
      studio_id: z.string().optional(),
    }),
    handler: async (input, ctx) => {
      const mime = /^audio\/[\w.+-]+$/.test(input.file.type)
        ? input.file.type
        : mimeOfName(input.file.filename);
      const result = await transcribe(deps, ctx, {
        model: input.model,
        audio: input.file.data,
        mime_type: mime,
        ...(input.language ? { language: input.language } : {}),
      });
      if (input.response_format !== 'text') return { text: result.text };
      ctx.res.statusCode = 200;
      ctx.res.setHeader('content-type', 'text/plain; charset=utf-8');
      ctx.res.end(result.text);
      return undefined;
    },
  });
}

/** A file's media type from its name, for clients that send none: `speech.wav` → `audio/wav`. */
function mimeOfName(name: string): string {
  const extension = /\.([a-z0-9]+)$/i.exec(name)?.[1]?.toLowerCase();
  const known: Record<string, string> = {
    wav: 'audio/wav',
    mp3: 'audio/mpeg',
    mpga: 'audio/mpeg',
    m4a: 'audio/mp4',
    mp4: 'audio/mp4',
    ogg: 'audio/ogg',
    oga: 'audio/ogg',
    flac: 'audio/flac',
    webm: 'audio/webm',
  };
  return (extension && known[extension]) ?? 'audio/wav';
}
