import type { SecretBox } from '../../../shared/crypto.ts';
import { ApiError } from '../../../shared/errors.ts';
import type { GatewayContext } from '../../../shared/gateway-context.ts';
import { ANTHROPIC_BASE_URL, anthropicApi } from '../providers/anthropic/provider.ts';
import { AZURE_API_VERSION, azureOpenAiApi } from '../providers/azure-openai/api.ts';
import { awsDefaultCredentials, bedrockApi } from '../providers/bedrock/api.ts';
import { GEMINI_BASE_URL, geminiApi } from '../providers/gemini/api.ts';
import { openAiEmbeddings } from '../providers/openai/embeddings.ts';
import { openAiModels } from '../providers/openai/models.ts';
import { openAiApi, openAiChat, trimSlashes } from '../providers/openai/wire.ts';
import type { CallContext, Provider, UpstreamEndpoint, UpstreamModel } from '../providers/types.ts';
import type { UpstreamClient } from '../upstream.ts';
import type { Connection, ConnectionKind } from './connection.ts';
import { connectionsProjection } from './read-model.ts';

/**
 * Base URLs of the OpenAI-compatible services a connection can name instead of a URL: the preset
 * fills `base_url` (given, it wins). Their wire is OpenAI's chat completions and embeddings.
 */
export const PRESETS: Readonly<Record<string, { kind: ConnectionKind; baseUrl: string }>> = {
  openai: { kind: 'openai', baseUrl: 'https://api.openai.com/v1' },
  anthropic: { kind: 'anthropic', baseUrl: ANTHROPIC_BASE_URL },
  gemini: { kind: 'gemini', baseUrl: GEMINI_BASE_URL },
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

/** A kind's calls, and how it lists the models its upstream serves (where it can). */
type KindApi = Pick<Provider, 'chat' | 'chatStream'> &
  Partial<Pick<Provider, 'messages' | 'messagesStream' | 'countTokens' | 'embed'>> & {
    listModels?(ctx: CallContext): Promise<UpstreamModel[]>;
  };

/** How each kind is spoken to, given where its upstream is (the connection's secrets opened at each call). */
const KINDS: Record<
  ConnectionKind,
  (
    upstream: UpstreamClient,
    endpoint: UpstreamEndpoint,
    connection: Connection,
    secrets: SecretBox,
  ) => KindApi
> = {
  openai: (upstream, endpoint) => openAiKind(upstream, endpoint, () => 'base64'),
  // Other servers may know floats only: they are asked for what the client asked.
  openai_compatible: (upstream, endpoint) => openAiKind(upstream, endpoint, (asked) => asked),
  azure_openai: (upstream, endpoint, connection) =>
    azureOpenAiApi(upstream, endpoint, {
      apiVersion: connection.apiVersion ?? AZURE_API_VERSION,
      bearer: connection.bearer === true,
    }),
  // Anthropic's Messages API: native to the gateway's Messages clients, translated for chat.
  anthropic: (upstream, endpoint) =>
    anthropicApi(upstream, {
      baseUrl: () => endpoint.baseUrl,
      apiKey: endpoint.apiKey,
      headers: endpoint.headers,
      baseUrlVariable: endpoint.baseUrlVariable,
    }),
  gemini: (upstream, endpoint) => geminiApi(upstream, endpoint),
  bedrock: (upstream, endpoint, connection, secrets) => {
    const options = connection.bedrock;
    if (!options) throw new Error(`connection ${connection.id} of kind bedrock has no region`);
    const open = (sealed: string | null) => (sealed === null ? undefined : secrets.decrypt(sealed));
    const { accessKeyId, encryptedSecretAccessKey, encryptedSessionToken } = options;
    const keyPair =
      accessKeyId !== null && encryptedSecretAccessKey !== null
        ? async () => ({
            accessKeyId,
            secretAccessKey: open(encryptedSecretAccessKey)!,
            ...(encryptedSessionToken === null ? {} : { sessionToken: open(encryptedSessionToken)! }),
          })
        : awsDefaultCredentials();
    const standard = endpoint.baseUrl === bedrockRuntimeUrl(options.region);
    return bedrockApi(upstream, {
      ...endpoint,
      region: options.region,
      // A base URL of the admin's own (a proxy) serves the model list too.
      ...(standard ? {} : { controlUrl: endpoint.baseUrl }),
      credentials: keyPair,
    });
  },
};

export const bedrockRuntimeUrl = (region: string) => `https://bedrock-runtime.${region}.amazonaws.com`;

const openAiEndpoint = (endpoint: UpstreamEndpoint) => ({
  baseUrl: endpoint.baseUrl,
  baseUrlVariable: endpoint.baseUrlVariable,
  apiKey: endpoint.apiKey(),
  headers: endpoint.headers(),
});

function openAiKind(
  upstream: UpstreamClient,
  endpoint: UpstreamEndpoint,
  encoding: (asked: 'float' | 'base64') => 'float' | 'base64',
): KindApi {
  const api = openAiApi(upstream, () => openAiEndpoint(endpoint));
  return {
    ...openAiChat(api),
    ...openAiEmbeddings(api, encoding),
    listModels: (ctx) => openAiModels(api, ctx),
  };
}

/** Where a connection's upstream is: its key and headers opened from the log's ciphertext at each call. */
function endpointOf(connection: Connection, secrets: SecretBox): UpstreamEndpoint {
  const { encryptedApiKey, encryptedHeaders } = connection;
  return {
    baseUrl: trimSlashes(connection.baseUrl),
    apiKey: () => (encryptedApiKey === null ? undefined : secrets.decrypt(encryptedApiKey)),
    headers: () =>
      encryptedHeaders ? (JSON.parse(secrets.decrypt(encryptedHeaders)) as Record<string, string>) : {},
    baseUrlVariable: `the base_url of connection ${connection.id}`,
  };
}

/** The models `connection`'s upstream lists, or why it cannot list them. */
export function discoverModels(
  upstream: UpstreamClient,
  secrets: SecretBox,
  connection: Connection,
  ctx: CallContext,
): Promise<UpstreamModel[]> {
  const api = KINDS[connection.kind](upstream, endpointOf(connection, secrets), connection, secrets);
  if (!api.listModels)
    throw new ApiError(
      'validation_failed',
      `discover: a ${connection.kind} connection cannot list its models (Azure's deployments are named, not listed): give models`,
      { param: 'discover' },
    );
  return api.listModels(ctx);
}

/** The provider a connection is: its models as `<connection id>/<model id>`, spoken to as its kind is. */
export function connectionProvider(
  upstream: UpstreamClient,
  secrets: SecretBox,
  connection: Connection,
): Provider {
  const endpoint = endpointOf(connection, secrets);
  const { listModels: _discovery, ...calls } = KINDS[connection.kind](
    upstream,
    endpoint,
    connection,
    secrets,
  );
  return {
    id: connection.id,
    name: `${connection.id} (${connection.preset ?? connection.kind})`,
    env: [],
    models: () =>
      connection.models.map((model) => ({
        id: `${connection.id}/${model.id}`,
        name: model.id,
        description: `${model.upstreamId} at ${endpoint.baseUrl}`,
        modalities: model.modalities,
        tags: ['connection', connection.kind],
        meta: model.contextWindow === undefined ? {} : { context_window: model.contextWindow },
        upstreamModel: model.upstreamId,
        ...(model.maxOutputTokens === undefined ? {} : { maxOutputTokens: model.maxOutputTokens }),
      })),
    ...calls,
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
