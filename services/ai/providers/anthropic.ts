import { ApiError } from '../../../shared/errors.ts';
import { readSse } from '../chat/sse.ts';
import type { ChatChunk } from '../chat/wire.ts';
import { scrub, type UpstreamClient } from '../upstream.ts';
import {
  type AnthropicResponse,
  fromAnthropic,
  streamTranslator,
  toAnthropic,
} from './anthropic-translate.ts';
import type { CallContext, Modality, ModelDefinition, Provider } from './types.ts';

const DEFAULT_BASE_URL = 'https://api.anthropic.com';
const VERSION = '2023-06-01';
const CHAT: Modality[] = ['text', 'stream', 'chat'];

const model = (name: string, description: string): ModelDefinition => ({
  id: `anthropic/${name}`,
  name,
  description,
  modalities: CHAT,
  tags: ['anthropic'],
  meta: {},
  upstreamModel: name,
});

const MODELS = [
  model('claude-opus-4-1', 'Claude Opus 4.1'),
  model('claude-sonnet-4-5', 'Claude Sonnet 4.5'),
  model('claude-haiku-4-5', 'Claude Haiku 4.5'),
];

/** Anthropic's Messages API, translated to and from OpenAI's chat format, streaming and tools included. */
export function anthropicProvider(upstream: UpstreamClient): Provider {
  const send = (ctx: CallContext, body: unknown) => {
    const apiKey = ctx.env.get('ANTHROPIC_API_KEY');
    const base = (ctx.env.get('ANTHROPIC_BASE_URL') ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
    return {
      apiKey,
      response: upstream.send({
        url: `${base}/v1/messages`,
        headers: {
          'content-type': 'application/json',
          'anthropic-version': VERSION,
          ...(apiKey ? { 'x-api-key': apiKey } : {}),
        },
        body: JSON.stringify(body),
        signal: ctx.signal,
        secrets: [apiKey],
      }),
    };
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
      const { response } = send(ctx, toAnthropic(request, m.upstreamModel));
      return fromAnthropic((await (await response).body.json()) as AnthropicResponse, m.id);
    },

    async chatStream(m, request, ctx) {
      const { response, apiKey } = send(ctx, { ...toAnthropic(request, m.upstreamModel), stream: true });
      const body = (await response).body;
      const translate = streamTranslator(m.id, request.stream_options?.include_usage === true);
      return (async function* (): AsyncGenerator<ChatChunk> {
        for await (const event of readSse(body)) {
          const data = JSON.parse(event.data) as Record<string, unknown>;
          const type = event.event ?? (data.type as string);
          if (type === 'error') {
            const message =
              (data.error as { message?: string } | undefined)?.message ?? 'the upstream failed mid-stream';
            throw new ApiError('upstream_error', scrub(message, [apiKey]));
          }
          yield* translate(type, data);
          if (type === 'message_stop') return;
        }
      })();
    },
  };
}
