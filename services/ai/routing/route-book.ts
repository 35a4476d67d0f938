import type { RouteRecord, RoutesState } from '../../../projections/routes.ts';
import { ApiError } from '../../../shared/errors.ts';
import type { Catalog, CatalogEntry } from '../catalog.ts';
import type { Modality } from '../providers/types.ts';
import { RouteHealth } from './health.ts';
import { InFlight } from './in-flight.ts';
import { orderTargets } from './pick.ts';
import type { RouteView } from './route-view.ts';
import type { RouteTarget } from './routes.ts';

/** What a route can be called for: the chat family, on every route that speaks it. */
export const ROUTABLE: readonly Modality[] = ['text', 'stream', 'chat'];

/** A target a request will try, with the catalog entry that serves it. */
export interface PlannedTarget extends RouteTarget {
  entry: CatalogEntry;
}

/**
 * The routes admins set (their read model) seen through the catalog and the targets' health: which
 * routes can be called now, for what, and in which order a request tries their targets.
 */
export class RouteBook {
  constructor(
    private readonly routes: () => RoutesState,
    private readonly catalog: Catalog,
    readonly health: RouteHealth = new RouteHealth(),
    readonly inFlight: InFlight = new InFlight(),
    private readonly random: () => number = Math.random,
  ) {}

  get(id: string): RouteRecord | undefined {
    return this.routes().get(id);
  }

  /** Every route, by id. */
  all(): RouteRecord[] {
    return [...this.routes().values()].sort((a, b) => a.id.localeCompare(b.id));
  }

  /** The targets that can be called now, with their catalog entries (a model gone from the catalog is left out). */
  #callable(route: RouteRecord): PlannedTarget[] {
    const catalog = this.catalog.byId();
    return route.targets.flatMap((target) => {
      const entry = catalog.get(target.model);
      return entry?.available ? [{ ...target, entry }] : [];
    });
  }

  /**
   * The targets one request tries, in order: those callable now and not cooling down (all of them
   * serve the route's modalities), ordered by its strategy, at most `maxAttempts`. 404 `model_not_found`
   * when none can be called for `modality` (as for a model), 503 `unavailable` when every one cools down.
   */
  plan(route: RouteRecord, modality: Modality): PlannedTarget[] {
    const callable = this.#callable(route);
    if (!sharedModalities(callable).includes(modality)) {
      throw new ApiError(
        'model_not_found',
        `model "${route.id}" does not exist or cannot be called now for ${modality}`,
        { param: 'model' },
      );
    }
    const healthy = callable.filter((t) => !this.health.isCooling(route.id, t.model));
    if (healthy.length === 0) {
      const ms = this.health.msUntilReturn(
        route.id,
        callable.map((t) => t.model),
      );
      const seconds = Math.max(1, Math.ceil((ms ?? 0) / 1000));
      throw new ApiError(
        'unavailable',
        `every target of route "${route.id}" is cooling down after failures; try again in ${seconds} s`,
        { headers: { 'Retry-After': String(seconds) } },
      );
    }
    const ordered = orderTargets(route.strategy, healthy, {
      random: this.random,
      inFlight: (model) => this.inFlight.count(model),
    });
    return ordered.slice(0, route.maxAttempts ?? ordered.length);
  }

  /** A route as admins see it: its settings, and each target's catalog state and health. */
  view(route: RouteRecord): RouteView {
    const targets = this.#callable(route);
    const callable = new Set(targets.map((t) => t.model));
    const modalities = sharedModalities(targets);
    return {
      id: route.id,
      strategy: route.strategy,
      targets: route.targets.map(({ model, weight }) => {
        const health = this.health.stateOf(route.id, model, route.cooldown);
        return {
          model,
          weight,
          callable: callable.has(model),
          state: health.state,
          recent_failures: health.recentFailures,
          cooling_until: health.coolingUntil === null ? null : new Date(health.coolingUntil).toISOString(),
        };
      }),
      retry_on: route.retryOn,
      max_attempts: route.maxAttempts,
      timeout_ms: route.timeoutMs,
      cooldown: {
        failures: route.cooldown.failures,
        window_s: route.cooldown.windowS,
        cooldown_s: route.cooldown.cooldownS,
      },
      modalities,
      available: modalities.length > 0,
      updated_at: route.updatedAt,
    };
  }
}

/** The modalities every one of these targets has, of those a route serves; none without targets. */
function sharedModalities(targets: readonly PlannedTarget[]): Modality[] {
  if (targets.length === 0) return [];
  return ROUTABLE.filter((m) => targets.every((t) => t.entry.model.modalities.includes(m)));
}
