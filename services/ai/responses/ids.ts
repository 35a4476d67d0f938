import { randomBytes } from 'node:crypto';

const RESPONSE_ID = /^resp_([0-9a-f]{24})$/;
const ITEM_ID = /^(?:msg|fc)_([0-9a-f]{24})_\d{1,6}$/;

/** A response's id, made by the gateway whichever upstream answered. */
export const newResponseId = () => `resp_${randomBytes(12).toString('hex')}`;

/** Whether `id` can name a response the gateway made: anything else is not looked up. */
export const isResponseId = (id: string) => RESPONSE_ID.test(id);

/**
 * The id of an output item the gateway makes (answers translated from chat): it names its response,
 * so an `item_reference` to it is found without an index of items.
 */
export const itemIdOf = (responseId: string, kind: 'msg' | 'fc', outputIndex: number) =>
  `${kind}_${RESPONSE_ID.exec(responseId)![1]}_${outputIndex}`;

/** The response an item id of the gateway's names; undefined for any other id (an upstream's own). */
export function responseIdOfItem(itemId: string): string | undefined {
  const hex = ITEM_ID.exec(itemId)?.[1];
  return hex === undefined ? undefined : `resp_${hex}`;
}
