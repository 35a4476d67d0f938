import type { UpstreamClient } from '../upstream.ts';
import { openAiApi, openAiChat, trimSlashes } from './openai-wire.ts';
import type { EnvLookup, ModelDefinition, Provider } from './types.ts';

const modelNames = (env: EnvLookup) => [
  ...new Set(
    (env.get('OPENAI_COMPATIBLE_MODELS') ?? '')
      .split(',')
      .map((name) => name.trim())
      .filter(Boolean),
  ),
];

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
        description: 'Comma-separated model names served there, e.g. llama3.1,qwen2.5',
        required: true,
      },
      {
        key: 'OPENAI_COMPATIBLE_API_KEY',
        description: 'Bearer key, when the server wants one',
        required: false,
      },
    ],
    models: (env) =>
      modelNames(env).map(
        (name): ModelDefinition => ({
          id: `compat/${name}`,
          name,
          description: `${name} on the OpenAI-compatible server`,
          modalities: ['text', 'stream', 'chat'],
          tags: ['openai-compatible'],
          meta: {},
          upstreamModel: name,
        }),
      ),
    ...openAiChat(api),
  };
}
