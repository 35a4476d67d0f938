import type { Cooldown } from './routes.ts';

/** Where a target of a route stands, as admins see it. */
export interface TargetState {
  state: 'healthy' | 'cooling';
  /** Failures within the route's window (reset when the target cools down). */
  recentFailures: number;
  /** When a cooling target is tried again (epoch ms), else null. */
  coolingUntil: number | null;
}

interface Breaker {
  /** Instants (epoch ms) of the failures not yet out of the window. */
  failures: number[];
  coolingUntil: number;
}

/**
 * A circuit breaker per target of each route: a target that fails `failures` times within
 * `windowS` seconds is cooled down for `cooldownS` seconds, skipped meanwhile, and tried again
 * after. In this process only: each gateway learns for itself, and a restart forgets.
 */
export class RouteHealth {
  /** Route id → target model → its breaker. */
  readonly #breakers = new Map<string, Map<string, Breaker>>();

  constructor(
    private readonly now: () => number = Date.now,
    /** Told each cooldown as it starts (metrics). */
    private readonly onCooldown?: (route: string, model: string) => void,
  ) {}

  isCooling(route: string, model: string): boolean {
    return (this.#breakers.get(route)?.get(model)?.coolingUntil ?? 0) > this.now();
  }

  /** Counts a failure of the target; the one that reaches the threshold starts its cooldown. */
  failed(route: string, model: string, cooldown: Cooldown): void {
    const now = this.now();
    let targets = this.#breakers.get(route);
    if (!targets) {
      targets = new Map();
      this.#breakers.set(route, targets);
    }
    const breaker = targets.get(model) ?? { failures: [], coolingUntil: 0 };
    targets.set(model, breaker);
    breaker.failures = [...recent(breaker.failures, now, cooldown), now];
    if (breaker.failures.length >= cooldown.failures) {
      breaker.failures = [];
      breaker.coolingUntil = now + cooldown.cooldownS * 1000;
      this.onCooldown?.(route, model);
    }
  }

  stateOf(route: string, model: string, cooldown: Cooldown): TargetState {
    const now = this.now();
    const breaker = this.#breakers.get(route)?.get(model);
    const cooling = breaker !== undefined && breaker.coolingUntil > now;
    return {
      state: cooling ? 'cooling' : 'healthy',
      recentFailures: breaker ? recent(breaker.failures, now, cooldown).length : 0,
      coolingUntil: cooling ? breaker.coolingUntil : null,
    };
  }

  /** How long until the first of these cooling targets is tried again (ms), or undefined when none cools. */
  msUntilReturn(route: string, models: readonly string[]): number | undefined {
    const now = this.now();
    const until = models
      .map((model) => this.#breakers.get(route)?.get(model)?.coolingUntil ?? 0)
      .filter((at) => at > now);
    return until.length === 0 ? undefined : Math.min(...until) - now;
  }
}

const recent = (failures: readonly number[], now: number, cooldown: Cooldown) =>
  failures.filter((at) => at > now - cooldown.windowS * 1000);
