import type { RouteRecord, RoutesState } from '../../../projections/routes.ts';
import { ApiError } from '../../../shared/errors.ts';
import type { Catalog, CatalogEntry } from '../catalog.ts';
import type { Modality } from '../providers/types.ts';
import { RouteHealth } from './health.ts';
import { InFlight } from './in-flight.ts';
import { orderTargets } from './pick.ts';
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
    return route.targets.flatMap((target) => {
      const entry = this.catalog.find(target.model);
      return entry?.available ? [{ ...target, entry }] : [];
    });
  }

  /** The modalities every callable target has (of those a route serves); none when no target can be called. */
  modalitiesOf(route: RouteRecord): Modality[] {
    const callable = this.#callable(route);
    if (callable.length === 0) return [];
    return ROUTABLE.filter((m) => callable.every((t) => t.entry.model.modalities.includes(m)));
  }

  /**
   * The targets one request tries, in order: those callable for `modality` and not cooling down,
   * ordered by the route's strategy, at most `maxAttempts`. 404 `model_not_found` when no target
   * can be called (as for a model), 503 `unavailable` when every one is cooling down.
   */
  plan(route: RouteRecord, modality: Modality): PlannedTarget[] {
    const candidates = this.#callable(route).filter((t) => t.entry.model.modalities.includes(modality));
    if (candidates.length === 0 || !this.modalitiesOf(route).includes(modality)) {
      throw new ApiError(
        'model_not_found',
        `model "${route.id}" does not exist or cannot be called now for ${modality}`,
        { param: 'model' },
      );
    }
    const healthy = candidates.filter((t) => !this.health.isCooling(route.id, t.model));
    if (healthy.length === 0) {
      const ms = this.health.msUntilReturn(
        route.id,
        candidates.map((t) => t.model),
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
  view(route: RouteRecord) {
    const callable = new Set(this.#callable(route).map((t) => t.model));
    const modalities = this.modalitiesOf(route);
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
