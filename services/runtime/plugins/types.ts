import type { z } from 'zod';
import type { EventMetadata, StoredEvent } from '../../../shared/event-store/types.ts';
import type { Logger } from '../../../shared/logger.ts';

export type PluginState = 'stopped' | 'starting' | 'running' | 'failed';

export interface Availability {
  enabled: boolean;
  available: boolean;
  reasons: string[];
}

/** Who runs an action: the agent (a tool call in a turn) or a person through the API. */
export interface ActionCall {
  plugin: string;
  action: string;
  input: unknown;
  source: 'agent' | 'api' | 'command';
  sessionId?: string;
}

export interface PluginContext {
  /** The runtime's workspace: plugins that touch files stay inside it. */
  workspace: string;
  env: (key: string) => string | undefined;
  logger: Logger;
  signal: AbortSignal;
  /** Metadata for events a plugin appends (actor `runtime`). */
  metadata: EventMetadata;
}

export interface PluginAction<Input = unknown> {
  name: string;
  description: string;
  /** Parses the payload; its JSON Schema is what the model sees as the tool's parameters. */
  input: z.ZodType<Input>;
  supportsCommand?: boolean;
  supportsApi?: boolean;
  /** Where the action is also mounted when `supportsApi`: e.g. `POST` `/api/files/read`. */
  apiMethod?: 'GET' | 'POST';
  apiPath?: string;
  /** The parameters' JSON Schema as the model sees it, when `input` cannot say it (e.g. an MCP tool's own). */
  jsonSchema?: unknown;
  /** Offered to the model as a tool in agent turns (default true). */
  exposeToAgent?: boolean;
  handler(input: Input, ctx: PluginContext): Promise<unknown>;
}

/** Decides before an action runs; the first guard that denies wins. */
export interface Guard {
  name: string;
  check(call: ActionCall): { allow: true } | { allow: false; reason: string };
}

/** An ordered transform of inbound messages (e.g. chat messages) before they become a turn. */
export interface Pipeline {
  name: string;
  transform(message: InboundMessage): InboundMessage | Promise<InboundMessage>;
}

export interface InboundMessage {
  text: string;
  sender?: string;
  [key: string]: unknown;
}

/** A reaction to session events (e.g. delivering a reply to a webhook). */
export interface Effect {
  name: string;
  on: readonly string[];
  run(event: StoredEvent, ctx: PluginContext): Promise<void>;
}

/** Resolves references in instructions, such as `@file:notes.md`. */
export interface Resolver {
  name: string;
  pattern: RegExp;
  resolve(match: RegExpExecArray, ctx: PluginContext): Promise<string | undefined>;
}

/**
 * A plugin: a small object. The manager owns its lifecycle (`start`/`stop`) and availability;
 * `requires` names env keys and binaries it cannot work without.
 */
export interface Plugin {
  name: string;
  version: string;
  description: string;
  requires: { env: readonly string[]; bins: readonly string[] };
  // biome-ignore lint/suspicious/noExplicitAny: actions of a plugin have different inputs; each is typed where defined.
  actions: readonly PluginAction<any>[];
  guards?: readonly Guard[];
  pipelines?: readonly Pipeline[];
  effects?: readonly Effect[];
  resolves?: readonly Resolver[];
  /** A contribution to the agent's system prompt while the plugin runs. */
  system?: (ctx: PluginContext) => string | undefined;
  /** Extra checks beyond `requires` (e.g. a config file that must exist). */
  availability?: (ctx: PluginContext) => Promise<Partial<Availability>> | Partial<Availability>;
  start?(ctx: PluginContext): Promise<void>;
  stop?(): Promise<void>;
  /** What the plugin wants to say about itself in `status`. */
  status?(): Record<string, unknown>;
}

export function definePlugin(plugin: Plugin): Plugin {
  return plugin;
}

export function defineAction<Input>(action: PluginAction<Input>): PluginAction<Input> {
  return action;
}
