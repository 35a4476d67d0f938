import { describe, it } from 'vitest';
import { deciderSpec } from '../../../shared/decider-spec.ts';
import { type RouteDefinition, type RoutesEvent, routesDecider } from './routes.ts';

const spec = deciderSpec(routesDecider);
const route = (overrides: Partial<RouteDefinition> = {}): RouteDefinition => ({
  id: 'smart',
  strategy: 'fallback',
  targets: [
    { model: 'compat/a', weight: 1 },
    { model: 'compat/b', weight: 1 },
  ],
  retryOn: [429, 503, 'timeout'],
  maxAttempts: null,
  timeoutMs: null,
  cooldown: { failures: 3, windowS: 60, cooldownS: 30 },
  ...overrides,
});
const set = (r: RouteDefinition): RoutesEvent => ({ type: 'RouteSet', data: r });

describe('routes decider', () => {
  it('sets a route', () => {
    spec
      .given([])
      .when({ type: 'SetRoute', route: route() })
      .thenEmits([set(route())]);
  });

  it('replaces a route whole when anything of it changes', () => {
    const changed = route({ strategy: 'weighted', targets: [{ model: 'compat/a', weight: 3 }] });
    spec
      .given([set(route())])
      .when({ type: 'SetRoute', route: changed })
      .thenEmits([set(changed)]);
    spec
      .given([set(route())])
      .when({ type: 'SetRoute', route: route({ cooldown: { failures: 3, windowS: 60, cooldownS: 5 } }) })
      .thenEmits([set(route({ cooldown: { failures: 3, windowS: 60, cooldownS: 5 } }))]);
  });

  it('records nothing when the route is set as it already is, whatever the order of its fields', () => {
    const stored = { ...route(), cooldown: { cooldownS: 30, windowS: 60, failures: 3 } };
    spec
      .given([set(stored)])
      .when({ type: 'SetRoute', route: route() })
      .thenEmits([]);
  });

  it('removes a route, and refuses to remove one that does not exist', () => {
    spec
      .given([set(route())])
      .when({ type: 'RemoveRoute', id: 'smart' })
      .thenEmits([{ type: 'RouteRemoved', data: { id: 'smart' } }]);
    spec
      .given([set(route()), { type: 'RouteRemoved', data: { id: 'smart' } }])
      .when({ type: 'RemoveRoute', id: 'smart' })
      .thenFails('not_found');
  });
});
