import type { RouteTarget, Strategy } from './routes.ts';

/** What a strategy may weigh besides the targets: a random source, and how busy each target is. */
export interface PickContext {
  /** Uniform in [0, 1): `Math.random` in the gateway, a seeded one in tests. */
  random: () => number;
  /** Generations of this model in flight in this process. */
  inFlight: (model: string) => number;
}

/**
 * The order a request tries the targets in (the first is the pick): `fallback` as declared;
 * `weighted` drawn by weight, each next target drawn by weight among those left; `least_busy` by
 * generations in flight, fewest first, ties as declared.
 */
export function orderTargets<T extends RouteTarget>(
  strategy: Strategy,
  targets: readonly T[],
  context: PickContext,
): T[] {
  switch (strategy) {
    case 'fallback':
      return [...targets];
    case 'weighted':
      return weightedOrder(targets, context.random);
    case 'least_busy':
      return targets
        .map((target, index) => ({ target, index, busy: context.inFlight(target.model) }))
        .sort((a, b) => a.busy - b.busy || a.index - b.index)
        .map(({ target }) => target);
    default: {
      const unknown: never = strategy;
      throw new Error(`unknown strategy ${JSON.stringify(unknown)}`);
    }
  }
}

function weightedOrder<T extends RouteTarget>(targets: readonly T[], random: () => number): T[] {
  const left = [...targets];
  const order: T[] = [];
  while (left.length > 0) {
    const total = left.reduce((sum, t) => sum + t.weight, 0);
    let point = random() * total;
    let index = left.findIndex((t) => {
      point -= t.weight;
      return point < 0;
    });
    if (index < 0) index = left.length - 1; // rounding at the very top of the range
    order.push(...left.splice(index, 1));
  }
  return order;
}
