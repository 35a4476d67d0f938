import type { UpstreamClient } from '../upstream.ts';
import { openAiChat } from './openai-wire.ts';
import type { ModelDefinition, Provider } from './types.ts';

/**
 * Any server that speaks OpenAI's chat completions (Ollama, vLLM, llama.cpp, LM Studio, OpenRouter,
 * Groq…): its base URL and model names come from env; bodies pass through.
 */
export function openAiCompatibleProvider(upstream: UpstreamClient): Provider {
  const chat = openAiChat(upstream, (ctx) => ({
    baseUrl: (ctx.env.get('OPENAI_COMPATIBLE_BASE_URL') ?? '').replace(/\/+$/, ''),
    apiKey: ctx.env.get('OPENAI_COMPATIBLE_API_KEY'),
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
        description: 'Comma-separated model names served there',
        required: true,
      },
      {
        key: 'OPENAI_COMPATIBLE_API_KEY',
        description: 'Bearer key, when the server wants one',
        required: false,
      },
    ],
    models(env) {
      const names = (env.get('OPENAI_COMPATIBLE_MODELS') ?? '')
        .split(',')
        .map((n) => n.trim())
        .filter(Boolean);
      return names.map(
        (name): ModelDefinition => ({
          id: `compat/${name}`,
          name,
          description: `${name} on the OpenAI-compatible server`,
          modalities: ['text', 'stream', 'chat'],
          tags: ['openai-compatible'],
          meta: {},
          upstreamModel: name,
        }),
      );
    },
    ...chat,
  };
}
