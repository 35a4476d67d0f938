import { ApiError } from '../../../../shared/errors.ts';
import { SSE_END } from '../../chat/read-sse.ts';
import type { ResponseObject, ResponseStreamEvent } from '../../responses/wire.ts';
import { type UpstreamResponse, upstreamMessage } from '../../upstream.ts';
import { readEvents, readJson } from '../body.ts';
import type { CallContext, ModelDefinition } from '../types.ts';
import type { OpenAiApi } from './wire.ts';

/** OpenAI's Responses API: the body passes through but for `model` and `stream`. */
export function openAiResponses(api: OpenAiApi) {
  return {
    async responses(
      model: ModelDefinition,
      body: Record<string, unknown>,
      ctx: CallContext,
    ): Promise<ResponseObject> {
      const response = await api.send(ctx, '/responses', {
        json: { ...body, model: model.upstreamModel, stream: false },
      });
      const answer = await readJson<ResponseObject>(response, ctx.signal);
      if (answer?.object !== 'response' || !Array.isArray(answer.output))
        throw new ApiError('upstream_error', 'the upstream answered something that is not a response');
      return answer;
    },

    async responsesStream(
      model: ModelDefinition,
      body: Record<string, unknown>,
      ctx: CallContext,
    ): Promise<AsyncIterable<ResponseStreamEvent>> {
      const response = await api.send(ctx, '/responses', {
        json: { ...body, model: model.upstreamModel, stream: true },
        accept: 'text/event-stream',
      });
      return eventsOf(response, ctx.signal, api.secrets(ctx));
    },
  };
}

/** A Responses SSE body, event by event: an `error` event or a failed response throws. */
function eventsOf(
  response: UpstreamResponse,
  signal: AbortSignal,
  secrets: readonly (string | undefined)[],
): AsyncGenerator<ResponseStreamEvent> {
  return readEvents(response, signal, ({ event, data }): ResponseStreamEvent | typeof SSE_END => {
    if (data === '[DONE]') return SSE_END;
    const type = typeof data.type === 'string' ? data.type : event;
    if (type === 'error' || type === 'response.failed') {
      throw new ApiError('upstream_error', upstreamMessage(failureOf(data), secrets));
    }
    if (type === undefined) throw new ApiError('upstream_error', 'the upstream sent an event without a type');
    return { ...data, type, sequence_number: Number(data.sequence_number ?? 0) };
  });
}

/** What an `error` event (`{message}` or `{error: {message}}`) or a failed response says. */
function failureOf(data: Record<string, unknown>): string {
  const nested = (data.response as { error?: unknown } | undefined)?.error ?? data.error;
  const message =
    typeof data.message === 'string'
      ? data.message
      : (nested as { message?: unknown } | null | undefined)?.message;
  return typeof message === 'string' && message !== '' ? message : 'the upstream failed mid-answer';
}
