import { z } from 'zod';
import type { ErrorCode } from '../errors.ts';
import type { EventMetadata } from '../event-store/types.ts';
import type { WireDialect } from './dialect.ts';
import type { Identity, IdentityKind } from './identity.ts';
import type { ServedRequest, ServedResponse } from './request.ts';

export type HttpMethod = 'GET' | 'POST' | 'DELETE';

export interface ActionContext<Params = unknown> {
  identity: Identity;
  /** The path's `:params`, as the endpoint's `params` schema made them (`{}` when it has none). */
  params: Params;
  requestId: string;
  /** Metadata for the events this request appends: actor, request and correlation ids. */
  metadata: EventMetadata;
  /** Aborted when the client goes away. */
  signal: AbortSignal;
  /** Node's request and response (`ServedRequest`): express's methods are not there. */
  req: ServedRequest;
  res: ServedResponse;
}

/** A JSON answer whose status depends on what happened (e.g. 202 when a prompt was only queued). */
export class StatusAnswer {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {}
}

export const withStatus = (status: number, body: unknown) => new StatusAnswer(status, body);

/**
 * What a handler returns: a JSON body (status 200 unless the endpoint says otherwise), a
 * `withStatus(…)`, or nothing when it wrote the response itself.
 */
export type ActionResult = unknown;

/**
 * What `serve` needs of anything it serves: a registry action (`/v1/{service}/{action}`) or an
 * endpoint at a path of its own. ("Route" is kept for model routes, `services/ai/routing/`.)
 */
export interface Endpoint<Input = unknown, Params = unknown> {
  method: HttpMethod;
  /** Who may call it. Default: the app's (`['user']` on the gateway); `[]` lets everyone in, guests included. */
  identities?: readonly IdentityKind[];
  /** Parses the body (POST) or the query string (GET). */
  input: z.ZodType<Input>;
  /** Parses the path's `:params`, once the body is read and before `input` is parsed. */
  params?: z.ZodType<Params>;
  /** Largest accepted body. Default 1 MiB. */
  bodyLimitBytes?: number;
  /**
   * A POST's body: JSON (the default), or `multipart/form-data` (a file and its fields, as OpenAI's
   * clients send audio), read into an object of its fields: text as strings, files as `UploadedFile`.
   */
  consumes?: 'multipart/form-data';
  /** Status of a successful JSON answer. Default 200. */
  status?: number;
  /** The shape of a successful JSON answer, where one is declared: it describes the answer in the API's documents. */
  output?: z.ZodType;
  /** What a success answers when not (only) JSON: `text/event-stream`, `text/html`, `image/*`. Default JSON. */
  produces?: readonly string[];
  /** Errors the handler answers itself, beyond what its identities and input say (its own credential check). */
  errors?: readonly ErrorCode[];
  /**
   * Told of every error the endpoint answers, thrown by its handler or by the gates before it (who
   * may call, the body, the input), before the error is written: e.g. to put refusals on record.
   */
  failed?(error: unknown, req: ServedRequest, res: ServedResponse): void;
  handler(input: Input, ctx: ActionContext<Params>): Promise<ActionResult> | ActionResult;
}

export interface Action<Input = unknown, Params = unknown> extends Endpoint<Input, Params> {
  service: string;
  /**
   * May contain slashes: `tokens/apply`, `chat/completions`. A `:name` segment takes any one segment
   * of the path there (`responses/:id`), parsed by `params`; an exact name wins over such a pattern.
   */
  action: string;
  summary?: string;
  /** Another API's credential header and error shape, on this action only (registry actions). */
  dialect?: WireDialect;
}

/** An endpoint at its own path (`/api/sdk/sessions/:id`), outside the action registry. */
export interface PathEndpoint<Input = unknown, Params = unknown> extends Endpoint<Input, Params> {
  path: string;
}

export function defineAction<Input, Params = unknown>(action: Action<Input, Params>): Action<Input, Params> {
  return action;
}

export function defineEndpoint<Input, Params = unknown>(
  endpoint: PathEndpoint<Input, Params>,
): PathEndpoint<Input, Params> {
  return endpoint;
}

// biome-ignore lint/suspicious/noExplicitAny: a list of endpoints with different inputs; each is typed where defined.
export type AnyEndpoint = Endpoint<any, any>;
// biome-ignore lint/suspicious/noExplicitAny: a list of actions with different inputs; each is typed where defined.
export type AnyAction = Action<any, any>;
// biome-ignore lint/suspicious/noExplicitAny: a list of endpoints with different inputs; each is typed where defined.
export type AnyPathEndpoint = PathEndpoint<any, any>;

/** A file of a `multipart/form-data` body. */
export interface UploadedFile {
  filename: string;
  /** Its media type, as the client said it. */
  type: string;
  data: Buffer;
}

/** The input of an endpoint that reads none: any query is accepted and ignored. */
export const noInput = z.object({});

export interface EnvRequirement {
  key: string;
  description: string;
  required: boolean;
}

export interface ServiceDefinition {
  id: string;
  name: string;
  env: readonly EnvRequirement[];
  actions: readonly AnyAction[];
}

export function defineService(service: ServiceDefinition): ServiceDefinition {
  return service;
}
