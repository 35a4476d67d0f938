import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { channelKey, chatProjection } from '../../../../projections/chat.ts';
import { sessionsProjection } from '../../../../projections/sessions.ts';
import { commandHandler } from '../../../../shared/command-handler.ts';
import { AggregateCache } from '../../../../shared/decider.ts';
import { ApiError } from '../../../../shared/errors.ts';
import type { EventStore, StoredEvent } from '../../../../shared/event-store/types.ts';
import { KeyedLock } from '../../../../shared/keyed-lock.ts';
import type { ProjectionRunner } from '../../../../shared/projections/runner.ts';
import { newTurnId } from '../../../sessions/ids.ts';
import type { SessionService } from '../../../sessions/service.ts';
import {
  defineAction,
  definePlugin,
  type InboundMessage,
  type Pipeline,
  type PluginContext,
} from '../types.ts';
import { type ChatCommand, type ChatConversationState, chatDecider } from './conversation.ts';
import { chatStreamId } from './events.ts';
import { postToWebhook } from './webhook.ts';

export const CHAT_OUTBOUND_ENV = 'CHAT_OUTBOUND_WEBHOOK_URL';
const DELIVERY_TIMEOUT_MS = 10_000;

export interface ChatPluginDeps {
  events: EventStore;
  projections: ProjectionRunner;
  sessions: () => SessionService;
  /** The model of new conversations. */
  model: string;
}

export interface QueuedReceipt {
  conversationId: string;
  queued: true;
  queueItemId: string;
  queuePosition: number;
}

/** Collapses runs of whitespace and trims: platforms send messages padded in all sorts of ways. */
const normalize: Pipeline = {
  name: 'normalize',
  transform: (message) => ({ ...message, text: message.text.replace(/[ \t]+/g, ' ').trim() }),
};

/** What the chat plugin's commands are recorded as. */
const RUNTIME = { actor: 'runtime' };

/**
 * Conversations with opaque ids (the id is also the conversation's session id), one FIFO queue per
 * conversation (the session's turn queue), an inbound route for platform messages, and an effect
 * that delivers each reply to the outbound webhook.
 */
export function chatPlugin(deps: ChatPluginDeps) {
  const locks = new KeyedLock();
  const chat = () => deps.projections.state(chatProjection);

  const conversations = commandHandler(chatDecider, {
    events: deps.events,
    streamOf: (command: ChatCommand) => chatStreamId(command.conversationId),
    readModels: deps.projections,
    readYourWrites: 'best-effort',
    cache: new AggregateCache<ChatConversationState>(),
  });

  function openConversation(platform: string, channel: string): Promise<string> {
    const key = channelKey(platform, channel);
    return locks.run(`open:${key}`, async () => {
      const existing = chat().byChannel.get(key);
      if (existing) return existing;
      const conversationId = `conv_${randomBytes(12).toString('base64url')}`;
      await deps.sessions().create({
        sessionId: conversationId,
        kind: 'chat',
        title: `${platform} ${channel}`,
        model: deps.model,
        system: 'You are answering in a chat conversation. Keep replies short.',
        chatId: conversationId,
      });
      await conversations({ type: 'OpenConversation', conversationId, platform, channel }, RUNTIME);
      return conversationId;
    });
  }

  /**
   * The one way a message enters a conversation: its history is appended first, then its turn is
   * queued behind the conversation's earlier ones. Messages of one conversation are taken in order.
   */
  function receive(
    conversationId: string,
    message: { text: string; sender: string | null; source: 'platform' | 'dashboard' },
  ): Promise<QueuedReceipt> {
    if (!chat().conversations.has(conversationId))
      throw new ApiError('not_found', `no conversation ${conversationId}`);
    return locks.run(`receive:${conversationId}`, async () => {
      const turnId = newTurnId();
      const messageId = `cmsg_${randomBytes(9).toString('base64url')}`;
      await conversations(
        {
          type: 'ReceiveMessage',
          conversationId,
          messageId,
          sender: message.sender,
          text: message.text,
          source: message.source,
          turnId,
        },
        RUNTIME,
      );
      const queued = await deps
        .sessions()
        .enqueue(conversationId, { text: message.text, source: `chat:${message.source}`, turnId });
      return {
        conversationId,
        queued: true,
        queueItemId: queued.turnId,
        queuePosition: queued.queuePosition,
      };
    });
  }

  async function runPipelines(message: InboundMessage): Promise<InboundMessage> {
    let current = message;
    for (const pipeline of plugin.pipelines ?? []) current = await pipeline.transform(current);
    return current;
  }

  async function deliver(event: StoredEvent, ctx: PluginContext): Promise<void> {
    const conversationId = event.streamId.slice('session-'.length);
    const conversation = chat().conversations.get(conversationId);
    if (!conversation) return;
    const url = ctx.env(CHAT_OUTBOUND_ENV);
    if (!url) return;
    const { turnId } = event.data as { turnId: string };
    await deps.projections.waitFor(event.position);
    const view = deps.projections.state(sessionsProjection).get(conversationId);
    const reply = view?.messages
      .filter((m) => m.turn_id === turnId && m.role === 'assistant')
      .flatMap((m) => m.parts.filter((p) => p.type === 'text').map((p) => p.text))
      .join('\n');
    const outcome = await postToWebhook(
      url,
      {
        conversationId,
        platform: conversation.platform,
        channel: conversation.channel,
        turnId,
        text: reply ?? '',
      },
      DELIVERY_TIMEOUT_MS,
    );
    await conversations({ type: 'RecordReplyDelivery', conversationId, turnId, ...outcome }, RUNTIME);
  }

  const plugin = definePlugin({
    name: 'chat',
    version: '1.0.0',
    description:
      'Conversations from chat platforms: an inbound route, a FIFO queue per conversation, replies to a webhook',
    requires: { env: [], bins: [] },
    pipelines: [normalize],
    effects: [{ name: 'deliver-reply', on: ['TurnCompleted'], run: deliver }],
    actions: [
      defineAction({
        name: 'inbound',
        description: 'A message from a chat platform: queued in its conversation',
        input: z.strictObject({
          platform: z.string().regex(/^[a-z0-9_-]{1,40}$/, 'lower-case letters, digits, "_" or "-"'),
          channel: z.string().min(1).max(200),
          text: z.string().min(1).max(32_000),
          sender: z.string().max(200).optional(),
        }),
        supportsApi: true,
        supportsCommand: true,
        apiMethod: 'POST',
        apiPath: '/api/chat/inbound',
        exposeToAgent: false,
        async handler(input) {
          const message = await runPipelines({ text: input.text, sender: input.sender });
          if (!message.text)
            throw new ApiError('validation_failed', 'the message is empty', { param: 'text' });
          const conversationId = await openConversation(input.platform, input.channel);
          return receive(conversationId, {
            text: message.text,
            sender: input.sender ?? null,
            source: 'platform',
          });
        },
      }),
      defineAction({
        name: 'conversations',
        description: 'The conversations so far',
        input: z.strictObject({}),
        supportsApi: true,
        apiMethod: 'GET',
        apiPath: '/api/chat/conversations',
        exposeToAgent: false,
        async handler() {
          return {
            items: [...chat().conversations.values()].sort((a, b) =>
              a.created_at.localeCompare(b.created_at),
            ),
          };
        },
      }),
      defineAction({
        name: 'history',
        description: "A conversation's inbound messages and reply deliveries, in order",
        input: z.strictObject({ conversationId: z.string().min(1).max(100) }),
        supportsCommand: true,
        exposeToAgent: false,
        async handler({ conversationId }) {
          if (!chat().conversations.has(conversationId))
            throw new ApiError('not_found', `no conversation ${conversationId}`);
          const events = await deps.events.readStream(chatStreamId(conversationId));
          return {
            items: events.map((e) => ({
              type: e.type,
              data: e.data,
              revision: e.revision,
              time: e.createdAt,
            })),
          };
        },
      }),
    ],
  });

  return {
    plugin,
    /** Whether a session id is a conversation of this plugin. */
    isConversation: (sessionId: string) => chat().conversations.has(sessionId),
    /** A dashboard message to a conversation: same queue as platform messages, history first. */
    receiveFromDashboard: (conversationId: string, text: string) =>
      receive(conversationId, { text, sender: 'dashboard', source: 'dashboard' }),
  };
}
