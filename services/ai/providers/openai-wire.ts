import { ApiError } from '../../../shared/errors.ts';
import { readSse } from '../chat/sse.ts';
import type { ChatChunk, ChatCompletion, ChatRequest } from '../chat/wire.ts';
import { scrub, type UpstreamClient } from '../upstream.ts';
import type { CallContext, ModelDefinition } from './types.ts';

/** Where an OpenAI-style upstream is and how to authenticate to it. */
export interface OpenAiEndpoint {
  baseUrl: string;
  apiKey: string | undefined;
}

export const jsonHeaders = (endpoint: OpenAiEndpoint): Record<string, string> => ({
  'content-type': 'application/json',
  ...(endpoint.apiKey ? { authorization: `Bearer ${endpoint.apiKey}` } : {}),
});

/**
 * Chat over OpenAI's wire format: the body passes through untouched but for `model` (tools,
 * tool_calls, response_format, logprobs… survive), and answers come back as they are.
 */
export function openAiChat(upstream: UpstreamClient, endpointOf: (ctx: CallContext) => OpenAiEndpoint) {
  return {
    async chat(model: ModelDefinition, request: ChatRequest, ctx: CallContext): Promise<ChatCompletion> {
      const endpoint = endpointOf(ctx);
      const response = await upstream.send({
        url: `${endpoint.baseUrl}/chat/completions`,
        headers: jsonHeaders(endpoint),
        body: JSON.stringify({ ...request, model: model.upstreamModel, stream: false }),
        signal: ctx.signal,
        secrets: [endpoint.apiKey],
      });
      return (await response.body.json()) as ChatCompletion;
    },

    async chatStream(
      model: ModelDefinition,
      request: ChatRequest,
      ctx: CallContext,
    ): Promise<AsyncIterable<ChatChunk>> {
      const endpoint = endpointOf(ctx);
      const response = await upstream.send({
        url: `${endpoint.baseUrl}/chat/completions`,
        headers: { ...jsonHeaders(endpoint), accept: 'text/event-stream' },
        body: JSON.stringify({ ...request, model: model.upstreamModel, stream: true }),
        signal: ctx.signal,
        secrets: [endpoint.apiKey],
      });
      return chunksOf(response.body, [endpoint.apiKey]);
    },
  };
}

/** Parses an OpenAI SSE body chunk by chunk; `[DONE]` ends it, an `{error}` event throws. */
async function* chunksOf(
  body: AsyncIterable<Buffer>,
  secrets: readonly (string | undefined)[],
): AsyncGenerator<ChatChunk> {
  for await (const event of readSse(body)) {
    if (event.data === '[DONE]') return;
    let parsed: ChatChunk & { error?: { message?: string } };
    try {
      parsed = JSON.parse(event.data);
    } catch {
      throw new ApiError('upstream_error', 'the upstream sent a chunk that is not JSON');
    }
    if (parsed.error) {
      const message = parsed.error.message ?? 'the upstream failed mid-stream';
      throw new ApiError('upstream_error', scrub(message, secrets));
    }
    yield parsed;
  }
}
