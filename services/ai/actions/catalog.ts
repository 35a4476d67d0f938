import { z } from 'zod';
import { ApiError } from '../../../shared/errors.ts';
import { type ActionContext, defineAction } from '../../../shared/http/action.ts';
import { anthropicDialect } from '../anthropic-api/dialect.ts';
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
        ...entries.map(({ model }) => openAiModel(model.id)),
        ...routed.map((r) => openAiModel(r.id, 'route')),
      ];
      return { object: 'list', items: [...items, ...routeItems], data };
    },
  });
}

/** A model in OpenAI's shape: the gateway's id, owned by its provider (or `route`). */
const openAiModel = (id: string, owner = id.split('/')[0]!) => ({
  id,
  object: 'model',
  created: 0,
  owned_by: owner,
});

/** The ids a caller may see: the catalog's models shown to it, then the routes it may call. */
function visibleIds({ catalog, routes }: AiDeps, identity: ActionContext['identity']) {
  const admin = identity.kind === 'admin';
  const models = catalog
    .entries()
    .filter(shownTo(identity))
    .map(({ model }) => model.id);
  const routed = routes
    .all()
    .map((route) => routes.view(route))
    .filter((route) => admin || (route.available && mayCallModel(identity, route.id)))
    .map((route) => route.id);
  return { models, routed };
}

/**
 * GET /v1/ai/models/{id}: one model in OpenAI's shape (`client.models.retrieve`); a model the caller
 * may not see does not exist for it. A model id holds a slash, sent as it is (`models/dev/echo`) or
 * encoded (`models/dev%2Fecho`, as OpenAI's clients send it).
 */
export function modelAction(deps: AiDeps) {
  return defineAction({
    service: 'ai',
    action: 'models/*id',
    method: 'GET',
    identities: ['user', 'admin'],
    summary: "One model (OpenAI's shape)",
    params: z.strictObject({ id: z.string().min(1).max(300) }),
    input: z.object({}),
    handler: (_input, ctx) => {
      const id = ctx.params.id;
      const { models, routed } = visibleIds(deps, ctx.identity);
      if (models.includes(id)) return openAiModel(id);
      if (routed.includes(id)) return openAiModel(id, 'route');
      throw new ApiError('not_found', `model ${id} does not exist`, { param: 'model' });
    },
  });
}

/**
 * GET /v1/ai/anthropic/v1/models: the models a caller may see in Anthropic's list shape
 * (`anthropic.models.list()`), on one page.
 */
export function anthropicModelsAction(deps: AiDeps) {
  return defineAction({
    service: 'ai',
    action: 'anthropic/v1/models',
    method: 'GET',
    identities: ['user', 'admin'],
    dialect: anthropicDialect,
    summary: "The model catalog (Anthropic's shape)",
    // Anthropic's paging (`limit`, `before_id`, `after_id`) is read as nothing asked: one page holds all.
    input: z.object({}),
    handler: (_input, ctx) => {
      const { models, routed } = visibleIds(deps, ctx.identity);
      const data = [...models, ...routed].map((id) => ({
        type: 'model',
        id,
        display_name: deps.catalog.byId().get(id)?.model.name ?? id,
        created_at: '1970-01-01T00:00:00Z',
      }));
      return { data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
    },
  });
}
