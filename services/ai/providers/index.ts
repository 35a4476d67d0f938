import type { UpstreamClient } from '../upstream.ts';
import { anthropicProvider } from './anthropic/provider.ts';
import { devProvider } from './dev/provider.ts';
import { localProvider } from './local/provider.ts';
import { openAiProvider } from './openai/provider.ts';
import { openAiCompatibleProvider } from './openai-compatible/provider.ts';
import type { Provider } from './types.ts';

/** Every provider the gateway knows, in the order the catalog lists them. */
export function builtinAiProviders(upstream: UpstreamClient): Provider[] {
  return [
    devProvider,
    openAiProvider(upstream),
    openAiCompatibleProvider(upstream),
    anthropicProvider(upstream),
    localProvider(),
  ];
}
