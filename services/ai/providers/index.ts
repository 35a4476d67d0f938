import type { UpstreamClient } from '../upstream.ts';
import { anthropicProvider } from './anthropic.ts';
import { devProvider } from './dev.ts';
import { localProvider } from './local/provider.ts';
import { openAiProvider } from './openai.ts';
import { openAiCompatibleProvider } from './openai-compatible.ts';
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
