import type { Price } from '../services/ai/prices/price.ts';
import { PRICES_EVENT_TYPES, type PricesEvent } from '../services/ai/prices/prices.ts';
import { defineProjection } from '../shared/projections/projection.ts';
import { entriesOf, mapOf } from '../shared/projections/snapshot.ts';

export type PriceOverride = Price & { updated_at: string };

/** Model → the price an admin set over the built-in default. */
export type PricesState = Map<string, PriceOverride>;

export const pricesProjection = defineProjection<PricesState, PricesEvent>({
  name: 'prices',
  schemaVersion: 1,
  handles: PRICES_EVENT_TYPES,
  initialState: () => new Map(),
  toSnapshot: entriesOf,
  fromSnapshot: (snapshot) => mapOf(snapshot, 'prices'),
  apply(state, event) {
    switch (event.type) {
      case 'PriceSet': {
        const { model, ...price } = event.data;
        state.set(model, { ...price, updated_at: event.createdAt });
        return;
      }
      case 'PriceRemoved':
        state.delete(event.data.model);
        return;
      default:
        return;
    }
  },
});
