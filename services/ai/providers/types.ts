import type { EnvRequirement } from '../../../shared/http/action.ts';
import type { MessagesCall, MessagesEvent, MessagesResponse } from '../anthropic-api/wire.ts';
import type { ChatChunk, ChatCompletion, ChatRequest } from '../chat/wire.ts';
import type { ResponseObject, ResponseStreamEvent } from '../responses/wire.ts';

/** What a model can be called for. `chat` is the OpenAI-compatible chat-completions mode. */
export const MODALITIES = ['text', 'stream', 'chat', 'image', 'video', 'tts', 'asr', 'embed'] as const;
export type Modality = (typeof MODALITIES)[number];

export interface ModelDefinition {
  /** The public id, used as `model` in requests: `<provider>/<upstream model>`. */
  id: string;
  name: string;
  description: string;
  modalities: Modality[];
  tags: string[];
  meta: Record<string, unknown>;
  /** The model's name at its upstream. */
  upstreamModel: string;
  /** The most output tokens one answer can have, where known: what a budget reserves when no cap is asked. */
  maxOutputTokens?: number;
}

/** Reads env (the store's values over the process environment). */
export interface EnvLookup {
  get(key: string): string | undefined;
}

export interface CallContext {
  env: EnvLookup;
  /** Aborted when the client goes away: the upstream request is cancelled with it. */
  signal: AbortSignal;
  /** Whom the call is for (a studio id, or `admin`): upstream connections are shared between them. */
  tenant: string;
  /** Extra upstream attempts after a 429, a 5xx or a refused connection, when not the client's default (a route's targets: 0). */
  retries?: number;
}

export interface ImageRequest {
  prompt: string;
  size?: string;
  n: number;
}
export interface ImageResult {
  images: { b64_json: string; mime_type: string }[];
}

export interface SpeechRequest {
  input: string;
  voice?: string;
  format: 'mp3' | 'wav' | 'opus' | 'aac' | 'flac' | 'pcm';
}
export interface SpeechResult {
  audio: Buffer;
  mime_type: string;
}

export interface TranscriptionRequest {
  audio: Buffer;
  mime_type: string;
  language?: string;
}
export interface TranscriptionResult {
  text: string;
  language?: string;
}

/** Texts, or texts already cut into token ids (OpenAI's tokenizer's), one vector each. */
export type EmbeddingInput = string[] | number[][];
export interface EmbeddingRequest {
  input: EmbeddingInput;
  dimensions?: number;
  /** The end user, for the upstream's abuse monitoring. */
  user?: string;
  /** The encoding the client asked for: a provider may ask its upstream for the same. */
  encoding: 'float' | 'base64';
}
export interface EmbeddingResult {
  /** One vector per input, in order. */
  vectors: (readonly number[] | Float32Array)[];
  /** The input tokens, as the upstream counted them (undefined when it did not say). */
  inputTokens: number | undefined;
}

export interface VideoRequest {
  prompt: string;
  seconds?: number;
  size?: string;
}
/** Where a video generation stands at its upstream. */
export type VideoProgress =
  | { status: 'running'; upstreamId: string; progress?: number }
  | { status: 'completed'; upstreamId: string; video: { b64_json: string; mime_type: string } }
  | { status: 'failed'; upstreamId: string; message: string };

/**
 * One upstream. A provider declares its env keys and the models it offers (which may depend on
 * env), and implements the modalities it supports. Chat speaks OpenAI's wire format; providers
 * that speak something else translate both ways.
 */
export interface Provider {
  id: string;
  name: string;
  env: readonly EnvRequirement[];
  /**
   * Must depend on nothing but what it reads from `env`: the catalog keeps the answer until one of
   * those values changes.
   */
  models(env: EnvLookup): ModelDefinition[];
  /**
   * Programs `model` runs on this machine that are not installed (named as the admin catalog shows
   * them): while any is missing the model cannot be called. Must not change while the process runs.
   */
  missingPrograms?(model: ModelDefinition): readonly string[];
  chat?(model: ModelDefinition, request: ChatRequest, ctx: CallContext): Promise<ChatCompletion>;
  /**
   * Resolves once the upstream has accepted the request (so errors before the first chunk are HTTP
   * errors), then yields chunks as they arrive.
   */
  chatStream?(
    model: ModelDefinition,
    request: ChatRequest,
    ctx: CallContext,
  ): Promise<AsyncIterable<ChatChunk>>;
  /**
   * Anthropic's Messages API spoken natively: the body goes upstream as the client sent it, `model`
   * replaced. Providers without it serve the Messages API through `chat`, translated.
   */
  messages?(model: ModelDefinition, call: MessagesCall, ctx: CallContext): Promise<MessagesResponse>;
  /** Like `chatStream`: resolves once the upstream accepted, then yields its events up to `message_stop`. */
  messagesStream?(
    model: ModelDefinition,
    call: MessagesCall,
    ctx: CallContext,
  ): Promise<AsyncIterable<MessagesEvent>>;
  /** The upstream's own count of a Messages request's input tokens. */
  countTokens?(
    model: ModelDefinition,
    call: MessagesCall,
    ctx: CallContext,
  ): Promise<{ input_tokens: number }>;
  image?(model: ModelDefinition, request: ImageRequest, ctx: CallContext): Promise<ImageResult>;
  tts?(model: ModelDefinition, request: SpeechRequest, ctx: CallContext): Promise<SpeechResult>;
  asr?(model: ModelDefinition, request: TranscriptionRequest, ctx: CallContext): Promise<TranscriptionResult>;
  embed?(model: ModelDefinition, request: EmbeddingRequest, ctx: CallContext): Promise<EmbeddingResult>;
  /** Starts a video generation; `pollVideo` follows it until it completes or fails. */
  startVideo?(model: ModelDefinition, request: VideoRequest, ctx: CallContext): Promise<VideoProgress>;
  pollVideo?(model: ModelDefinition, upstreamId: string, ctx: CallContext): Promise<VideoProgress>;
  // OpenAI's Responses API, where the upstream speaks it; other providers answer it through `chat`.
  /** `body` is a whole Responses request (the conversation in `input`); the provider sets `model`. */
  responses?(
    model: ModelDefinition,
    body: Record<string, unknown>,
    ctx: CallContext,
  ): Promise<ResponseObject>;
  /** Resolves once the upstream has accepted the request, then yields its events as they arrive. */
  responsesStream?(
    model: ModelDefinition,
    body: Record<string, unknown>,
    ctx: CallContext,
  ): Promise<AsyncIterable<ResponseStreamEvent>>;
}

/** A model an upstream lists as served: what discovering a connection's models records. */
export interface UpstreamModel {
  /** Its name at the upstream (the connection's model id, unless the id would be invalid). */
  id: string;
  modalities: Modality[];
  contextWindow?: number;
  maxOutputTokens?: number;
}

/** Where a connection's upstream is and how it is reached, read at each call (keys opened then). */
export interface UpstreamEndpoint {
  baseUrl: string;
  apiKey(): string | undefined;
  /** Extra headers the admin set on the connection, sent with every call. */
  headers(): Record<string, string>;
  /** Named in errors about the base URL (e.g. `the base_url of connection gemini-eu`). */
  baseUrlVariable: string;
}
