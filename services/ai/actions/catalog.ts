import { z } from 'zod';
import { defineAction } from '../../../shared/http/action.ts';
import type { AiDeps } from '../deps.ts';
import { mayCallModel, shownTo } from '../governance/model-access.ts';

/**
 * GET /v1/ai/models: users see what they can call now (of the models their token may call);
 * admins see every model and why it is (not) callable. Routes are listed after the models, like
 * them; admins also see each route's targets and their health.
 */
export function modelsAction({ catalog, routes }: AiDeps) {
  return defineAction({
    service: 'ai',
    action: 'models',
    method: 'GET',
    identities: ['user', 'admin'],
    summary: 'The model catalog',
    input: z.strictObject({}),
    handler: (_input, ctx) => {
      const admin = ctx.identity.kind === 'admin';
      const entries = catalog.entries().filter(shownTo(ctx.identity));
      const items = entries.map(({ model, envRequirements, available, missingEnv, missingPrograms }) => ({
        id: model.id,
        name: model.name,
        description: model.description,
        modalities: model.modalities,
        tags: model.tags,
        meta: model.meta,
        ...(admin
          ? {
              env_requirements: envRequirements,
              default_modes: model.modalities,
              available,
              missing_env: missingEnv,
              missing_programs: missingPrograms,
            }
          : {}),
      }));
      const routed = routes
        .all()
        .map((route) => routes.view(route))
        .filter((route) => admin || (route.available && mayCallModel(ctx.identity, route.id)));
      const routeItems = routed.map((route) => ({
        id: route.id,
        name: route.id,
        description: `Route (${route.strategy}) over ${route.targets.map((t) => t.model).join(', ')}`,
        modalities: route.modalities,
        tags: ['route'],
        meta: {},
        ...(admin
          ? {
              env_requirements: [],
              default_modes: route.modalities,
              available: route.available,
              missing_env: [],
              missing_programs: [],
              route,
            }
          : {}),
      }));
      // `data` in OpenAI's model-list shape, so `client.models.list()` works unchanged.
      const data = [
        ...entries.map(({ model }) => ({
          id: model.id,
          object: 'model',
          created: 0,
          owned_by: model.id.split('/')[0],
        })),
        ...routed.map((route) => ({ id: route.id, object: 'model', created: 0, owned_by: 'route' })),
      ];
      return { object: 'list', items: [...items, ...routeItems], data };
    },
  });
}
