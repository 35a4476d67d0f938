/** One stream per conversation, `chat-<id>`; the conversation id is also its session's id. */
export const chatStreamId = (conversationId: string) => `chat-${conversationId}`;

export type ChatEvent =
  | { type: 'ConversationOpened'; data: { conversationId: string; platform: string; channel: string } }
  | {
      type: 'MessageReceived';
      data: {
        conversationId: string;
        messageId: string;
        sender: string | null;
        text: string;
        source: 'platform' | 'dashboard';
        turnId: string;
      };
    }
  | {
      type: 'ReplyDelivered';
      data: {
        conversationId: string;
        turnId: string;
        status: 'delivered' | 'failed';
        httpStatus: number | null;
        error: string | null;
      };
    };

export const CHAT_EVENT_TYPES = [
  'ConversationOpened',
  'MessageReceived',
  'ReplyDelivered',
] as const satisfies readonly ChatEvent['type'][];
