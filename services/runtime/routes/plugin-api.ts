import { z } from 'zod';
import { defineEndpoint } from '../../../shared/http/action.ts';
import type { PluginManager } from '../plugins/manager.ts';

/**
 * Plugin actions that ask for it are also served at their own method and path (`POST
 * /api/files/read`); the body or query goes to the action as is, and its own schema judges it.
 */
export function pluginApiRoutes(plugins: PluginManager) {
  return plugins.list().flatMap((plugin) =>
    plugin.actions
      .filter((action) => action.supportsApi && action.apiPath)
      .map((action) =>
        defineEndpoint({
          method: action.apiMethod === 'GET' ? 'GET' : 'POST',
          path: action.apiPath!,
          input: z.unknown(),
          handler: async (input) => {
            const result = await plugins.run({
              plugin: plugin.name,
              action: action.name,
              input,
              source: 'api',
            });
            return typeof result === 'object' && result !== null && !Array.isArray(result)
              ? result
              : { result };
          },
        }),
      ),
  );
}
