import { ApiError } from '../../../shared/errors.ts';
import type { ChatChunk } from '../chat/wire.ts';
import { type UpstreamClient, upstreamMessage } from '../upstream.ts';
import {
  type AnthropicResponse,
  fromAnthropic,
  streamTranslator,
  toAnthropic,
} from './anthropic-translate.ts';
import { errorMessageOf, readEvents, readJson } from './body.ts';
import { trimSlashes } from './openai-wire.ts';
import type { CallContext, Modality, ModelDefinition, Provider } from './types.ts';

const DEFAULT_BASE_URL = 'https://api.anthropic.com';
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

/** Anthropic's Messages API, translated to and from OpenAI's chat format, streaming and tools included. */
export function anthropicProvider(upstream: UpstreamClient): Provider {
  const send = (ctx: CallContext, body: object) => {
    const apiKey = ctx.env.get('ANTHROPIC_API_KEY');
    return upstream.send({
      url: `${trimSlashes(ctx.env.get('ANTHROPIC_BASE_URL') || DEFAULT_BASE_URL)}/v1/messages`,
      headers: {
        'content-type': 'application/json',
        'anthropic-version': VERSION,
        ...(apiKey ? { 'x-api-key': apiKey } : {}),
      },
      body: JSON.stringify(body),
      signal: ctx.signal,
      secrets: [apiKey],
      tenant: ctx.tenant,
      baseUrlVariable: 'ANTHROPIC_BASE_URL',
      ...(ctx.retries === undefined ? {} : { retries: ctx.retries }),
    });
  };

  return {
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

    async chat(m, request, ctx) {
      const response = await send(ctx, toAnthropic(request, m.upstreamModel));
      const message = await readJson<AnthropicResponse>(response, ctx.signal);
      if (!Array.isArray(message?.content))
        throw new ApiError('upstream_error', 'the upstream answered a message without content');
      return fromAnthropic(message, m.id);
    },

    async chatStream(m, request, ctx) {
      const response = await send(ctx, { ...toAnthropic(request, m.upstreamModel), stream: true });
      const translate = streamTranslator(m.id, request.stream_options?.include_usage === true);
      const secrets = [ctx.env.get('ANTHROPIC_API_KEY')];
      return (async function* (): AsyncGenerator<ChatChunk> {
        for await (const { event, data } of readEvents(response, ctx.signal)) {
          if (data === '[DONE]') continue;
          const type = event ?? String(data.type);
          const failure =
            errorMessageOf(data) ?? (type === 'error' ? 'the upstream failed mid-answer' : undefined);
          if (failure !== undefined) throw new ApiError('upstream_error', upstreamMessage(failure, secrets));
          yield* translate(type, data);
          if (type === 'message_stop') return;
        }
        throw new ApiError('upstream_error', 'the upstream stream ended before message_stop');
      })();
    },
  };
}
