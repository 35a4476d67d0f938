import { z } from 'zod';
import { ApiErrorBody } from '../error-envelope.ts';
import { ERROR_STATUS, type ErrorCode } from '../errors.ts';
import { type AnyAction, type AnyPathEndpoint, type HttpMethod, noInput } from './action.ts';
import { SMALL_BODY_BYTES } from './body-budget.ts';
import type { WireDialect } from './dialect.ts';
import type { IdentityKind } from './identity.ts';

/**
 * OpenAPI 3.1 documents made from the same zod schemas `serve` parses with: endpoints in, a document
 * out. What each endpoint can answer is derived (docs/decisions.md, "API description"), never written
 * per endpoint: who may call it, what it reads, and the errors its app answers everywhere.
 */

/** JSON Schema (2020-12) as zod writes it, or any part of an OpenAPI document. */
type Json = Record<string, unknown>;

/** One endpoint as the document describes it: a registry action or a route, at an express path. */
export interface DescribedEndpoint {
  method: HttpMethod;
  /** Express style: `/v1/ai/responses/:id`. */
  path: string;
  /** Groups endpoints in the reference page (the action's service, a route's area). */
  tag: string;
  summary?: string;
  /** Who may call it; `[]` lets everyone in. Undefined where the app has no identities (the runtime). */
  identities?: readonly IdentityKind[];
  input: z.ZodType;
  params?: z.ZodType;
  output?: z.ZodType;
  status: number;
  bodyLimitBytes?: number;
  dialect?: WireDialect;
  produces?: readonly string[];
  /** A POST's body when not JSON. */
  consumes?: 'multipart/form-data';
  errors?: readonly ErrorCode[];
}

export interface DocumentOptions {
  title: string;
  version: string;
  description: string;
  /** How a bearer credential is described in this app (a user token or the admin key; the runtime's token). */
  bearer: string;
  /**
   * The security of an endpoint where the app decides it (no credential is read outside the gateway's
   * `/v1`; the runtime's token); undefined: derived from the endpoint's identities.
   */
  securityOf?(endpoint: DescribedEndpoint): readonly Json[] | undefined;
  /** Errors this app may answer on an endpoint whatever the endpoint is (a refused credential, stale read models). */
  commonErrors(endpoint: DescribedEndpoint): readonly ErrorCode[];
}

export interface OpenApiDocument {
  openapi: '3.1.0';
  info: Json;
  paths: Record<string, Record<string, Json>>;
  components: {
    schemas: Record<string, Json>;
    securitySchemes: Record<string, Json>;
    responses: Record<string, Json>;
  };
  tags: Json[];
}

const EVERYONE: readonly IdentityKind[] = ['guest', 'user', 'admin'];

/** A registry action as the document describes it: at `/v1/{service}/{action}`, of its service. */
export function describeAction(
  action: AnyAction,
  defaultIdentities: readonly IdentityKind[],
): DescribedEndpoint {
  return {
    ...describeRoute({ ...action, path: `/v1/${action.service}/${action.action}` }, action.service),
    identities: action.identities ?? defaultIdentities,
    ...(action.summary ? { summary: action.summary } : {}),
    ...(action.dialect ? { dialect: action.dialect } : {}),
  };
}

/** A route as the document describes it; `identities` only where its app has them. */
export function describeRoute(
  route: AnyPathEndpoint,
  tag: string,
  identities?: readonly IdentityKind[],
): DescribedEndpoint {
  return {
    method: route.method,
    path: route.path,
    tag,
    input: route.input,
    status: route.status ?? 200,
    ...(route.identities || identities ? { identities: route.identities ?? identities } : {}),
    ...(route.params ? { params: route.params } : {}),
    ...(route.output ? { output: route.output } : {}),
    ...(route.bodyLimitBytes ? { bodyLimitBytes: route.bodyLimitBytes } : {}),
    ...(route.produces ? { produces: route.produces } : {}),
    ...(route.consumes ? { consumes: route.consumes } : {}),
    ...(route.errors ? { errors: route.errors } : {}),
  };
}

/** The OpenAPI 3.1 document of `endpoints`. */
export function openApiDocument(
  endpoints: readonly DescribedEndpoint[],
  options: DocumentOptions,
): OpenApiDocument {
  const schemas = new ComponentSchemas();
  const errorRef = schemas.add('Error', ApiErrorBody, 'output');
  const securitySchemes: Record<string, Json> = {
    bearer: { type: 'http', scheme: 'bearer', description: options.bearer },
  };
  const dialectErrors = new Map<string, Json>();
  const paths: OpenApiDocument['paths'] = {};

  for (const endpoint of endpoints) {
    const { dialect } = endpoint;
    let errorSchema = errorRef;
    if (dialect) {
      if (dialect.credentialHeader) {
        securitySchemes[dialect.credentialHeader] = {
          type: 'apiKey',
          in: 'header',
          name: dialect.credentialHeader,
          description: `${options.bearer}, as ${dialect.name}'s clients send it (when Authorization is absent)`,
        };
      }
      if (dialect.errorSchema) {
        const name = `${capitalized(dialect.name)}Error`;
        if (!dialectErrors.has(name))
          dialectErrors.set(name, schemas.add(name, dialect.errorSchema, 'output'));
        errorSchema = dialectErrors.get(name)!;
      }
    }
    const path = openApiPath(endpoint.path);
    paths[path] ??= {};
    paths[path][endpoint.method.toLowerCase()] = operation(endpoint, options, schemas, errorSchema);
  }

  const tags = [...new Set(endpoints.map((e) => e.tag))].map((name) => ({ name }));
  return {
    openapi: '3.1.0',
    info: { title: options.title, version: options.version, description: options.description },
    paths,
    components: { schemas: schemas.all(), securitySchemes, responses: {} },
    tags,
  };
}

function operation(
  endpoint: DescribedEndpoint,
  options: DocumentOptions,
  schemas: ComponentSchemas,
  errorSchema: Json,
): Json {
  const id = operationId(endpoint);
  const input = schemas.inline(endpoint.input, 'input', `${id}.input`);
  const params = endpoint.params ? schemas.inline(endpoint.params, 'input', `${id}.params`) : undefined;
  const parameters: Json[] = [
    ...pathParameters(endpoint.path, params),
    ...(endpoint.method === 'POST' ? [] : queryParameters(input)),
  ];
  const codes = errorCodes(endpoint, input, options);
  const op: Json = {
    operationId: id,
    tags: [endpoint.tag],
    ...(endpoint.summary ? { summary: endpoint.summary } : {}),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(endpoint.method === 'POST' ? { requestBody: requestBody(input, endpoint.consumes) } : {}),
    responses: {
      [String(endpoint.status)]: success(endpoint, schemas, id),
      ...errorResponses(codes, errorSchema),
    },
    security: security(endpoint, options),
  };
  if (endpoint.identities) op['x-identities'] = whoMayCall(endpoint.identities);
  op['x-error-codes'] = codes;
  return op;
}

/** `/v1/ai/responses/:id` → `/v1/ai/responses/{id}` (and a rest of the path, `*id`, the same). */
export function openApiPath(path: string): string {
  return path.replace(/[:*]([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');
}

/** `POST /v1/studios/tokens/apply` → `post_v1_studios_tokens_apply`: unique per method and path. */
function operationId({ method, path }: DescribedEndpoint): string {
  const words = path.split(/[^A-Za-z0-9]+/).filter(Boolean);
  return [method.toLowerCase(), ...words].join('_');
}

const whoMayCall = (identities: readonly IdentityKind[]) => (identities.length === 0 ? EVERYONE : identities);

function security(endpoint: DescribedEndpoint, options: DocumentOptions): readonly Json[] {
  const decided = options.securityOf?.(endpoint);
  if (decided || !endpoint.identities) return decided ?? [];
  const header = endpoint.dialect?.credentialHeader;
  const credentials: Json[] = [{ bearer: [] }, ...(header ? [{ [header]: [] }] : [])];
  // An empty requirement: the endpoint may be called without any credential.
  return whoMayCall(endpoint.identities).includes('guest') ? [{}, ...credentials] : credentials;
}

function pathParameters(path: string, params: Json | undefined): Json[] {
  const properties = (params?.properties ?? {}) as Record<string, Json>;
  return [...path.matchAll(/[:*]([A-Za-z_][A-Za-z0-9_]*)/g)].map(([, name]) => ({
    name,
    in: 'path',
    required: true,
    schema: properties[name!] ?? { type: 'string' },
  }));
}

function queryParameters(input: Json): Json[] {
  const properties = (input.properties ?? {}) as Record<string, Json>;
  const required = new Set((input.required ?? []) as string[]);
  return Object.entries(properties).map(([name, schema]) => ({
    name,
    in: 'query',
    required: required.has(name),
    schema,
    ...(typeof schema.description === 'string' ? { description: schema.description } : {}),
  }));
}

function requestBody(input: Json, consumes = 'application/json'): Json {
  const required = Array.isArray(input.required) && input.required.length > 0;
  return { required, content: { [consumes]: { schema: input } } };
}

function success(endpoint: DescribedEndpoint, schemas: ComponentSchemas, id: string): Json {
  const json = endpoint.output ? schemas.inline(endpoint.output, 'output', `${id}.output`) : {};
  const types = endpoint.produces ?? ['application/json'];
  const content = Object.fromEntries(
    types.map((type) => [type, { schema: type === 'application/json' ? json : { type: 'string' } }]),
  );
  return { description: endpoint.status === 202 ? 'Accepted' : 'Success', content };
}

function errorResponses(codes: readonly ErrorCode[], schema: Json): Record<string, Json> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const status = ERROR_STATUS[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return Object.fromEntries(
    [...byStatus]
      .sort(([a], [b]) => a - b)
      .map(([status, inStatus]) => [
        String(status),
        {
          description: inStatus.map((code) => `\`${code}\``).join(', '),
          content: { 'application/json': { schema } },
        },
      ]),
  );
}

/**
 * The error codes an endpoint can answer, from what it is: its app's common ones; a credential it
 * needs (401) and identities it refuses (403); a body to read; input of any kind (400); a studio
 * named in the input (a user's must be their own); a path param that names something; a command that
 * may break a rule of its domain; a model to call, governed by budgets, rate limits and model access.
 */
export function errorCodes(endpoint: DescribedEndpoint, input: Json, options: DocumentOptions): ErrorCode[] {
  const codes = new Set<ErrorCode>([...options.commonErrors(endpoint), ...(endpoint.errors ?? [])]);
  const who = endpoint.identities ? whoMayCall(endpoint.identities) : undefined;
  if (who && !who.includes('guest')) codes.add('unauthenticated');
  if (who && (!who.includes('user') || !who.includes('admin'))) codes.add('forbidden');
  // Handlers check more than a schema says (a cursor they gave out, a state they issued).
  if (endpoint.input !== noInput) codes.add('validation_failed');
  const properties = Object.keys((input.properties ?? {}) as Json);
  if (endpoint.method === 'POST') {
    for (const code of [
      'invalid_json',
      'validation_failed',
      'payload_too_large',
      'unsupported_media_type',
    ] as const)
      codes.add(code);
    if ((endpoint.bodyLimitBytes ?? 0) > SMALL_BODY_BYTES) codes.add('overloaded');
  }
  const users = who?.includes('user') ?? false;
  if (users && properties.includes('studio_id')) codes.add('studio_mismatch');
  if (endpoint.params) {
    codes.add('validation_failed');
    codes.add('not_found');
  }
  if (users && properties.includes('model')) {
    for (const code of GOVERNED_GENERATION) codes.add(code);
  }
  codes.add('internal_error');
  return [...codes].sort((a, b) => ERROR_STATUS[a] - ERROR_STATUS[b] || a.localeCompare(b));
}

/** What calling a model for a user can run into: its budget, rate limits, model access, the upstream. */
const GOVERNED_GENERATION: readonly ErrorCode[] = [
  'budget_exceeded',
  'model_not_allowed',
  'model_not_found',
  'rate_limited',
  'upstream_error',
  'upstream_timeout',
];

const capitalized = (word: string) => word.charAt(0).toUpperCase() + word.slice(1);

/**
 * The document's schemas: each endpoint's inlined, the shared ones (the error envelope) and the
 * definitions zod hoists (`$defs`, for recursive shapes) kept under `components.schemas`, since a
 * `#/$defs/…` reference inside an OpenAPI document would resolve against the document's root.
 */
class ComponentSchemas {
  #schemas: Record<string, Json> = {};

  /** A shared schema under `name`; returns its reference. */
  add(name: string, schema: z.ZodType, io: 'input' | 'output'): Json {
    this.#schemas[name] = this.inline(schema, io, name);
    return { $ref: `#/components/schemas/${name}` };
  }

  /** The JSON Schema of `schema`, its `$defs` moved to the components under `prefix`. */
  inline(schema: z.ZodType, io: 'input' | 'output', prefix: string): Json {
    const {
      $schema: _dialect,
      $defs,
      ...rest
    } = z.toJSONSchema(schema, {
      io,
      unrepresentable: 'any',
      target: 'draft-2020-12',
    }) as Json & { $defs?: Record<string, Json> };
    const rename = (name: string) => `${prefix}.${name}`.replace(/[^A-Za-z0-9._-]/g, '_');
    const rootRef = `#/components/schemas/${rename('root')}`;
    let selfReferring = false;
    const rewrite = (ref: string) => {
      if (ref === '#') {
        selfReferring = true;
        return rootRef;
      }
      return ref.startsWith('#/$defs/')
        ? `#/components/schemas/${rename(ref.slice('#/$defs/'.length))}`
        : ref;
    };
    for (const [name, definition] of Object.entries($defs ?? {}))
      this.#schemas[rename(name)] = rewriteRefs(definition, rewrite) as Json;
    const body = rewriteRefs(rest, rewrite) as Json;
    if (!selfReferring) return body;
    // A schema that refers to itself as a whole (`#`) is kept whole among the components.
    this.#schemas[rename('root')] = body;
    return { $ref: rootRef };
  }

  all(): Record<string, Json> {
    return this.#schemas;
  }
}

function rewriteRefs(value: unknown, rewrite: (ref: string) => string): unknown {
  if (Array.isArray(value)) return value.map((inner) => rewriteRefs(inner, rewrite));
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, inner]) =>
      key === '$ref' && typeof inner === 'string'
        ? [key, rewrite(inner)]
        : [key, rewriteRefs(inner, rewrite)],
    ),
  );
}
