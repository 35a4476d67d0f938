import { devProvider } from './dev.ts';
import type { Provider } from './types.ts';

/** Every provider the gateway knows, in the order the catalog lists them. */
export function builtinProviders(): Provider[] {
  return [devProvider];
}
