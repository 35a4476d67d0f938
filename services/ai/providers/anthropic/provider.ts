import { ApiError } from '../../../../shared/errors.ts';
import type { MessagesCall, MessagesEvent, MessagesResponse } from '../../anthropic-api/wire.ts';
import { type UpstreamClient, upstreamMessage } from '../../upstream.ts';
import { errorMessageOf, readEvents, readJson } from '../body.ts';
import { headerSecrets, trimSlashes } from '../openai/wire.ts';
import type { CallContext, Modality, ModelDefinition, Provider, UpstreamModel } from '../types.ts';
import { type AnthropicResponse, fromAnthropic, streamTranslator, toAnthropic } from './translate.ts';

export const ANTHROPIC_BASE_URL = 'https://api.anthropic.com';
const DEFAULT_BASE_URL = ANTHROPIC_BASE_URL;
const VERSION = '2023-06-01';
const CHAT: Modality[] = ['text', 'stream', 'chat'];

const model = (name: string, description: string, maxOutputTokens: number): ModelDefinition => ({
  id: `anthropic/${name}`,
  name,
  description,
  modalities: CHAT,
  tags: ['anthropic'],
  meta: {},
  upstreamModel: name,
  maxOutputTokens,
});

const MODELS = [
  model('claude-opus-4-5', 'Claude Opus 4.5', 64_000),
  model('claude-opus-4-1', 'Claude Opus 4.1', 32_000),
  model('claude-sonnet-4-5', 'Claude Sonnet 4.5', 64_000),
  model('claude-haiku-4-5', 'Claude Haiku 4.5', 64_000),
];

/** Where an Anthropic API is, read at each call: the built-in provider's from env, a connection's from the log. */
export interface AnthropicEndpoint {
  baseUrl(ctx: CallContext): string;
  apiKey(ctx: CallContext): string | undefined;
  /** Headers an admin set on a connection, sent with every call (never over the gateway's own). */
  headers?(): Record<string, string>;
  /** Named in errors about the base URL. */
  baseUrlVariable: string;
}

const FROM_ENV: AnthropicEndpoint = {
  baseUrl: (ctx) => ctx.env.get('ANTHROPIC_BASE_URL') || DEFAULT_BASE_URL,
  apiKey: (ctx) => ctx.env.get('ANTHROPIC_API_KEY'),
  baseUrlVariable: 'ANTHROPIC_BASE_URL',
};

/**
 * Anthropic's Messages API: translated to and from OpenAI's chat format (streaming and tools
 * included), and spoken natively to clients of the gateway's own Messages API.
 */
export function anthropicProvider(upstream: UpstreamClient): Provider {
  const { listModels: _discovery, ...calls } = anthropicApi(upstream, FROM_ENV);
  return {
    ...calls,
    id: 'anthropic',
    name: 'Anthropic',
    env: [
      { key: 'ANTHROPIC_API_KEY', description: 'Anthropic API key', required: true },
      {
        key: 'ANTHROPIC_BASE_URL',
        description: `API base URL (default ${DEFAULT_BASE_URL})`,
        required: false,
      },
    ],
    models: () => MODELS,
  };
}

/** The calls of a provider that speaks Anthropic's Messages API at `where`. */
export function anthropicApi(
  upstream: UpstreamClient,
  where: AnthropicEndpoint,
): Pick<Provider, 'chat' | 'chatStream' | 'messages' | 'messagesStream' | 'countTokens'> & {
  listModels(ctx: CallContext): Promise<UpstreamModel[]>;
} {
  const send = (ctx: CallContext, path: string, body: object | null, call?: Omit<MessagesCall, 'body'>) => {
    const apiKey = where.apiKey(ctx);
    const extra = where.headers?.() ?? {};
    return upstream.send({
      url: `${trimSlashes(where.baseUrl(ctx))}${path}`,
      ...(body === null ? { method: 'GET' as const } : {}),
      headers: {
        ...extra,
        ...(body === null ? {} : { 'content-type': 'application/json' }),
        'anthropic-version': call?.version ?? VERSION,
        ...(call?.beta ? { 'anthropic-beta': call.beta } : {}),
        ...(apiKey ? { 'x-api-key': apiKey } : {}),
      },
      ...(body === null ? {} : { body: JSON.stringify(body) }),
      signal: ctx.signal,
      secrets: [apiKey, ...headerSecrets(extra)],
      tenant: ctx.tenant,
      baseUrlVariable: where.baseUrlVariable,
      ...(ctx.retries === undefined ? {} : { retries: ctx.retries }),
    });
  };

  /** The stream's events up to `message_stop`; an `error` event or an early end is a 502. */
  async function* events(response: Awaited<ReturnType<typeof send>>, ctx: CallContext) {
    const secrets = [where.apiKey(ctx)];
    for await (const { event, data } of readEvents(response, ctx.signal)) {
      if (data === '[DONE]') continue;
      const type = event ?? String(data.type);
      const failure =
        errorMessageOf(data) ?? (type === 'error' ? 'the upstream failed mid-answer' : undefined);
      if (failure !== undefined) throw new ApiError('upstream_error', upstreamMessage(failure, secrets));
      yield { event: type, data } satisfies MessagesEvent;
      if (type === 'message_stop') return;
    }
    throw new ApiError('upstream_error', 'the upstream stream ended before message_stop');
  }

  const withModel = (m: ModelDefinition, call: MessagesCall) => ({ ...call.body, model: m.upstreamModel });

  return {
    async chat(m, request, ctx) {
      const response = await send(ctx, '/v1/messages', toAnthropic(request, m.upstreamModel));
      const message = await readJson<AnthropicResponse>(response, ctx.signal);
      if (!Array.isArray(message?.content))
        throw new ApiError('upstream_error', 'the upstream answered a message without content');
      return fromAnthropic(message, m.id);
    },

    async chatStream(m, request, ctx) {
      const response = await send(ctx, '/v1/messages', {
        ...toAnthropic(request, m.upstreamModel),
        stream: true,
      });
      const translate = streamTranslator(m.id, request.stream_options?.include_usage === true);
      return (async function* () {
        for await (const { event, data } of events(response, ctx)) yield* translate(event, data);
      })();
    },

    async messages(m, call, ctx) {
      const response = await send(ctx, '/v1/messages', { ...withModel(m, call), stream: false }, call);
      const message = await readJson<MessagesResponse>(response, ctx.signal);
      if (!Array.isArray(message?.content) || typeof message.usage !== 'object' || message.usage === null)
        throw new ApiError('upstream_error', 'the upstream answered a message without content or usage');
      return message;
    },

    async messagesStream(m, call, ctx) {
      const response = await send(ctx, '/v1/messages', { ...withModel(m, call), stream: true }, call);
      return events(response, ctx);
    },

    /** `GET /v1/models`, page by page. */
    async listModels(ctx) {
      const models: UpstreamModel[] = [];
      let after: string | undefined;
      do {
        const page = await readJson<{ data?: { id?: unknown }[]; has_more?: unknown; last_id?: unknown }>(
          await send(
            ctx,
            `/v1/models?limit=1000${after ? `&after_id=${encodeURIComponent(after)}` : ''}`,
            null,
          ),
          ctx.signal,
        );
        if (!Array.isArray(page?.data))
          throw new ApiError('upstream_error', 'the upstream answered a model list without data');
        for (const item of page.data)
          if (typeof item?.id === 'string') models.push({ id: item.id, modalities: CHAT });
        after = page.has_more === true && typeof page.last_id === 'string' ? page.last_id : undefined;
      } while (after);
      return models;
    },

    async countTokens(m, call, ctx) {
      const response = await send(ctx, '/v1/messages/count_tokens', withModel(m, call), call);
      const counted = await readJson<{ input_tokens?: unknown }>(response, ctx.signal);
      if (typeof counted?.input_tokens !== 'number')
        throw new ApiError('upstream_error', 'the upstream answered a count without input_tokens');
      return { input_tokens: counted.input_tokens };
    },
  };
}
