import { ApiError } from '../../../../shared/errors.ts';
import { SSE_END } from '../../chat/read-sse.ts';
import type { ChatChunk, ChatCompletion, ChatRequest } from '../../chat/wire.ts';
import { type UpstreamClient, type UpstreamResponse, upstreamMessage } from '../../upstream.ts';
import { errorMessageOf, readEvents, readJson } from '../body.ts';
import type { CallContext, EnvLookup, ModelDefinition } from '../types.ts';

/** Where an OpenAI-style API is and the key it wants, read from env at each call. */
export interface OpenAiEndpoint {
  baseUrl: string;
  /** The env variable `baseUrl` comes from. */
  baseUrlVariable: string;
  apiKey: string | undefined;
  /** The header the key goes in: `Authorization: Bearer` (default), or Azure's `api-key`. */
  keyHeader?: 'authorization' | 'api-key';
  /** The URL of a call, when not `baseUrl` + path (Azure: the deployment in the path, `api-version`). */
  urlOf?: (path: string, call: OpenAiCall) => string;
  /** Headers an admin set on a connection, sent with every call (never over the gateway's own). */
  headers?: Record<string, string>;
}

export const trimSlashes = (url: string) => url.replace(/\/+$/, '');

/** What an error from the upstream must never repeat: the key and the connection's header values. */
const secretsOf = (endpoint: OpenAiEndpoint) => [endpoint.apiKey, ...headerSecrets(endpoint.headers)];

/** Header values long enough to be credentials (shorter ones are flags and would blot out words). */
export const headerSecrets = (headers: Record<string, string> = {}) =>
  Object.values(headers).filter((value) => value.length >= 8);

export interface OpenAiCall {
  method?: 'GET' | 'POST';
  /** Sent as JSON. */
  json?: unknown;
  /** Sent as is, with `contentType`. */
  body?: Buffer;
  contentType?: string;
  accept?: string;
}

/** Calls to one OpenAI-style API through the shared upstream client, bearer key included. */
export function openAiApi(upstream: UpstreamClient, endpointOf: (env: EnvLookup) => OpenAiEndpoint) {
  return {
    secrets: (ctx: CallContext) => secretsOf(endpointOf(ctx.env)),
    send(ctx: CallContext, path: string, call: OpenAiCall = {}): Promise<UpstreamResponse> {
      const endpoint = endpointOf(ctx.env);
      const { baseUrl, baseUrlVariable, apiKey, keyHeader, urlOf } = endpoint;
      const headers: Record<string, string> = { ...endpoint.headers };
      let body: string | Buffer | undefined;
      if (call.json !== undefined) {
        headers['content-type'] = 'application/json';
        body = JSON.stringify(call.json);
      } else if (call.body !== undefined) {
        headers['content-type'] = call.contentType ?? 'application/octet-stream';
        body = call.body;
      }
      if (call.accept) headers.accept = call.accept;
      if (apiKey && keyHeader === 'api-key') headers['api-key'] = apiKey;
      else if (apiKey) headers.authorization = `Bearer ${apiKey}`;
      return upstream.send({
        url: urlOf ? urlOf(path, call) : `${baseUrl}${path}`,
        method: call.method ?? 'POST',
        headers,
        ...(body === undefined ? {} : { body }),
        signal: ctx.signal,
        secrets: secretsOf(endpoint),
        tenant: ctx.tenant,
        baseUrlVariable,
        ...(ctx.retries === undefined ? {} : { retries: ctx.retries }),
      });
    },
  };
}
export type OpenAiApi = ReturnType<typeof openAiApi>;

/**
 * Chat over OpenAI's wire format, shared by `openai` and `openai-compatible`: the body passes
 * through untouched but for `model` (tools, tool_calls, response_format, logprobs… survive), and
 * answers come back as they are. `adapt` lets a provider adjust a request for a model.
 */
export function openAiChat(
  api: OpenAiApi,
  adapt: (request: ChatRequest, model: ModelDefinition) => ChatRequest = (request) => request,
) {
  return {
    async chat(model: ModelDefinition, request: ChatRequest, ctx: CallContext): Promise<ChatCompletion> {
      // `stream_options` is refused by OpenAI unless streaming.
      const { stream, stream_options: _options, ...body } = adapt(request, model);
      const response = await api.send(ctx, '/chat/completions', {
        json: { ...body, model: model.upstreamModel, ...(stream == null ? {} : { stream: false }) },
      });
      const completion = await readJson<ChatCompletion>(response, ctx.signal);
      if (!Array.isArray(completion?.choices))
        throw new ApiError('upstream_error', 'the upstream answered a chat completion without choices');
      return completion;
    },

    async chatStream(
      model: ModelDefinition,
      request: ChatRequest,
      ctx: CallContext,
    ): Promise<AsyncIterable<ChatChunk>> {
      const response = await api.send(ctx, '/chat/completions', {
        json: { ...adapt(request, model), model: model.upstreamModel, stream: true },
        accept: 'text/event-stream',
      });
      return chunksOf(response, ctx.signal, api.secrets(ctx));
    },
  };
}

/** An OpenAI SSE body, chunk by chunk as it arrives: `[DONE]` ends it, an `{error}` event throws. */
function chunksOf(
  response: UpstreamResponse,
  signal: AbortSignal,
  secrets: readonly (string | undefined)[],
): AsyncIterable<ChatChunk> {
  return readEvents(response, signal, ({ event, data }) => {
    if (data === '[DONE]') return SSE_END;
    const failure =
      errorMessageOf(data) ?? (event === 'error' ? 'the upstream failed mid-answer' : undefined);
    if (failure !== undefined) throw new ApiError('upstream_error', upstreamMessage(failure, secrets));
    // Some servers leave `choices` out of their usage chunk.
    return (Array.isArray(data.choices) ? data : { ...data, choices: [] }) as ChatChunk;
  });
}
