import { randomBytes } from 'node:crypto';
import { ApiError } from '../../../shared/errors.ts';
import type { LiveBus } from '../../sessions/live.ts';
import type { SessionService } from '../../sessions/service.ts';
import type { MessageUsage, Part } from '../../sessions/session.ts';
import type { TurnRunner } from '../../sessions/types.ts';
import type { GatewayClient } from '../gateway-client.ts';
import type { PluginManager } from '../plugins/manager.ts';
import { stringify, toChatMessages } from './history.ts';
import { TurnPricer } from './turn-cost.ts';

const id = (prefix: string) => `${prefix}_${randomBytes(9).toString('base64url')}`;

export interface AgentOptions {
  gateway: GatewayClient;
  plugins: PluginManager;
  sessions: () => SessionService;
  live: LiveBus;
  /** Model calls per turn before it is failed (a loop of tool calls must end). */
  maxSteps?: number;
  /** What a model call cost; by default the gateway's prices, read through `gateway`. */
  pricer?: TurnPricer;
}

interface PendingCall {
  id: string;
  name: string;
  arguments: string;
}

/**
 * One agent turn: record the user's message, then call the model with the running plugins' actions
 * as tools; run the tool calls it asks for (through the manager: guards first) and feed their
 * results back, until it answers without tools or the step budget runs out.
 */
export function agentTurnRunner(options: AgentOptions): TurnRunner {
  const maxSteps = options.maxSteps ?? 8;
  const pricer = options.pricer ?? new TurnPricer(options.gateway);
  return async (turn, { signal, record }) => {
    const sessions = options.sessions();
    const userMessageId = id('msg');
    await record({ type: 'CreateMessage', messageId: userMessageId, turnId: turn.turnId, role: 'user' });
    await record({
      type: 'UpdatePart',
      messageId: userMessageId,
      part: { id: id('prt'), type: 'text', text: turn.text },
    });
    for (const file of turn.attachments) {
      await record({
        type: 'UpdatePart',
        messageId: userMessageId,
        part: { id: id('prt'), type: 'file', name: file.name, path: file.path, mime_type: file.mime_type },
      });
    }
    await record({ type: 'CompleteMessage', messageId: userMessageId, finishReason: null, usage: null });

    for (let step = 1; step <= maxSteps; step++) {
      signal.throwIfAborted();
      const view = sessions.require(turn.sessionId);
      const system = [view.session.system, options.plugins.systemPrompt()].filter(Boolean).join('\n\n');
      const messages = [
        ...(system ? [{ role: 'system' as const, content: system }] : []),
        ...toChatMessages(view.messages),
      ];

      const messageId = id('msg');
      await record({ type: 'CreateMessage', messageId, turnId: turn.turnId, role: 'assistant' });
      const textPartId = id('prt');
      let text = '';
      let finishReason: string | null = null;
      let usage: MessageUsage | null = null;
      let answeredBy = '';
      const calls: PendingCall[] = [];
      for await (const chunk of options.gateway.streamChat({
        model: view.session.model,
        messages,
        tools: options.plugins.tools(),
        signal,
      })) {
        answeredBy ||= chunk.model ?? '';
        if (chunk.usage)
          usage = { inputTokens: chunk.usage.prompt_tokens, outputTokens: chunk.usage.completion_tokens };
        for (const choice of chunk.choices) {
          finishReason = choice.finish_reason ?? finishReason;
          if (choice.delta.content) {
            text += choice.delta.content;
            options.live.publish({
              type: 'part.delta',
              sessionId: turn.sessionId,
              messageId,
              partId: textPartId,
              delta: choice.delta.content,
            });
          }
          for (const delta of choice.delta.tool_calls ?? []) {
            const call = calls[delta.index] ?? { id: '', name: '', arguments: '' };
            calls[delta.index] = call;
            call.id ||= delta.id ?? '';
            call.name += delta.function?.name ?? '';
            call.arguments += delta.function?.arguments ?? '';
          }
        }
      }
      // The text is stored first: the page shows it in place of the deltas while the cost is read.
      if (text) await record({ type: 'UpdatePart', messageId, part: { id: textPartId, type: 'text', text } });
      if (usage) usage = await priced(pricer, [answeredBy, view.session.model], usage);
      if (calls.length === 0) {
        await record({ type: 'CompleteMessage', messageId, finishReason, usage });
        return;
      }

      const parts = calls.map(
        (call): Extract<Part, { type: 'tool' }> => ({
          id: id('prt'),
          type: 'tool',
          call_id: call.id || id('call'),
          tool: call.name,
          state: 'pending',
          input: parseArguments(call.arguments),
        }),
      );
      for (const part of parts) await record({ type: 'UpdatePart', messageId, part });
      for (const part of parts) {
        signal.throwIfAborted();
        await record({ type: 'UpdatePart', messageId, part: { ...part, state: 'running' } });
        const target = options.plugins.resolveTool(part.tool);
        let finished: Part;
        try {
          if (!target) throw new ApiError('not_found', `no tool named ${part.tool}`);
          const output = await options.plugins.run({
            ...target,
            input: part.input,
            source: 'agent',
            sessionId: turn.sessionId,
          });
          finished = { ...part, state: 'completed', output: output ?? null };
        } catch (error) {
          if (signal.aborted) throw error;
          finished = {
            ...part,
            state: 'error',
            error: error instanceof Error ? error.message : stringify(error),
          };
        }
        await record({ type: 'UpdatePart', messageId, part: finished });
      }
      await record({
        type: 'CompleteMessage',
        messageId,
        finishReason: finishReason ?? 'tool_calls',
        usage,
      });
    }
    throw new Error(`the model still asked for tools after ${maxSteps} steps`);
  };
}

/**
 * The usage with its cost. When the gateway's prices could not be read the cost is left out rather
 * than set to 0, which would say the call was free; the turn goes on either way.
 */
async function priced(pricer: TurnPricer, models: string[], usage: MessageUsage): Promise<MessageUsage> {
  const costUsd = await pricer.costUsd(
    models.filter((model) => model !== ''),
    usage,
  );
  return costUsd === undefined ? usage : { ...usage, costUsd };
}

function parseArguments(json: string): unknown {
  if (!json.trim()) return {};
  try {
    return JSON.parse(json);
  } catch {
    return { _unparsed: json };
  }
}
