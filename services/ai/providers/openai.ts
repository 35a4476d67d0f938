import { ApiError } from '../../../shared/errors.ts';
import type { UpstreamClient } from '../upstream.ts';
import { jsonHeaders, type OpenAiEndpoint, openAiChat } from './openai-wire.ts';
import type { CallContext, Modality, ModelDefinition, Provider, VideoProgress } from './types.ts';

const DEFAULT_BASE_URL = 'https://api.openai.com/v1';
const SPEECH_MIME: Record<string, string> = {
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  opus: 'audio/ogg',
  aac: 'audio/aac',
  flac: 'audio/flac',
  pcm: 'audio/pcm',
};

const model = (name: string, description: string, modalities: Modality[]): ModelDefinition => ({
  id: `openai/${name}`,
  name,
  description,
  modalities,
  tags: ['openai'],
  meta: {},
  upstreamModel: name,
});

const CHAT: Modality[] = ['text', 'stream', 'chat'];
const MODELS: ModelDefinition[] = [
  model('gpt-4.1', 'GPT-4.1', CHAT),
  model('gpt-4.1-mini', 'GPT-4.1 mini', CHAT),
  model('gpt-4o', 'GPT-4o', CHAT),
  model('gpt-4o-mini', 'GPT-4o mini', CHAT),
  model('o4-mini', 'o4-mini reasoning model', CHAT),
  model('gpt-image-1', 'GPT Image 1', ['image']),
  model('dall-e-3', 'DALL·E 3', ['image']),
  model('gpt-4o-mini-tts', 'GPT-4o mini TTS', ['tts']),
  model('tts-1', 'TTS 1', ['tts']),
  model('whisper-1', 'Whisper', ['asr']),
  model('gpt-4o-transcribe', 'GPT-4o transcribe', ['asr']),
  model('sora-2', 'Sora 2', ['video']),
];

/** OpenAI's API for every modality it offers. `OPENAI_BASE_URL` points it elsewhere (proxies, tests). */
export function openAiProvider(upstream: UpstreamClient): Provider {
  const endpointOf = (ctx: CallContext): OpenAiEndpoint => ({
    baseUrl: (ctx.env.get('OPENAI_BASE_URL') ?? DEFAULT_BASE_URL).replace(/\/+$/, ''),
    apiKey: ctx.env.get('OPENAI_API_KEY'),
  });
  const call = async (
    ctx: CallContext,
    path: string,
    init: { method?: 'GET' | 'POST'; body?: string | Buffer; headers?: Record<string, string> },
  ) => {
    const endpoint = endpointOf(ctx);
    return upstream.send({
      url: `${endpoint.baseUrl}${path}`,
      method: init.method ?? 'POST',
      headers: { ...jsonHeaders(endpoint), ...init.headers },
      ...(init.body === undefined ? {} : { body: init.body }),
      signal: ctx.signal,
      secrets: [endpoint.apiKey],
    });
  };
  const json = async <T>(ctx: CallContext, path: string, body?: unknown, method: 'GET' | 'POST' = 'POST') =>
    (await (
      await call(ctx, path, { method, ...(body === undefined ? {} : { body: JSON.stringify(body) }) })
    ).body.json()) as T;

  const videoProgress = async (
    ctx: CallContext,
    video: { id: string; status: string; progress?: number; error?: { message?: string } },
  ): Promise<VideoProgress> => {
    switch (video.status) {
      case 'completed': {
        const content = await call(ctx, `/videos/${encodeURIComponent(video.id)}/content`, { method: 'GET' });
        const bytes = Buffer.from(await content.body.arrayBuffer());
        const type = String(content.headers['content-type'] ?? 'video/mp4').split(';')[0]!;
        return {
          status: 'completed',
          upstreamId: video.id,
          video: { b64_json: bytes.toString('base64'), mime_type: type },
        };
      }
      case 'failed':
        return {
          status: 'failed',
          upstreamId: video.id,
          message: video.error?.message ?? 'the video generation failed',
        };
      default:
        return {
          status: 'running',
          upstreamId: video.id,
          ...(video.progress === undefined ? {} : { progress: video.progress }),
        };
    }
  };

  return {
    id: 'openai',
    name: 'OpenAI',
    env: [
      { key: 'OPENAI_API_KEY', description: 'OpenAI API key', required: true },
      { key: 'OPENAI_BASE_URL', description: `API base URL (default ${DEFAULT_BASE_URL})`, required: false },
    ],
    models: () => MODELS,
    ...openAiChat(upstream, endpointOf),

    async image(m, request, ctx) {
      // gpt-image-* always answers base64; DALL·E needs to be asked for it.
      const body = {
        model: m.upstreamModel,
        prompt: request.prompt,
        n: request.n,
        ...(request.size ? { size: request.size } : {}),
        ...(m.upstreamModel.startsWith('dall-e') ? { response_format: 'b64_json' } : {}),
      };
      const result = await json<{ data: { b64_json?: string }[]; output_format?: string }>(
        ctx,
        '/images/generations',
        body,
      );
      const mime = `image/${result.output_format ?? 'png'}`;
      return {
        images: result.data.map((d) => {
          if (!d.b64_json)
            throw new ApiError('upstream_error', 'the upstream answered an image without data');
          return { b64_json: d.b64_json, mime_type: mime };
        }),
      };
    },

    async tts(m, request, ctx) {
      const response = await call(ctx, '/audio/speech', {
        body: JSON.stringify({
          model: m.upstreamModel,
          input: request.input,
          voice: request.voice ?? 'alloy',
          response_format: request.format,
        }),
      });
      const audio = Buffer.from(await response.body.arrayBuffer());
      return { audio, mime_type: SPEECH_MIME[request.format] ?? 'application/octet-stream' };
    },

    async asr(m, request, ctx) {
      const form = new FormData();
      const extension = request.mime_type.split('/')[1]?.split(';')[0] ?? 'bin';
      form.set('file', new Blob([request.audio], { type: request.mime_type }), `audio.${extension}`);
      form.set('model', m.upstreamModel);
      form.set('response_format', 'json');
      if (request.language) form.set('language', request.language);
      // Let the platform encode the multipart body and its boundary.
      const encoded = new Response(form);
      const response = await call(ctx, '/audio/transcriptions', {
        body: Buffer.from(await encoded.arrayBuffer()),
        headers: { 'content-type': encoded.headers.get('content-type')! },
      });
      const result = (await response.body.json()) as { text: string; language?: string };
      return {
        text: result.text,
        ...((result.language ?? request.language) ? { language: result.language ?? request.language } : {}),
      };
    },

    async startVideo(m, request, ctx) {
      const video = await json<{ id: string; status: string; progress?: number }>(ctx, '/videos', {
        model: m.upstreamModel,
        prompt: request.prompt,
        ...(request.seconds === undefined ? {} : { seconds: String(request.seconds) }),
        ...(request.size ? { size: request.size } : {}),
      });
      return videoProgress(ctx, video);
    },

    async pollVideo(_m, upstreamId, ctx) {
      const video = await json<{
        id: string;
        status: string;
        progress?: number;
        error?: { message?: string };
      }>(ctx, `/videos/${encodeURIComponent(upstreamId)}`, undefined, 'GET');
      return videoProgress(ctx, video);
    },
  };
}
