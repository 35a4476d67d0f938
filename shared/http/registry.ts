import type { AnyAction, HttpMethod, ServiceDefinition } from './action.ts';
import type { WireDialect } from './dialect.ts';

export type Resolution =
  | { kind: 'found'; action: AnyAction; service: ServiceDefinition }
  | { kind: 'method_not_allowed'; allowed: HttpMethod[] }
  | { kind: 'not_found'; what: 'service' | 'action' };

/** The one table behind every `/v1/{service}/{action}` route and `GET /v1/services`. */
export class ActionRegistry {
  #services = new Map<string, ServiceDefinition>();
  #actions = new Map<string, Map<HttpMethod, AnyAction>>();

  register(service: ServiceDefinition): this {
    if (this.#services.has(service.id)) throw new Error(`service ${service.id} is registered twice`);
    this.#services.set(service.id, service);
    for (const action of service.actions) {
      if (action.service !== service.id)
        throw new Error(`action ${action.action} belongs to ${action.service}`);
      const key = `${action.service}/${action.action}`;
      const byMethod = this.#actions.get(key) ?? new Map<HttpMethod, AnyAction>();
      if (byMethod.has(action.method)) throw new Error(`${action.method} ${key} is registered twice`);
      byMethod.set(action.method, action);
      this.#actions.set(key, byMethod);
    }
    return this;
  }

  services(): ServiceDefinition[] {
    return [...this.#services.values()];
  }

  /** The dialect of the `/v1/{service}/{action}` action at `path`, whatever the method asked. */
  dialectAt(path: string): WireDialect | undefined {
    const [, v1, service, ...action] = path.split('/');
    if (v1 !== 'v1' || !service || action.length === 0) return undefined;
    let key: string;
    try {
      key = `${decodeURIComponent(service)}/${action.map(decodeURIComponent).join('/')}`;
    } catch {
      return undefined; // not percent-encoding: no action has that name
    }
    for (const found of this.#actions.get(key)?.values() ?? []) if (found.dialect) return found.dialect;
    return undefined;
  }

  resolve(method: string, serviceId: string, actionName: string): Resolution {
    const service = this.#services.get(serviceId);
    if (!service) return { kind: 'not_found', what: 'service' };
    const byMethod = this.#actions.get(`${serviceId}/${actionName}`);
    if (!byMethod) return { kind: 'not_found', what: 'action' };
    const action = byMethod.get((method === 'HEAD' ? 'GET' : method) as HttpMethod);
    if (!action) return { kind: 'method_not_allowed', allowed: [...byMethod.keys()] };
    return { kind: 'found', action, service };
  }
}
