import { z } from 'zod';
import { defineAction } from '../../../shared/http/action.ts';
import type { AiDeps } from '../deps.ts';
import { shownTo } from '../governance/model-access.ts';

/**
 * GET /v1/ai/models: users see what they can call now (of the models their token may call);
 * admins see every model and why it is (not) callable.
 */
export function modelsAction({ catalog }: AiDeps) {
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
      // `data` in OpenAI's model-list shape, so `client.models.list()` works unchanged.
      const data = entries.map(({ model }) => ({
        id: model.id,
        object: 'model',
        created: 0,
        owned_by: model.id.split('/')[0],
      }));
      return { object: 'list', items, data };
    },
  });
}
