import type { SecretBox } from '../../../shared/crypto.ts';
import type { GatewayContext } from '../../../shared/gateway-context.ts';
import { ANTHROPIC_BASE_URL, anthropicApi } from '../providers/anthropic/provider.ts';
import { openAiEmbeddings } from '../providers/openai/embeddings.ts';
import { type OpenAiCall, openAiApi, openAiChat, trimSlashes } from '../providers/openai/wire.ts';
import type { Provider } from '../providers/types.ts';
import type { UpstreamClient } from '../upstream.ts';
import type { Connection, ConnectionKind } from './connection.ts';
import { connectionsProjection } from './read-model.ts';

/** The `api-version` of Azure OpenAI's data plane a connection uses unless it names another. */
export const AZURE_API_VERSION = '2024-10-21';

/**
 * Base URLs of the OpenAI-compatible services a connection can name instead of a URL: the preset
 * fills `base_url` (given, it wins). Their wire is OpenAI's chat completions and embeddings.
 */
export const PRESETS: Readonly<Record<string, { kind: ConnectionKind; baseUrl: string }>> = {
  openai: { kind: 'openai', baseUrl: 'https://api.openai.com/v1' },
  anthropic: { kind: 'anthropic', baseUrl: ANTHROPIC_BASE_URL },
  groq: { kind: 'openai_compatible', baseUrl: 'https://api.groq.com/openai/v1' },
  together: { kind: 'openai_compatible', baseUrl: 'https://api.together.xyz/v1' },
  mistral: { kind: 'openai_compatible', baseUrl: 'https://api.mistral.ai/v1' },
  deepseek: { kind: 'openai_compatible', baseUrl: 'https://api.deepseek.com/v1' },
  xai: { kind: 'openai_compatible', baseUrl: 'https://api.x.ai/v1' },
  fireworks: { kind: 'openai_compatible', baseUrl: 'https://api.fireworks.ai/inference/v1' },
  openrouter: { kind: 'openai_compatible', baseUrl: 'https://openrouter.ai/api/v1' },
  perplexity: { kind: 'openai_compatible', baseUrl: 'https://api.perplexity.ai' },
  cerebras: { kind: 'openai_compatible', baseUrl: 'https://api.cerebras.ai/v1' },
  ollama: { kind: 'openai_compatible', baseUrl: 'http://127.0.0.1:11434/v1' },
  vllm: { kind: 'openai_compatible', baseUrl: 'http://127.0.0.1:8000/v1' },
  lmstudio: { kind: 'openai_compatible', baseUrl: 'http://127.0.0.1:1234/v1' },
};

/**
 * The provider a connection is: its models as `<connection id>/<model id>`, spoken to over OpenAI's
 * wire with its key (opened from the log's ciphertext at each call, never kept in clear).
 */
export function connectionProvider(
  upstream: UpstreamClient,
  secrets: SecretBox,
  connection: Connection,
): Provider {
  const baseUrl = trimSlashes(connection.baseUrl);
  const apiKey = () =>
    connection.encryptedApiKey === null ? undefined : secrets.decrypt(connection.encryptedApiKey);
  const described = {
    id: connection.id,
    name: `${connection.id} (${connection.preset ?? connection.kind})`,
    env: [],
    models: () =>
      connection.models.map((model) => ({
        id: `${connection.id}/${model.id}`,
        name: model.id,
        description: `${model.upstreamId} at ${baseUrl}`,
        modalities: model.modalities,
        tags: ['connection', connection.kind],
        meta: {},
        upstreamModel: model.upstreamId,
      })),
  };
  if (connection.kind === 'anthropic') {
    // Anthropic's Messages API: native to the gateway's Messages clients, translated for chat.
    const where = {
      baseUrl: () => baseUrl,
      apiKey,
      baseUrlVariable: `the base_url of connection ${connection.id}`,
    };
    return { ...described, ...anthropicApi(upstream, where) };
  }
  const azure = connection.kind === 'azure_openai';
  const api = openAiApi(upstream, () => ({
    baseUrl,
    baseUrlVariable: `the base_url of connection ${connection.id}`,
    apiKey: apiKey(),
    // Azure OpenAI: the deployment (the model's upstream id) in the path, `api-version` in the query,
    // the key in `api-key`.
    ...(azure
      ? {
          keyHeader: 'api-key' as const,
          urlOf: (path: string, call: OpenAiCall) =>
            `${baseUrl}/openai/deployments/${encodeURIComponent(String((call.json as { model?: unknown }).model))}${path}?api-version=${encodeURIComponent(connection.apiVersion ?? AZURE_API_VERSION)}`,
        }
      : {}),
  }));
  return {
    ...described,
    ...openAiChat(api),
    // OpenAI itself answers base64 (smaller); other servers may know floats only.
    ...openAiEmbeddings(api, (asked) => (connection.kind === 'openai_compatible' ? asked : 'base64')),
  };
}

/** The providers of the gateway's connections, made again only when a connection changed. */
export function connectedProviders(gw: GatewayContext, upstream: UpstreamClient): () => readonly Provider[] {
  let made: { version: number; providers: readonly Provider[] } = { version: -1, providers: [] };
  return () => {
    const { byId, version } = gw.projections.state(connectionsProjection);
    if (version !== made.version)
      made = {
        version,
        providers: [...byId.values()].map((c) => connectionProvider(upstream, gw.secrets, c)),
      };
    return made.providers;
  };
}
