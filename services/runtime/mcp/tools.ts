import { ApiError, messageOf } from '../../../shared/errors.ts';
import { type PluginManager, parametersOf, toolName } from '../plugins/manager.ts';

/** A plugin action as an MCP tool (the `Tool` of MCP's `tools/list`). */
export interface ActionTool {
  name: string;
  description: string;
  inputSchema: { type: 'object'; [key: string]: unknown };
}

/** An MCP `tools/call` result: the action's answer, or its error with `isError`. */
export interface ActionToolResult {
  [key: string]: unknown;
  content: { type: 'text'; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** How long an action may take before its call is answered as failed (the action itself is not stopped). */
export const ACTION_DEADLINE_MS = 60_000;

/** Every action of a running plugin, named `<plugin>__<action>`, with its input's JSON Schema. */
export function actionTools(plugins: PluginManager): ActionTool[] {
  return plugins.runningActions().map(({ plugin, action }) => ({
    name: toolName(plugin, action.name),
    description: action.description,
    inputSchema: objectSchema(parametersOf(action)),
  }));
}

/** MCP wants an object schema for a tool's input; an action whose input says otherwise takes any object. */
function objectSchema(schema: unknown): ActionTool['inputSchema'] {
  const isObject =
    typeof schema === 'object' && schema !== null && (schema as { type?: unknown }).type === 'object';
  return isObject ? (schema as ActionTool['inputSchema']) : { type: 'object' };
}

/**
 * Runs the action a tool stands for as `/api/plugins/action` does (the manager: parse, guards,
 * handler) and answers what happened, failures included, as a tool result: an unknown tool, a
 * payload its schema refuses, a guard's denial, the action's own error, or no answer within
 * `deadlineMs` (or before `signal`, the client's cancellation).
 */
export async function callActionTool(
  plugins: PluginManager,
  name: string,
  args: Record<string, unknown>,
  options: { signal: AbortSignal; deadlineMs?: number },
): Promise<ActionToolResult> {
  try {
    const target = plugins.resolveTool(name);
    if (!target) throw new ApiError('not_found', `no tool named ${name} (its plugin may not be running)`);
    const result = await settledWithin(
      plugins.run({ ...target, input: args, source: 'api' }),
      options.deadlineMs ?? ACTION_DEADLINE_MS,
      options.signal,
      `${target.plugin}.${target.action}`,
    );
    return answerOf(result);
  } catch (error) {
    return { content: [{ type: 'text', text: errorText(error) }], isError: true };
  }
}

function answerOf(result: unknown): ActionToolResult {
  const text = typeof result === 'string' ? result : (JSON.stringify(result) ?? 'null');
  const structured =
    typeof result === 'object' && result !== null && !Array.isArray(result)
      ? { structuredContent: result as Record<string, unknown> }
      : {};
  return { content: [{ type: 'text', text }], ...structured };
}

/** `<code>: <message>`, then what was wrong with each field of a refused payload. */
function errorText(error: unknown): string {
  if (!(error instanceof ApiError)) return `internal_error: ${messageOf(error)}`;
  const details = Array.isArray(error.options.details)
    ? (error.options.details as { path?: unknown; message?: unknown }[]).map(
        (d) => `\n- ${String(d.path ?? '') || '(payload)'}: ${String(d.message ?? '')}`,
      )
    : [];
  return `${error.code}: ${error.message}${details.join('')}`;
}

/** `work`'s outcome, or a failure once `ms` pass or `signal` aborts, whichever comes first. */
async function settledWithin<T>(work: Promise<T>, ms: number, signal: AbortSignal, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const cut = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () => reject(new ApiError('upstream_timeout', `${what} did not answer within ${ms / 1000} s`)),
      ms,
    );
    onAbort = () => reject(new ApiError('unavailable', `${what}: the call was cancelled`));
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  // The action may still fail after it was cut off: nobody waits for it then.
  work.catch(() => undefined);
  try {
    return await Promise.race([work, cut]);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal.removeEventListener('abort', onAbort);
  }
}
