import type { Request, Response } from 'express';
import type { z } from 'zod';
import type { EventMetadata } from '../event-store/types.ts';
import type { Identity, IdentityKind } from './identity.ts';

export type HttpMethod = 'GET' | 'POST';

export interface ActionContext {
  identity: Identity;
  requestId: string;
  /** Metadata for the events this request appends: actor, request and correlation ids. */
  metadata: EventMetadata;
  /** Aborted when the client goes away. */
  signal: AbortSignal;
  req: Request;
  res: Response;
}

/** What a handler returns: a JSON body (status 200 unless the action says otherwise), or nothing when it wrote the response itself. */
export type ActionResult = unknown;

export interface Action<Input = unknown> {
  service: string;
  /** May contain slashes: `tokens/apply`, `chat/completions`. */
  action: string;
  method: HttpMethod;
  /** Who may call it. Default `['user']`; `[]` lets everyone in, guests included. */
  identities?: readonly IdentityKind[];
  summary?: string;
  /** Parses the body (POST) or the query string (GET). */
  input: z.ZodType<Input>;
  /** Largest accepted JSON body. Default 1 MiB. */
  bodyLimitBytes?: number;
  /** Status of a successful JSON answer. Default 200. */
  status?: number;
  handler(input: Input, ctx: ActionContext): Promise<ActionResult> | ActionResult;
}

export function defineAction<Input>(action: Action<Input>): Action<Input> {
  return action;
}

// biome-ignore lint/suspicious/noExplicitAny: a list of actions with different inputs; each is typed where defined.
export type AnyAction = Action<any>;

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
