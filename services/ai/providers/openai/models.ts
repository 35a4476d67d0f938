import { ApiError } from '../../../../shared/errors.ts';
import { readJson } from '../body.ts';
import type { CallContext, UpstreamModel } from '../types.ts';
import type { OpenAiApi } from './wire.ts';

/** Models a connection serves for neither chat nor embeddings (speech, images, moderation, realtime). */
const NEITHER = /whisper|tts|dall-e|gpt-image|moderation|realtime|transcribe|sora|davinci|babbage/i;

/**
 * `GET /models` of an OpenAI-style API: every model it lists, `embed` for an embedding model
 * (its id says so), else chat.
 */
export async function openAiModels(api: OpenAiApi, ctx: CallContext): Promise<UpstreamModel[]> {
  const list = await readJson<{ data?: { id?: unknown }[] }>(
    await api.send(ctx, '/models', { method: 'GET' }),
    ctx.signal,
  );
  if (!Array.isArray(list?.data))
    throw new ApiError('upstream_error', 'the upstream answered a model list without data');
  return list.data
    .map((item) => item?.id)
    .filter((id): id is string => typeof id === 'string' && !NEITHER.test(id))
    .map((id) => ({ id, modalities: /embed/i.test(id) ? ['embed'] : ['text', 'stream', 'chat'] }));
}
