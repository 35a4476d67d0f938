import type { ChatEvent } from '../services/runtime/plugins/chat/events.ts';
import { CHAT_EVENT_TYPES } from '../services/runtime/plugins/chat/events.ts';
import { defineProjection } from '../shared/projections/projection.ts';
import { type Entries, entriesOf, mapOf } from '../shared/projections/snapshot.ts';

export interface ConversationRecord {
  id: string;
  platform: string;
  channel: string;
  messages: number;
  replies: number;
  created_at: string;
  updated_at: string;
}

export interface ChatState {
  conversations: Map<string, ConversationRecord>;
  /** `<platform>:<channel>` → conversation id. */
  byChannel: Map<string, string>;
}

export const channelKey = (platform: string, channel: string) => `${platform}:${channel}`;

export const chatProjection = defineProjection<ChatState, ChatEvent>({
  name: 'chat',
  schemaVersion: 2,
  handles: CHAT_EVENT_TYPES,
  categories: ['chat'],
  initialState: () => ({ conversations: new Map(), byChannel: new Map() }),
  toSnapshot: (state) => ({
    conversations: entriesOf(state.conversations),
    byChannel: entriesOf(state.byChannel),
  }),
  fromSnapshot(snapshot) {
    const { conversations, byChannel } = snapshot as {
      conversations: Entries<ConversationRecord>;
      byChannel: Entries<string>;
    };
    return { conversations: mapOf(conversations, 'chat'), byChannel: mapOf(byChannel, 'chat') };
  },
  apply(state, event) {
    const { conversationId } = event.data;
    switch (event.type) {
      case 'ConversationOpened':
        state.conversations.set(conversationId, {
          id: conversationId,
          platform: event.data.platform,
          channel: event.data.channel,
          messages: 0,
          replies: 0,
          created_at: event.createdAt,
          updated_at: event.createdAt,
        });
        state.byChannel.set(channelKey(event.data.platform, event.data.channel), conversationId);
        return;
      case 'MessageReceived':
      case 'ReplyDelivered': {
        const conversation = state.conversations.get(conversationId);
        if (!conversation) return;
        conversation.updated_at = event.createdAt;
        if (event.type === 'MessageReceived') conversation.messages++;
        else if (event.data.status === 'delivered') conversation.replies++;
        return;
      }
      default: {
        const unknown: never = event;
        throw new Error(`unhandled ${JSON.stringify(unknown)}`);
      }
    }
  },
});
