import { z } from 'zod';
import { commandHandler } from '../../../shared/command-handler.ts';
import { ApiError } from '../../../shared/errors.ts';
import { defineAction } from '../../../shared/http/action.ts';
import type { AiDeps } from '../deps.ts';
import { shownTo } from '../governance/model-access.ts';
import { PRICES_STREAM, pricesDecider } from '../prices/prices.ts';

const amount = z.number().nonnegative().max(1_000_000);
const model = z.string().min(1).max(200);

/** A model of the catalog, callable or not: a price for a model that does not exist is a mistake. */
function knownModel({ catalog }: AiDeps, id: string): string {
  if (!catalog.entries().some((e) => e.model.id === id))
    throw new ApiError('validation_failed', `model "${id}" is not in the catalog`, { param: 'model' });
  return id;
}

const priceCommands = (deps: AiDeps) =>
  commandHandler(pricesDecider, {
    events: deps.gw.events,
    streamOf: () => PRICES_STREAM,
    readModels: deps.gw.projections,
  });

function view(deps: AiDeps, id: string) {
  const override = deps.prices.override(id);
  return { model: id, ...deps.prices.priceOf(id), source: override ? 'override' : 'default' };
}

/** GET /v1/ai/prices: admins see every model's price; users the prices of the models they may call. */
export function pricesListAction(deps: AiDeps) {
  return defineAction({
    service: 'ai',
    action: 'prices',
    method: 'GET',
    identities: ['admin', 'user'],
    summary: 'Prices in USD per model (per million tokens, image, audio or video second)',
    input: z.strictObject({}),
    handler: (_input, ctx) => {
      const ids = new Set(
        deps.catalog
          .entries()
          .filter(shownTo(ctx.identity))
          .map((e) => e.model.id),
      );
      return { items: [...ids].sort().map((id) => view(deps, id)) };
    },
  });
}

/** POST /v1/ai/prices/upsert: an admin overrides fields of a model's price; the rest stay as they are. */
export function pricesUpsertAction(deps: AiDeps) {
  return defineAction({
    service: 'ai',
    action: 'prices/upsert',
    method: 'POST',
    identities: ['admin'],
    summary: "Override a model's price; it applies to generations that start after",
    input: z.strictObject({
      model,
      input_per_mtok: amount.optional(),
      output_per_mtok: amount.optional(),
      per_image: amount.optional(),
      per_audio_second: amount.optional(),
      per_video_second: amount.optional(),
    }),
    handler: async ({ model: id, ...price }, ctx) => {
      await priceCommands(deps)({ type: 'SetPrice', model: knownModel(deps, id), price }, ctx.metadata);
      return view(deps, id);
    },
  });
}

/** POST /v1/ai/prices/remove: back to the built-in default. */
export function pricesRemoveAction(deps: AiDeps) {
  return defineAction({
    service: 'ai',
    action: 'prices/remove',
    method: 'POST',
    identities: ['admin'],
    summary: "Remove a model's price override: back to the built-in default",
    input: z.strictObject({ model }),
    handler: async ({ model: id }, ctx) => {
      await priceCommands(deps)({ type: 'RemovePrice', model: knownModel(deps, id) }, ctx.metadata);
      return view(deps, id);
    },
  });
}
