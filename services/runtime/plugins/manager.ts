import { z } from 'zod';
import { ApiError, messageOf } from '../../../shared/errors.ts';
import type { StoredEvent } from '../../../shared/event-store/types.ts';
import { findExecutable } from '../../../shared/executables.ts';
import type { Logger } from '../../../shared/logger.ts';
import type { AgentSystem } from '../../sessions/routes.ts';
import type { ActionCall, Availability, Plugin, PluginAction, PluginContext, PluginState } from './types.ts';

interface Managed {
  plugin: Plugin;
  state: PluginState;
  error: string | null;
  controller: AbortController;
  startedAt: string | null;
}

export interface PluginManagerOptions {
  workspace: string;
  env: (key: string) => string | undefined;
  logger: Logger;
  /** Plugins that must not run here, by name. */
  disabled?: readonly string[];
}

/** An agent tool name for a plugin action: `files__read` (OpenAI allows `[A-Za-z0-9_-]`). */
export const toolName = (plugin: string, action: string) =>
  `${plugin}__${action}`.replace(/[^A-Za-z0-9_-]/g, '_');

export interface AgentTool {
  type: 'function';
  function: { name: string; description: string; parameters: unknown };
}

/**
 * Owns every plugin's lifecycle (`stopped → starting → running`, or `failed`) and availability,
 * and is the one way to run an action: parse, guards, then the handler. A plugin that throws is
 * marked failed; the runtime goes on.
 */
export class PluginManager {
  #plugins = new Map<string, Managed>();
  readonly #listeners = new Set<() => void>();

  constructor(private readonly options: PluginManagerOptions) {}

  register(plugin: Plugin): this {
    if (this.#plugins.has(plugin.name)) throw new Error(`plugin ${plugin.name} is registered twice`);
    this.#plugins.set(plugin.name, {
      plugin,
      state: 'stopped',
      error: null,
      controller: new AbortController(),
      startedAt: null,
    });
    return this;
  }

  list(): Plugin[] {
    return [...this.#plugins.values()].map((m) => m.plugin);
  }

  /** Calls `listener` whenever a plugin starts, stops or fails (so which actions run may have changed); returns its removal. */
  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #changed(): void {
    for (const listener of this.#listeners) {
      try {
        listener();
      } catch (error) {
        this.options.logger.warn({ err: error }, 'a plugin change listener failed');
      }
    }
  }

  #get(name: string): Managed {
    const managed = this.#plugins.get(name);
    if (!managed) throw new ApiError('not_found', `no plugin named "${name}"`, { param: 'pluginName' });
    return managed;
  }

  context(managed: Managed): PluginContext {
    return {
      workspace: this.options.workspace,
      env: this.options.env,
      logger: this.options.logger.child({ plugin: managed.plugin.name }),
      signal: managed.controller.signal,
      metadata: { actor: 'runtime' },
    };
  }

  async availability(name: string): Promise<Availability> {
    const managed = this.#get(name);
    const { plugin } = managed;
    const enabled = !(this.options.disabled ?? []).includes(plugin.name);
    const reasons: string[] = [];
    if (!enabled) reasons.push('disabled by STUDIO_PLUGINS_DISABLED');
    for (const key of plugin.requires.env) if (!this.options.env(key)) reasons.push(`missing env ${key}`);
    for (const bin of plugin.requires.bins) if (!findExecutable(bin)) reasons.push(`missing binary ${bin}`);
    if (managed.state === 'failed') reasons.push(`failed: ${managed.error ?? 'unknown error'}`);
    let extra: Partial<Availability> = {};
    try {
      extra = (await plugin.availability?.(this.context(managed))) ?? {};
    } catch (error) {
      reasons.push(`availability check failed: ${messageOf(error)}`);
    }
    reasons.push(...(extra.reasons ?? []));
    const available = enabled && reasons.length === 0 && extra.available !== false;
    return { enabled: enabled && extra.enabled !== false, available, reasons };
  }

  async start(name: string): Promise<PluginStatus> {
    const managed = this.#get(name);
    if (managed.state === 'running' || managed.state === 'starting') return this.status(name);
    const availability = await this.availability(name);
    const blocking = availability.reasons.filter((r) => !r.startsWith('failed:'));
    if (!availability.enabled || blocking.length > 0) {
      throw new ApiError('conflict', `plugin ${name} cannot start: ${blocking.join('; ')}`);
    }
    managed.controller = new AbortController();
    managed.state = 'starting';
    managed.error = null;
    try {
      await managed.plugin.start?.(this.context(managed));
      managed.state = 'running';
      managed.startedAt = new Date().toISOString();
      this.#changed();
    } catch (error) {
      this.#fail(managed, error);
    }
    return this.status(name);
  }

  async stop(name: string): Promise<PluginStatus> {
    const managed = this.#get(name);
    managed.controller.abort();
    try {
      await managed.plugin.stop?.();
    } catch (error) {
      this.options.logger.warn({ err: error, plugin: name }, 'plugin did not stop cleanly');
    }
    const was = managed.state;
    managed.state = 'stopped';
    managed.startedAt = null;
    if (was !== 'stopped') this.#changed();
    return this.status(name);
  }

  async restart(name: string): Promise<PluginStatus> {
    await this.stop(name);
    return this.start(name);
  }

  async status(name: string): Promise<PluginStatus> {
    const managed = this.#get(name);
    return {
      name,
      version: managed.plugin.version,
      state: managed.state,
      error: managed.error,
      started_at: managed.startedAt,
      availability: await this.availability(name),
      details: managed.state === 'running' ? (managed.plugin.status?.() ?? {}) : {},
    };
  }

  /** Starts every plugin that can run; the others stay stopped with their reasons. */
  async startAll(): Promise<void> {
    for (const { plugin } of this.#plugins.values()) {
      const availability = await this.availability(plugin.name);
      if (availability.available) await this.start(plugin.name);
    }
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.#plugins.keys()].map((name) => this.stop(name)));
  }

  /** Marks a plugin failed from outside (e.g. its child process died). */
  markFailed(name: string, error: unknown): void {
    const managed = this.#plugins.get(name);
    if (managed) this.#fail(managed, error);
  }

  #fail(managed: Managed, error: unknown): void {
    managed.state = 'failed';
    managed.error = messageOf(error);
    managed.controller.abort();
    this.options.logger.error({ err: error, plugin: managed.plugin.name }, 'plugin failed');
    this.#changed();
  }

  action(pluginName: string, actionName: string): PluginAction {
    const action = this.#get(pluginName).plugin.actions.find((a) => a.name === actionName);
    if (!action)
      throw new ApiError('not_found', `plugin ${pluginName} has no action "${actionName}"`, {
        param: 'actionName',
      });
    return action;
  }

  /** Runs an action: 404 unknown, 409 not running, 400 invalid payload (zod issues), 403 denied by a guard. */
  async run(call: ActionCall): Promise<unknown> {
    const managed = this.#get(call.plugin);
    const action = this.action(call.plugin, call.action);
    if (managed.state !== 'running') {
      throw new ApiError('conflict', `plugin ${call.plugin} is ${managed.state}; start it first`);
    }
    const parsed = action.input.safeParse(call.input ?? {});
    if (!parsed.success) {
      throw new ApiError('validation_failed', `invalid payload for ${call.plugin}.${call.action}`, {
        param: 'payload',
        details: parsed.error.issues.map((i) => ({
          path: i.path.map(String).join('.'),
          code: i.code,
          message: i.message,
        })),
      });
    }
    for (const { plugin } of this.#plugins.values()) {
      for (const guard of plugin.guards ?? []) {
        const verdict = guard.check({ ...call, input: parsed.data });
        if (!verdict.allow)
          throw new ApiError('forbidden', `denied by ${plugin.name}.${guard.name}: ${verdict.reason}`);
      }
    }
    try {
      return await action.handler(parsed.data, this.context(managed));
    } catch (error) {
      if (error instanceof ApiError) throw error;
      // The plugin (or the server behind it, for MCP) failed this call: a bad gateway, not our crash.
      throw new ApiError('upstream_error', `${call.plugin}.${call.action} failed: ${messageOf(error)}`);
    }
  }

  /** The actions of running plugins, as tools for the model. */
  /** What an agent turn is given by the plugins: their system prompt, which are running, their tools. */
  async agentSystem(): Promise<AgentSystem> {
    const statuses = await Promise.all(this.list().map((p) => this.status(p.name)));
    return {
      pluginSystem: this.systemPrompt(),
      plugins: statuses.filter((p) => p.state === 'running').map((p) => p.name),
      tools: this.tools().map((t) => ({ name: t.function.name, description: t.function.description })),
    };
  }

  tools(): AgentTool[] {
    return this.#running().flatMap((plugin) =>
      plugin.actions
        .filter((a) => a.exposeToAgent !== false)
        .map((a) => ({
          type: 'function' as const,
          function: {
            name: toolName(plugin.name, a.name),
            description: a.description,
            parameters: parametersOf(a),
          },
        })),
    );
  }

  /** Every action of the running plugins, each with its plugin's name (what `/api/plugins/action` can run now). */
  runningActions(): { plugin: string; action: PluginAction }[] {
    return this.#running().flatMap((plugin) =>
      plugin.actions.map((action) => ({ plugin: plugin.name, action })),
    );
  }

  /** Which plugin action a tool name stands for. */
  resolveTool(name: string): { plugin: string; action: string } | undefined {
    for (const plugin of this.#running()) {
      for (const a of plugin.actions)
        if (toolName(plugin.name, a.name) === name) return { plugin: plugin.name, action: a.name };
    }
    return undefined;
  }

  systemPrompt(): string {
    return this.#running()
      .map((plugin) => plugin.system?.(this.context(this.#get(plugin.name))))
      .filter((s): s is string => Boolean(s))
      .join('\n\n');
  }

  /** Runs the effects of running plugins that react to this event; an effect that fails is logged. */
  async dispatch(event: StoredEvent): Promise<void> {
    for (const plugin of this.#running()) {
      for (const effect of plugin.effects ?? []) {
        if (!effect.on.includes(event.type)) continue;
        try {
          await effect.run(event, this.context(this.#get(plugin.name)));
        } catch (error) {
          this.options.logger.warn({ err: error, plugin: plugin.name, effect: effect.name }, 'effect failed');
        }
      }
    }
  }

  #running(): Plugin[] {
    return [...this.#plugins.values()].filter((m) => m.state === 'running').map((m) => m.plugin);
  }
}

export interface PluginStatus {
  name: string;
  version: string;
  state: PluginState;
  error: string | null;
  started_at: string | null;
  availability: Availability;
  details: Record<string, unknown>;
}

/** An action's parameters as JSON Schema: what the model sees as the tool's, and the console's form. */
export function parametersOf(action: PluginAction): unknown {
  return action.jsonSchema ?? jsonSchemaOf(action.input);
}

function jsonSchemaOf(schema: z.ZodType): unknown {
  try {
    const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, {
      io: 'input',
      unrepresentable: 'any',
    }) as Record<string, unknown>;
    return rest;
  } catch {
    return { type: 'object' };
  }
}
