import type { AnyAction, HttpMethod, ServiceDefinition } from './action.ts';
import type { WireDialect } from './dialect.ts';

export type Resolution =
  | { kind: 'found'; action: AnyAction; service: ServiceDefinition; params: Record<string, string> }
  | { kind: 'method_not_allowed'; allowed: HttpMethod[] }
  | { kind: 'not_found'; what: 'service' | 'action' };

/**
 * An action whose name has `:param` segments (`responses/:id`): it answers any one segment there; a
 * last `*param` segment takes the rest of the path, slashes included (`models/*id`: `models/dev/echo`).
 */
interface PatternAction {
  segments: string[];
  byMethod: Map<HttpMethod, AnyAction>;
}

const isParam = (segment: string) => segment.startsWith(':') || segment.startsWith('*');

/** The one table behind every `/v1/{service}/{action}` route and `GET /v1/services`. */
export class ActionRegistry {
  #services = new Map<string, ServiceDefinition>();
  #actions = new Map<string, Map<HttpMethod, AnyAction>>();
  #patterns = new Map<string, PatternAction[]>();

  register(service: ServiceDefinition): this {
    if (this.#services.has(service.id)) throw new Error(`service ${service.id} is registered twice`);
    this.#services.set(service.id, service);
    for (const action of service.actions) {
      if (action.service !== service.id)
        throw new Error(`action ${action.action} belongs to ${action.service}`);
      const key = `${action.service}/${action.action}`;
      let byMethod = this.#actions.get(key);
      if (!byMethod) {
        byMethod = new Map<HttpMethod, AnyAction>();
        this.#actions.set(key, byMethod);
        const segments = action.action.split('/');
        if (segments.some(isParam)) {
          const patterns = this.#patterns.get(service.id) ?? [];
          patterns.push({ segments, byMethod });
          this.#patterns.set(service.id, patterns);
        }
      }
      if (byMethod.has(action.method)) throw new Error(`${action.method} ${key} is registered twice`);
      byMethod.set(action.method, action);
    }
    return this;
  }

  services(): ServiceDefinition[] {
    return [...this.#services.values()];
  }

  /** The dialect of the action a `/v1/{service}/{action}` path names, whatever the method asked. */
  dialectOf(serviceId: string, actionName: string): WireDialect | undefined {
    const byMethod =
      this.#actions.get(`${serviceId}/${actionName}`) ?? this.#match(serviceId, actionName)?.byMethod;
    for (const found of byMethod?.values() ?? []) if (found.dialect) return found.dialect;
    return undefined;
  }

  /** The action a path names: by its exact name, else by a name with `:param` segments. */
  resolve(method: string, serviceId: string, actionName: string): Resolution {
    const service = this.#services.get(serviceId);
    if (!service) return { kind: 'not_found', what: 'service' };
    const exact = this.#actions.get(`${serviceId}/${actionName}`);
    const matched = exact ? { byMethod: exact, params: {} } : this.#match(serviceId, actionName);
    if (!matched) return { kind: 'not_found', what: 'action' };
    const action = matched.byMethod.get((method === 'HEAD' ? 'GET' : method) as HttpMethod);
    if (!action) return { kind: 'method_not_allowed', allowed: [...matched.byMethod.keys()] };
    return { kind: 'found', action, service, params: matched.params };
  }

  #match(serviceId: string, actionName: string) {
    const given = actionName.split('/');
    for (const { segments, byMethod } of this.#patterns.get(serviceId) ?? []) {
      const rest = segments.at(-1)!.startsWith('*');
      if (rest ? given.length < segments.length : segments.length !== given.length) continue;
      const params = new Map<string, string>();
      const fits = segments.every((segment, i) => {
        if (!isParam(segment)) return segment === given[i];
        const value = segment.startsWith('*') ? given.slice(i).join('/') : given[i]!;
        params.set(segment.slice(1), value);
        return value !== '' && !value.split('/').includes('');
      });
      if (fits) return { byMethod, params: Object.fromEntries(params) };
    }
    return undefined;
  }
}
