import { z } from 'zod';
import type { AnyEndpoint, AnyPathEndpoint, HttpMethod } from '../../shared/http/action.ts';
import type { ActionRegistry } from '../../shared/http/registry.ts';
import type { JsonSchema } from './from-schema.ts';

export interface FuzzRoute {
  server: 'gateway' | 'runtime';
  method: HttpMethod;
  /** `:id` marks where an id goes. */
  path: string;
  /** What the route reads: the body (POST) or the query (GET, DELETE). */
  input: JsonSchema;
  /** Commands an admin may run on the fixtures are given no fixture ids, so the data made before the run stays. */
  destructive: boolean;
  /** SSE: the answer is a stream that stays open; only its status and headers are judged. */
  stream?: boolean;
  /** Answers a browser with an HTML page, failures included (the OAuth callback). */
  page?: boolean;
  /** Errors in another API's shape (the action's dialect, e.g. `anthropic`) rather than the one envelope. */
  dialect?: string;
}

/** An endpoint that answers only with an event stream (which stays open). */
const onlyStreams = (endpoint: AnyEndpoint) =>
  endpoint.produces?.length === 1 && endpoint.produces[0] === 'text/event-stream';

const schemaOf = (schema: z.ZodType): JsonSchema =>
  z.toJSONSchema(schema, { unrepresentable: 'any', io: 'input' }) as JsonSchema;

/** Every action of the gateway's registry, with the JSON Schema of its input. */
export function gatewayRoutes(registry: ActionRegistry): FuzzRoute[] {
  const routes: FuzzRoute[] = [
    { server: 'gateway', method: 'GET', path: '/health', input: {}, destructive: false },
    { server: 'gateway', method: 'GET', path: '/ready', input: {}, destructive: false },
    { server: 'gateway', method: 'GET', path: '/v1/services', input: {}, destructive: false },
    { server: 'gateway', method: 'GET', path: '/v1/openapi.json', input: {}, destructive: false },
    { server: 'gateway', method: 'GET', path: '/docs', input: {}, destructive: false, page: true },
  ];
  for (const service of registry.services()) {
    for (const action of service.actions) {
      routes.push({
        server: 'gateway',
        method: action.method,
        path: `/v1/${action.service}/${action.action}`,
        input: schemaOf(action.input),
        destructive: action.method === 'POST',
        stream: onlyStreams(action),
        page: action.produces?.includes('text/html') ?? false,
        ...(action.dialect ? { dialect: action.dialect.name } : {}),
      });
    }
  }
  return routes;
}

/** Every route of the runtime and of the session API, as the runtime mounted them. */
export function runtimeRoutes(routes: readonly AnyPathEndpoint[]): FuzzRoute[] {
  return routes.map((route) => ({
    server: 'runtime',
    method: route.method,
    path: route.path.replace(/[:*][A-Za-z]+/g, ':id'),
    input: schemaOf(route.input),
    // Stopping a plugin would take the fixtures' files away for the rest of the run; deleting a
    // session, the fixture session.
    destructive: route.path === '/api/plugins/control' || route.method === 'DELETE',
    stream: onlyStreams(route),
    page: route.produces?.includes('text/html') ?? false,
  }));
}
