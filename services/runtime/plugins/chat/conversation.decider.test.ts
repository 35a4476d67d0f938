import { describe, it } from 'vitest';
import { deciderSpec } from '../../../../shared/decider-spec.ts';
import { chatDecider } from './conversation.ts';
import type { ChatEvent } from './events.ts';

const spec = deciderSpec(chatDecider);
const conversationId = 'conv_1';
const opened: ChatEvent = {
  type: 'ConversationOpened',
  data: { conversationId, platform: 'slack', channel: 'general' },
};
const message = {
  conversationId,
  messageId: 'cmsg_1',
  sender: 'ada',
  text: 'hello',
  source: 'platform',
  turnId: 'turn_1',
} as const;
const received: ChatEvent = { type: 'MessageReceived', data: message };
const outcome = { status: 'delivered', httpStatus: 200, error: null } as const;

describe('chat decider: a conversation', () => {
  it('opens a new conversation on its platform and channel', () => {
    spec
      .given([])
      .when({ type: 'OpenConversation', conversationId, platform: 'slack', channel: 'general' })
      .thenEmits([opened]);
  });

  it('refuses to open a conversation twice', () => {
    spec
      .given([opened])
      .when({ type: 'OpenConversation', conversationId, platform: 'slack', channel: 'general' })
      .thenFails('conflict');
  });

  it('records a message received, from the platform or the dashboard', () => {
    spec
      .given([opened])
      .when({ type: 'ReceiveMessage', ...message })
      .thenEmits([received]);
    spec
      .given([opened, received])
      .when({ type: 'ReceiveMessage', ...message, sender: 'dashboard', source: 'dashboard' })
      .thenEmits([
        { type: 'MessageReceived', data: { ...message, sender: 'dashboard', source: 'dashboard' } },
      ]);
  });

  it('records a reply delivery, delivered or failed, with the webhook outcome as it came', () => {
    spec
      .given([opened, received])
      .when({ type: 'RecordReplyDelivery', conversationId, turnId: 'turn_1', ...outcome })
      .thenEmits([{ type: 'ReplyDelivered', data: { conversationId, turnId: 'turn_1', ...outcome } }]);
    const failed = { status: 'failed', httpStatus: null, error: 'could not reach the webhook' } as const;
    spec
      .given([opened, received])
      .when({ type: 'RecordReplyDelivery', conversationId, turnId: 'turn_1', ...failed })
      .thenEmits([{ type: 'ReplyDelivered', data: { conversationId, turnId: 'turn_1', ...failed } }]);
  });

  it.each([
    { type: 'ReceiveMessage', ...message },
    { type: 'RecordReplyDelivery', conversationId, turnId: 'turn_1', ...outcome },
  ] as const)('answers not_found for $type in a conversation never opened', (command) => {
    spec
      .given([])
      .when(command)
      .thenFails('not_found', /no conversation conv_1/);
  });
});
