import { z } from 'zod';
import { ApiError } from '../../../shared/errors.ts';
import { defineEndpoint, noInput } from '../../../shared/http/action.ts';
import { type PluginManager, parametersOf } from '../plugins/manager.ts';
import type { PluginAction } from '../plugins/types.ts';

const pluginName = z.string().min(1).max(100);
const payload = z.record(z.string(), z.unknown()).default({});

/** The plugins: what is there and in what state, control, and their actions and commands run by name. */
export function pluginRoutes(plugins: PluginManager) {
  return [
    defineEndpoint({
      method: 'GET',
      path: '/api/plugins/list',
      input: noInput,
      handler: async () => ({
        plugins: await Promise.all(plugins.list().map((p) => plugins.status(p.name))),
      }),
    }),
    defineEndpoint({
      method: 'POST',
      path: '/api/plugins/control',
      input: z.strictObject({ pluginName, action: z.enum(['start', 'stop', 'restart', 'status']) }),
      handler: async (input) => ({ plugin: await plugins[input.action](input.pluginName) }),
    }),
    defineEndpoint({
      method: 'POST',
      path: '/api/plugins/availability',
      input: z.strictObject({ pluginName }),
      handler: async (input) => ({
        pluginName: input.pluginName,
        availability: await plugins.availability(input.pluginName),
      }),
    }),
    defineEndpoint({
      method: 'POST',
      path: '/api/plugins/action',
      input: z.strictObject({ pluginName, actionName: z.string().min(1).max(200), payload }),
      handler: async (input) => ({
        result: await plugins.run({
          plugin: input.pluginName,
          action: input.actionName,
          input: input.payload,
          source: 'api',
        }),
      }),
    }),
    defineEndpoint({
      method: 'POST',
      path: '/api/plugins/command',
      input: z.strictObject({ pluginName, command: z.string().min(1).max(200), payload }),
      handler: async (input) => {
        const action = plugins.action(input.pluginName, input.command);
        if (!action.supportsCommand)
          throw new ApiError('not_found', `${input.pluginName}.${input.command} is not a command`, {
            param: 'command',
          });
        const result = await plugins.run({
          plugin: input.pluginName,
          action: input.command,
          input: input.payload,
          source: 'command',
        });
        return { result };
      },
    }),
    defineEndpoint({
      method: 'GET',
      path: '/api/plugins/catalog',
      input: noInput,
      handler: () => ({
        plugins: plugins.list().map((p) => ({
          name: p.name,
          version: p.version,
          description: p.description,
          requires: p.requires,
          actions: p.actions.map((a) => ({ name: a.name, description: a.description, ...howServed(a) })),
        })),
      }),
    }),
    defineEndpoint({
      method: 'GET',
      path: '/api/ui/plugins',
      input: noInput,
      handler: async () => ({
        plugins: await Promise.all(
          plugins.list().map(async (p) => ({
            name: p.name,
            actions: p.actions.map((a) => a.name),
            pipelines: (p.pipelines ?? []).map((x) => x.name),
            guards: (p.guards ?? []).map((x) => x.name),
            effects: (p.effects ?? []).map((x) => x.name),
            resolves: (p.resolves ?? []).map((x) => x.name),
            hasSystem: p.system !== undefined,
            hasAvailability: p.availability !== undefined,
            availability: await plugins.availability(p.name),
            config: {
              actions: p.actions.map((a) => ({
                name: a.name,
                description: a.description,
                ...howServed(a),
                input: parametersOf(a),
              })),
            },
          })),
        ),
      }),
    }),
  ];
}

/** Where a plugin action may be called from besides `/api/plugins/action`. */
function howServed(action: PluginAction) {
  return {
    supportsCommand: action.supportsCommand ?? false,
    supportsApi: action.supportsApi ?? false,
    apiMethod: action.apiMethod ?? '',
    apiPath: action.apiPath ?? '',
  };
}
