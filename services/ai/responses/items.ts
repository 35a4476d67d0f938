import { responseIdOfItem } from './ids.ts';
import type { Item, ResponsesRequest } from './wire.ts';

/** The request's input as items: a string is one user message; an item without a type is typed. */
export function inputItems(input: ResponsesRequest['input']): Item[] {
  if (input === undefined) return [];
  if (typeof input === 'string') return [{ type: 'message', role: 'user', content: input }];
  return input.map((item) => {
    if (typeof item.type === 'string') return item as Item;
    return { ...item, type: 'role' in item && item.role !== undefined ? 'message' : 'item_reference' };
  });
}

/**
 * Items for a native upstream: the gateway's own item ids (of answers translated from chat) are left
 * out, since the upstream never made them and would look them up.
 */
export function withoutGatewayIds(items: readonly Item[]): Item[] {
  return items.map((item) => {
    if (typeof item.id !== 'string' || responseIdOfItem(item.id) === undefined) return item;
    const { id: _id, ...rest } = item;
    return rest as Item;
  });
}
