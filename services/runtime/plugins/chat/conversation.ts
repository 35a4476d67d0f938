import { type Decider, unknownCase } from '../../../../shared/decider.ts';
import { DomainError } from '../../../../shared/errors.ts';
import type { ChatEvent } from './events.ts';

type EventData<Type extends ChatEvent['type']> = Extract<ChatEvent, { type: Type }>['data'];

export type ChatCommand =
  | ({ type: 'OpenConversation' } & EventData<'ConversationOpened'>)
  | ({ type: 'ReceiveMessage' } & EventData<'MessageReceived'>)
  | ({ type: 'RecordReplyDelivery' } & EventData<'ReplyDelivered'>);

export interface ChatConversationState {
  status: 'none' | 'open';
}

function decide(command: ChatCommand, state: ChatConversationState): ChatEvent[] {
  const { conversationId } = command;
  if (command.type === 'OpenConversation') {
    if (state.status !== 'none') throw new DomainError('conflict', `conversation ${conversationId} is open`);
    const { platform, channel } = command;
    return [{ type: 'ConversationOpened', data: { conversationId, platform, channel } }];
  }
  if (state.status === 'none') throw new DomainError('not_found', `no conversation ${conversationId}`);

  switch (command.type) {
    case 'ReceiveMessage': {
      const { messageId, sender, text, source, turnId } = command;
      return [
        {
          type: 'MessageReceived',
          data: { conversationId, messageId, sender, text, source, turnId },
        },
      ];
    }
    case 'RecordReplyDelivery': {
      const { turnId, status, httpStatus, error } = command;
      return [{ type: 'ReplyDelivered', data: { conversationId, turnId, status, httpStatus, error } }];
    }
    default:
      return unknownCase('command', command);
  }
}

function evolve(state: ChatConversationState, event: ChatEvent): ChatConversationState {
  switch (event.type) {
    case 'ConversationOpened':
      return { status: 'open' };
    case 'MessageReceived':
    case 'ReplyDelivered':
      return state;
    default:
      return unknownCase('event', event);
  }
}

/** One conversation (`chat-<id>`): opened once, then its inbound messages and reply deliveries. */
export const chatDecider: Decider<ChatCommand, ChatEvent, ChatConversationState> = {
  initialState: () => ({ status: 'none' }),
  decide,
  evolve,
};
