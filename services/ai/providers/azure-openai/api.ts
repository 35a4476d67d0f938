import type { UpstreamClient } from '../../upstream.ts';
import { openAiEmbeddings } from '../openai/embeddings.ts';
import { type OpenAiCall, openAiApi, openAiChat } from '../openai/wire.ts';
import type { Provider, UpstreamEndpoint } from '../types.ts';

/** The `api-version` of Azure OpenAI's data plane a connection uses unless it names another. */
export const AZURE_API_VERSION = '2024-10-21';

/**
 * Azure OpenAI's data plane: OpenAI's wire with the deployment (a model's upstream id) in the
 * path, `api-version` in the query and the key in `api-key`, or as a bearer token (an Entra ID
 * token). Its deployments cannot be listed from the data plane: they are named.
 */
export function azureOpenAiApi(
  upstream: UpstreamClient,
  endpoint: UpstreamEndpoint,
  options: { apiVersion: string; bearer: boolean },
): Pick<Provider, 'chat' | 'chatStream' | 'embed'> {
  const api = openAiApi(upstream, () => ({
    baseUrl: endpoint.baseUrl,
    baseUrlVariable: endpoint.baseUrlVariable,
    apiKey: endpoint.apiKey(),
    headers: endpoint.headers(),
    keyHeader: options.bearer ? 'authorization' : 'api-key',
    urlOf: (path: string, call: OpenAiCall) =>
      `${endpoint.baseUrl}/openai/deployments/${encodeURIComponent(String((call.json as { model?: unknown }).model))}${path}?api-version=${encodeURIComponent(options.apiVersion)}`,
  }));
  return { ...openAiChat(api), ...openAiEmbeddings(api, () => 'base64') };
}
