import { type Decider, unknownCase } from '../../../shared/decider.ts';
import { DomainError } from '../../../shared/errors.ts';

/** Every route lives in the single `routes` stream. */
export const ROUTES_STREAM = 'routes';

export const STRATEGIES = ['fallback', 'weighted', 'least_busy'] as const;
export type Strategy = (typeof STRATEGIES)[number];

/** What makes a route try its next target: an upstream status, a timeout, or a connection that failed. */
export type RetryCondition = number | 'timeout' | 'connection_error';

export interface RouteTarget {
  /** A model of the catalog (never another route). */
  model: string;
  /** Its share of the picks of a `weighted` route; ignored by the other strategies. */
  weight: number;
}

/** The circuit breaker of each target: `failures` within `windowS` cool it down for `cooldownS`. */
export interface Cooldown {
  failures: number;
  windowS: number;
  cooldownS: number;
}

/** A model id of its own whose generations go to other models of the catalog. */
export interface RouteDefinition {
  id: string;
  strategy: Strategy;
  targets: RouteTarget[];
  retryOn: RetryCondition[];
  /** Most targets one request tries; null: each target once. */
  maxAttempts: number | null;
  /** How long one attempt may take to answer (a stream: its first chunk); null: the upstream's own timeouts. */
  timeoutMs: number | null;
  cooldown: Cooldown;
}

export type RoutesEvent =
  | { type: 'RouteSet'; data: RouteDefinition }
  | { type: 'RouteRemoved'; data: { id: string } };

export type RoutesCommand =
  | { type: 'SetRoute'; route: RouteDefinition }
  | { type: 'RemoveRoute'; id: string };

/** Route id → its definition. */
export interface RoutesState {
  routes: ReadonlyMap<string, RouteDefinition>;
}

export const ROUTES_EVENT_TYPES = [
  'RouteSet',
  'RouteRemoved',
] as const satisfies readonly RoutesEvent['type'][];

const sameList = <T>(a: readonly T[], b: readonly T[], same: (x: T, y: T) => boolean) =>
  a.length === b.length && a.every((x, i) => same(x, b[i]!));

/** Field by field: events read back from `jsonb` come with their keys in another order. */
const sameRoute = (a: RouteDefinition, b: RouteDefinition) =>
  a.strategy === b.strategy &&
  sameList(a.targets, b.targets, (x, y) => x.model === y.model && x.weight === y.weight) &&
  sameList(a.retryOn, b.retryOn, (x, y) => x === y) &&
  a.maxAttempts === b.maxAttempts &&
  a.timeoutMs === b.timeoutMs &&
  a.cooldown.failures === b.cooldown.failures &&
  a.cooldown.windowS === b.cooldown.windowS &&
  a.cooldown.cooldownS === b.cooldown.cooldownS;

function decide(command: RoutesCommand, state: RoutesState): RoutesEvent[] {
  switch (command.type) {
    case 'SetRoute': {
      const { route } = command;
      if (route.targets.length === 0) throw new Error('a route needs at least one target');
      // Setting what is already set changes nothing, and records nothing.
      const current = state.routes.get(route.id);
      if (current && sameRoute(current, route)) return [];
      return [{ type: 'RouteSet', data: route }];
    }
    case 'RemoveRoute':
      if (!state.routes.has(command.id))
        throw new DomainError('not_found', `route ${command.id} does not exist`);
      return [{ type: 'RouteRemoved', data: { id: command.id } }];
    default:
      return unknownCase('command', command);
  }
}

function evolve(state: RoutesState, event: RoutesEvent): RoutesState {
  switch (event.type) {
    case 'RouteSet':
      return { routes: new Map(state.routes).set(event.data.id, event.data) };
    case 'RouteRemoved': {
      const routes = new Map(state.routes);
      routes.delete(event.data.id);
      return { routes };
    }
    default:
      return unknownCase('event', event);
  }
}

export const routesDecider: Decider<RoutesCommand, RoutesEvent, RoutesState> = {
  initialState: () => ({ routes: new Map() }),
  decide,
  evolve,
};
