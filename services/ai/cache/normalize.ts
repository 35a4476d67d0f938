import { canonicalJson } from '../../../shared/canonical-json.ts';
import { sha256Hex } from '../../../shared/crypto.ts';
import type { ChatRequest } from '../chat/wire.ts';

/**
 * What an answer is the answer to: the shape it is served in (a stream replays as a stream), the
 * model, and every field of the request that can change what it says, temperature included.
 */
export interface CacheableRequest {
  shape: 'text' | 'stream' | 'chat' | 'chat-stream' | 'messages' | 'messages-stream';
  model: string;
  request: Record<string, unknown>;
}

/** Chat fields that never change the answer: who asks, how the answer is tagged or kept upstream. */
const NOT_ANSWER_FIELDS: ReadonlySet<string> = new Set([
  'model',
  'stream',
  'studio_id',
  'user',
  'metadata',
  'store',
  'safety_identifier',
  'prompt_cache_key',
]);

/** A chat request as the cache compares it: a field set to null reads as one left out. */
export function chatCacheRequest(modelId: string, body: ChatRequest): CacheableRequest {
  const stream = body.stream === true;
  const fields = Object.entries(body).filter(
    ([name, value]) =>
      value !== null &&
      value !== undefined &&
      !NOT_ANSWER_FIELDS.has(name) &&
      // Whether usage is streamed changes a stream's frames, and nothing of a JSON answer.
      (stream || name !== 'stream_options'),
  );
  return { shape: stream ? 'chat-stream' : 'chat', model: modelId, request: Object.fromEntries(fields) };
}

/** `ai/text` and `ai/stream`: an empty system prompt is no system prompt, as upstream sees it. */
export function textCacheRequest(
  shape: 'text' | 'stream',
  modelId: string,
  input: { prompt: string; system?: string; max_tokens?: number; temperature?: number },
): CacheableRequest {
  const { prompt, system, max_tokens, temperature } = input;
  return { shape, model: modelId, request: { prompt, system: system || undefined, max_tokens, temperature } };
}

/** The entry's key: a studio's answers are never another's, whatever their requests. */
export const cacheKey = (studioId: string, request: CacheableRequest): string =>
  sha256Hex(canonicalJson([studioId, request]));

/**
 * An Anthropic Messages request as the cache compares it: every field but who asks (`metadata`) and
 * the model's name, and the client's `anthropic-version` and `anthropic-beta` (a beta can change
 * the answer, and a version its shape).
 */
export function messagesCacheRequest(
  modelId: string,
  body: Record<string, unknown>,
  headers: { version?: string; beta?: string },
): CacheableRequest {
  const { model: _model, stream, studio_id: _studio, metadata: _metadata, ...fields } = body;
  return {
    shape: stream === true ? 'messages-stream' : 'messages',
    model: modelId,
    request: { ...fields, anthropic_version: headers.version, anthropic_beta: headers.beta },
  };
}
