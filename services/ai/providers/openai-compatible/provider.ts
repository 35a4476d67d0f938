import type { UpstreamClient } from '../../upstream.ts';
import { openAiEmbeddings } from '../openai/embeddings.ts';
import { openAiApi, openAiChat, trimSlashes } from '../openai/wire.ts';
import type { EnvLookup, Modality, ModelDefinition, Provider } from '../types.ts';

const namesIn = (env: EnvLookup, key: string) => [
  ...new Set(
    (env.get(key) ?? '')
      .split(',')
      .map((name) => name.trim())
      .filter(Boolean),
  ),
];

/** Chat models from `OPENAI_COMPATIBLE_MODELS`, embedding models from `…_EMBEDDING_MODELS`; a name in both does both. */
function modelsOf(env: EnvLookup): ModelDefinition[] {
  const modalities = new Map<string, Modality[]>();
  for (const name of namesIn(env, 'OPENAI_COMPATIBLE_MODELS'))
    modalities.set(name, ['text', 'stream', 'chat']);
  for (const name of namesIn(env, 'OPENAI_COMPATIBLE_EMBEDDING_MODELS'))
    modalities.set(name, [...(modalities.get(name) ?? []), 'embed']);
  return [...modalities].map(([name, modes]) => ({
    id: `compat/${name}`,
    name,
    description: `${name} on the OpenAI-compatible server`,
    modalities: modes,
    tags: ['openai-compatible'],
    meta: {},
    upstreamModel: name,
  }));
}

/**
 * Any server that speaks OpenAI's chat completions (Ollama, vLLM, llama.cpp, LM Studio, OpenRouter,
 * Groq…): its base URL and model names come from env; bodies pass through but for `model`.
 */
export function openAiCompatibleProvider(upstream: UpstreamClient): Provider {
  const api = openAiApi(upstream, (env) => ({
    baseUrl: trimSlashes(env.get('OPENAI_COMPATIBLE_BASE_URL') ?? ''),
    baseUrlVariable: 'OPENAI_COMPATIBLE_BASE_URL',
    apiKey: env.get('OPENAI_COMPATIBLE_API_KEY') || undefined,
  }));
  return {
    id: 'compat',
    name: 'OpenAI-compatible server',
    env: [
      {
        key: 'OPENAI_COMPATIBLE_BASE_URL',
        description: 'Base URL, e.g. http://127.0.0.1:11434/v1',
        required: true,
      },
      {
        key: 'OPENAI_COMPATIBLE_MODELS',
        description: 'Comma-separated chat model names served there, e.g. llama3.1,qwen2.5',
        // Not required: a server may serve embedding models only. Without names, no models.
        required: false,
      },
      {
        key: 'OPENAI_COMPATIBLE_EMBEDDING_MODELS',
        description: 'Comma-separated embedding model names served there, e.g. nomic-embed-text',
        required: false,
      },
      {
        key: 'OPENAI_COMPATIBLE_API_KEY',
        description: 'Bearer key, when the server wants one',
        required: false,
      },
    ],
    models: modelsOf,
    ...openAiChat(api),
    // The client's encoding: a server that knows only floats answers floats, decoded all the same.
    ...openAiEmbeddings(api, (asked) => asked),
  };
}
