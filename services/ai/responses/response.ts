import { type Decider, unknownCase } from '../../../shared/decider.ts';
import { DomainError } from '../../../shared/errors.ts';
import type { Item, ResponseObject } from './wire.ts';

/** A response is one stream, `response-<id>`, of one event: responses are never changed. */
export const responseStreamId = (responseId: string) => `response-${responseId}`;

/** A response as stored: enough to answer it again and to continue its conversation. */
export interface StoredResponse {
  /** The studio it belongs to (`admin` for the admin key): no other studio's token sees it. */
  studioId: string;
  /**
   * What this request added to the conversation: its input items, strings made messages and item
   * references resolved. The items of earlier responses are not repeated: they are read back by
   * following `response.previous_response_id`.
   */
  input: Item[];
  /** Answered by the upstream's own Responses API (its item ids are the upstream's). */
  native: boolean;
  /** The response object as it was answered: its output items, usage and settings. */
  response: ResponseObject;
}

export type ResponseEvent = { type: 'ResponseCreated'; data: StoredResponse };
export type ResponseCommand = { type: 'CreateResponse'; stored: StoredResponse };
export interface ResponseState {
  stored: StoredResponse | undefined;
}

function decide(command: ResponseCommand, state: ResponseState): ResponseEvent[] {
  switch (command.type) {
    case 'CreateResponse':
      if (state.stored)
        throw new DomainError('conflict', `response ${command.stored.response.id} already exists`);
      return [{ type: 'ResponseCreated', data: command.stored }];
    default:
      return unknownCase('command', command.type);
  }
}

function evolve(_state: ResponseState, event: ResponseEvent): ResponseState {
  switch (event.type) {
    case 'ResponseCreated':
      return { stored: event.data };
    default:
      return unknownCase('event', event.type);
  }
}

export const responseDecider: Decider<ResponseCommand, ResponseEvent, ResponseState> = {
  initialState: () => ({ stored: undefined }),
  decide,
  evolve,
};
