import { ROUTES_EVENT_TYPES, type RouteDefinition, type RoutesEvent } from '../services/ai/routing/routes.ts';
import { defineProjection } from '../shared/projections/projection.ts';
import { entriesOf, mapOf } from '../shared/projections/snapshot.ts';

export type RouteRecord = RouteDefinition & { updatedAt: string };

/** Route id → the route as an admin last set it. */
export type RoutesState = Map<string, RouteRecord>;

export const routesProjection = defineProjection<RoutesState, RoutesEvent>({
  name: 'routes',
  schemaVersion: 1,
  handles: ROUTES_EVENT_TYPES,
  initialState: () => new Map(),
  toSnapshot: entriesOf,
  fromSnapshot: (snapshot) => mapOf(snapshot, 'routes'),
  apply(state, event) {
    switch (event.type) {
      case 'RouteSet': {
        const d = event.data;
        state.set(d.id, {
          id: d.id,
          strategy: d.strategy,
          targets: d.targets.map(({ model, weight }) => ({ model, weight })),
          retryOn: [...d.retryOn],
          maxAttempts: d.maxAttempts,
          timeoutMs: d.timeoutMs,
          cooldown: {
            failures: d.cooldown.failures,
            windowS: d.cooldown.windowS,
            cooldownS: d.cooldown.cooldownS,
          },
          updatedAt: event.createdAt,
        });
        return;
      }
      case 'RouteRemoved':
        state.delete(event.data.id);
        return;
      default:
        return;
    }
  },
});
