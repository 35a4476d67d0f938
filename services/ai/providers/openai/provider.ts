import { ApiError } from '../../../../shared/errors.ts';
import type { ChatRequest } from '../../chat/wire.ts';
import { type UpstreamClient, upstreamMessage } from '../../upstream.ts';
import { multipart, readBytes, readJson } from '../body.ts';
import type { CallContext, Modality, ModelDefinition, Provider, VideoProgress } from '../types.ts';
import { openAiEmbeddings } from './embeddings.ts';
import { openAiResponses } from './responses.ts';
import { openAiApi, openAiChat, trimSlashes } from './wire.ts';

const DEFAULT_BASE_URL = 'https://api.openai.com/v1';
const SPEECH_MIME: Record<string, string> = {
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  opus: 'audio/ogg',
  aac: 'audio/aac',
  flac: 'audio/flac',
  pcm: 'audio/pcm',
};

const model = (
  name: string,
  description: string,
  modalities: Modality[],
  meta: Record<string, unknown> = {},
): ModelDefinition => ({
  id: `openai/${name}`,
  name,
  description,
  modalities,
  tags: ['openai'],
  meta,
  upstreamModel: name,
});

const CHAT: Modality[] = ['text', 'stream', 'chat'];
const REASONING = { reasoning: true };
/** A chat model with its output limit, as the provider documents it. */
const chat = (name: string, description: string, maxOutputTokens: number, meta = {}) => ({
  ...model(name, description, CHAT, meta),
  maxOutputTokens,
});
const MODELS: ModelDefinition[] = [
  chat('gpt-5', 'GPT-5', 128_000, REASONING),
  chat('gpt-5-mini', 'GPT-5 mini', 128_000, REASONING),
  chat('gpt-5-nano', 'GPT-5 nano', 128_000, REASONING),
  chat('gpt-4.1', 'GPT-4.1', 32_768),
  chat('gpt-4.1-mini', 'GPT-4.1 mini', 32_768),
  chat('gpt-4o', 'GPT-4o', 16_384),
  chat('gpt-4o-mini', 'GPT-4o mini', 16_384),
  chat('o4-mini', 'o4-mini', 100_000, REASONING),
  model('gpt-image-1', 'GPT Image 1', ['image']),
  model('gpt-image-1-mini', 'GPT Image 1 mini', ['image']),
  model('dall-e-3', 'DALL·E 3', ['image']),
  model('gpt-4o-mini-tts', 'GPT-4o mini TTS', ['tts']),
  model('tts-1', 'TTS 1', ['tts']),
  model('tts-1-hd', 'TTS 1 HD', ['tts']),
  model('whisper-1', 'Whisper', ['asr']),
  model('gpt-4o-transcribe', 'GPT-4o transcribe', ['asr']),
  model('gpt-4o-mini-transcribe', 'GPT-4o mini transcribe', ['asr']),
  model('sora-2', 'Sora 2', ['video']),
  model('sora-2-pro', 'Sora 2 Pro', ['video']),
  model('text-embedding-3-small', 'Text embedding 3 small', ['embed'], { dimensions: 1536 }),
  model('text-embedding-3-large', 'Text embedding 3 large', ['embed'], { dimensions: 3072 }),
  model('text-embedding-ada-002', 'Text embedding Ada 002', ['embed'], { dimensions: 1536 }),
];

/** Reasoning models refuse `max_tokens`: the same limit goes as `max_completion_tokens`. */
function adapt(request: ChatRequest, m: ModelDefinition): ChatRequest {
  if (!m.meta.reasoning || request.max_tokens == null) return request;
  const { max_tokens, ...rest } = request;
  return { ...rest, max_completion_tokens: request.max_completion_tokens ?? max_tokens };
}

interface UpstreamVideo {
  id: string;
  status: 'queued' | 'in_progress' | 'completed' | 'failed';
  progress?: number;
  error?: { message?: string } | null;
}

/** OpenAI's API for every modality it offers. `OPENAI_BASE_URL` points it elsewhere (proxies, tests). */
export function openAiProvider(upstream: UpstreamClient): Provider {
  const api = openAiApi(upstream, (env) => ({
    baseUrl: trimSlashes(env.get('OPENAI_BASE_URL') || DEFAULT_BASE_URL),
    baseUrlVariable: 'OPENAI_BASE_URL',
    apiKey: env.get('OPENAI_API_KEY'),
  }));

  const videoProgress = async (ctx: CallContext, video: UpstreamVideo): Promise<VideoProgress> => {
    if (typeof video?.id !== 'string')
      throw new ApiError('upstream_error', 'the upstream answered a video without an id');
    if (video.status === 'completed') {
      const content = await api.send(ctx, `/videos/${encodeURIComponent(video.id)}/content`, {
        method: 'GET',
      });
      const bytes = await readBytes(content, ctx.signal);
      const type = String(content.headers['content-type'] ?? 'video/mp4')
        .split(';')[0]!
        .trim();
      return {
        status: 'completed',
        upstreamId: video.id,
        video: { b64_json: bytes.toString('base64'), mime_type: type },
      };
    }
    if (video.status === 'failed')
      return {
        status: 'failed',
        upstreamId: video.id,
        message:
          upstreamMessage(String(video.error?.message ?? ''), api.secrets(ctx)) ||
          'the video generation failed',
      };
    return {
      status: 'running',
      upstreamId: video.id,
      ...(typeof video.progress === 'number' ? { progress: video.progress } : {}),
    };
  };

  return {
    id: 'openai',
    name: 'OpenAI',
    env: [
      { key: 'OPENAI_API_KEY', description: 'OpenAI API key', required: true },
      { key: 'OPENAI_BASE_URL', description: `API base URL (default ${DEFAULT_BASE_URL})`, required: false },
    ],
    models: () => MODELS,
    ...openAiChat(api, adapt),
    // Always base64 upstream, as OpenAI's own clients ask: a quarter of the bytes of JSON numbers.
    ...openAiEmbeddings(api, () => 'base64'),
    ...openAiResponses(api),

    async image(m, request, ctx) {
      const response = await api.send(ctx, '/images/generations', {
        json: {
          model: m.upstreamModel,
          prompt: request.prompt,
          n: request.n,
          ...(request.size ? { size: request.size } : {}),
          // gpt-image-* always answers base64; DALL·E must be asked for it.
          ...(m.upstreamModel.startsWith('dall-e') ? { response_format: 'b64_json' } : {}),
        },
      });
      const result = await readJson<{ data?: { b64_json?: string }[]; output_format?: string }>(
        response,
        ctx.signal,
      );
      const mime = `image/${result.output_format ?? 'png'}`;
      return {
        images: (result.data ?? []).map((d) => {
          if (!d.b64_json)
            throw new ApiError('upstream_error', 'the upstream answered an image without data');
          return { b64_json: d.b64_json, mime_type: mime };
        }),
      };
    },

    async tts(m, request, ctx) {
      const response = await api.send(ctx, '/audio/speech', {
        json: {
          model: m.upstreamModel,
          input: request.input,
          voice: request.voice ?? 'alloy',
          response_format: request.format,
        },
      });
      return { audio: await readBytes(response, ctx.signal), mime_type: SPEECH_MIME[request.format]! };
    },

    async asr(m, request, ctx) {
      const form = new FormData();
      const extension = /^audio\/(?:x-)?([\w]+)/.exec(request.mime_type)?.[1] ?? 'bin';
      form.set('file', new Blob([request.audio], { type: request.mime_type }), `audio.${extension}`);
      form.set('model', m.upstreamModel);
      form.set('response_format', 'json');
      if (request.language) form.set('language', request.language);
      const { body, contentType } = await multipart(form);
      const response = await api.send(ctx, '/audio/transcriptions', { body, contentType });
      const result = await readJson<{ text?: string; language?: string }>(response, ctx.signal);
      if (typeof result.text !== 'string')
        throw new ApiError('upstream_error', 'the upstream answered a transcription without text');
      const language = result.language ?? request.language;
      return { text: result.text, ...(language ? { language } : {}) };
    },

    async startVideo(m, request, ctx) {
      // Multipart, as OpenAI's own client sends it (the endpoint also takes a reference image).
      const form = new FormData();
      form.set('model', m.upstreamModel);
      form.set('prompt', request.prompt);
      if (request.seconds !== undefined) form.set('seconds', String(request.seconds));
      if (request.size) form.set('size', request.size);
      const { body, contentType } = await multipart(form);
      const response = await api.send(ctx, '/videos', { body, contentType });
      return videoProgress(ctx, await readJson<UpstreamVideo>(response, ctx.signal));
    },

    async pollVideo(_m, upstreamId, ctx) {
      const response = await api.send(ctx, `/videos/${encodeURIComponent(upstreamId)}`, { method: 'GET' });
      return videoProgress(ctx, await readJson<UpstreamVideo>(response, ctx.signal));
    },
  };
}
