import { z } from 'zod';
import { commandHandler } from '../../../shared/command-handler.ts';
import { ApiError } from '../../../shared/errors.ts';
import { defineAction } from '../../../shared/http/action.ts';
import type { AiDeps } from '../deps.ts';
import { ROUTABLE } from './route-book.ts';
import {
  type Cooldown,
  type RetryCondition,
  ROUTES_STREAM,
  type RouteDefinition,
  routesDecider,
  STRATEGIES,
} from './routes.ts';

const MAX_TARGETS = 16;
/** Tried again on 429, 5xx, a timeout and a connection that failed, unless the route says otherwise. */
export const DEFAULT_RETRY_ON: readonly RetryCondition[] = [
  429,
  500,
  502,
  503,
  504,
  'timeout',
  'connection_error',
];
export const DEFAULT_COOLDOWN: Cooldown = { failures: 3, windowS: 60, cooldownS: 30 };

const routeId = z
  .string()
  .max(128)
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9._-]*(\/[A-Za-z0-9][A-Za-z0-9._-]*)*$/,
    'a route id is letters, digits, ".", "_" and "-", in parts joined by "/"',
  );
const count = (max: number) => z.number().int().positive().max(max);

const RouteInput = z.strictObject({
  id: routeId,
  strategy: z.enum(STRATEGIES),
  targets: z
    .array(z.strictObject({ model: z.string().min(1).max(200), weight: count(1_000_000).optional() }))
    .min(1)
    .max(MAX_TARGETS),
  retry_on: z
    .array(z.union([z.number().int().min(400).max(599), z.enum(['timeout', 'connection_error'])]))
    .max(100)
    .optional(),
  max_attempts: count(MAX_TARGETS).optional(),
  timeout_ms: count(600_000).optional(),
  cooldown: z
    .strictObject({ failures: count(1_000), window_s: count(86_400), cooldown_s: count(86_400) })
    .partial()
    .optional(),
});
type RouteInput = z.infer<typeof RouteInput>;

/** The route an upsert describes, defaults filled in, or the 400 that says what is wrong with it. */
function definitionOf(deps: AiDeps, input: RouteInput): RouteDefinition {
  const prefix = input.id.split('/')[0]!;
  if (deps.catalog.providerIds().includes(prefix))
    throw new ApiError(
      'validation_failed',
      `a route id may not begin with a provider's prefix ("${prefix}/")`,
      {
        param: 'id',
      },
    );
  const seen = new Set<string>();
  const catalog = deps.catalog.byId();
  for (const { model } of input.targets) {
    if (seen.has(model))
      throw new ApiError('validation_failed', `model "${model}" is a target twice`, { param: 'targets' });
    seen.add(model);
    const entry = catalog.get(model);
    if (!entry)
      throw new ApiError('validation_failed', `model "${model}" is not in the catalog`, { param: 'targets' });
    if (!ROUTABLE.some((m) => entry.model.modalities.includes(m)))
      throw new ApiError('validation_failed', `model "${model}" serves none of ${ROUTABLE.join(', ')}`, {
        param: 'targets',
      });
  }
  if (input.max_attempts !== undefined && input.max_attempts > input.targets.length)
    throw new ApiError(
      'validation_failed',
      'max_attempts cannot be more than the targets (each is tried once)',
      {
        param: 'max_attempts',
      },
    );
  return {
    id: input.id,
    strategy: input.strategy,
    targets: input.targets.map(({ model, weight }) => ({ model, weight: weight ?? 1 })),
    retryOn: [...new Set(input.retry_on ?? DEFAULT_RETRY_ON)],
    maxAttempts: input.max_attempts ?? null,
    timeoutMs: input.timeout_ms ?? null,
    cooldown: {
      failures: input.cooldown?.failures ?? DEFAULT_COOLDOWN.failures,
      windowS: input.cooldown?.window_s ?? DEFAULT_COOLDOWN.windowS,
      cooldownS: input.cooldown?.cooldown_s ?? DEFAULT_COOLDOWN.cooldownS,
    },
  };
}

/** `routes/upsert`, `routes/list`, `routes/remove`: model ids of their own that go to other models. */
export function routeActions(deps: AiDeps) {
  const run = commandHandler(routesDecider, {
    events: deps.gw.events,
    streamOf: () => ROUTES_STREAM,
    readModels: deps.gw.projections,
  });
  const view = (id: string) => {
    const route = deps.routes.get(id);
    if (!route) throw new ApiError('not_found', `route ${id} does not exist`);
    return deps.routes.view(route);
  };

  return [
    defineAction({
      service: 'ai',
      action: 'routes/upsert',
      method: 'POST',
      identities: ['admin'],
      summary: 'Define a route: a model id whose generations go to other models, by a strategy',
      input: RouteInput,
      handler: async (input, ctx) => {
        await run({ type: 'SetRoute', route: definitionOf(deps, input) }, ctx.metadata);
        return view(input.id);
      },
    }),
    defineAction({
      service: 'ai',
      action: 'routes/list',
      method: 'GET',
      identities: ['admin'],
      summary: "Every route, with each target's state (healthy or cooling down)",
      input: z.strictObject({}),
      handler: () => ({ items: deps.routes.all().map((route) => deps.routes.view(route)) }),
    }),
    defineAction({
      service: 'ai',
      action: 'routes/remove',
      method: 'POST',
      identities: ['admin'],
      summary: 'Remove a route; generations under way through it finish',
      input: z.strictObject({ id: routeId }),
      handler: async ({ id }, ctx) => {
        await run({ type: 'RemoveRoute', id }, ctx.metadata);
        return { id, removed: true };
      },
    }),
  ];
}
