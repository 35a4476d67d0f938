import { describe, it } from 'vitest';
import { deciderSpec } from '../../../shared/decider-spec.ts';
import { FREE } from './price.ts';
import { type PricesEvent, pricesDecider } from './prices.ts';

const spec = deciderSpec(pricesDecider);
const echoDefault = { ...FREE, input_per_mtok: 1, output_per_mtok: 2 };
const set = (model: string, price: typeof FREE): PricesEvent => ({
  type: 'PriceSet',
  data: { model, ...price },
});

describe('prices decider', () => {
  it('sets a price over the built-in default, keeping the fields left out', () => {
    spec
      .given([])
      .when({ type: 'SetPrice', model: 'dev/echo', price: { output_per_mtok: 8 } })
      .thenEmits([set('dev/echo', { ...echoDefault, output_per_mtok: 8 })]);
  });

  it('changes an override, keeping its other fields', () => {
    spec
      .given([set('dev/echo', { ...echoDefault, output_per_mtok: 8 })])
      .when({ type: 'SetPrice', model: 'dev/echo', price: { input_per_mtok: 3 } })
      .thenEmits([set('dev/echo', { ...echoDefault, input_per_mtok: 3, output_per_mtok: 8 })]);
  });

  it('removes an override', () => {
    spec
      .given([set('dev/echo', echoDefault)])
      .when({ type: 'RemovePrice', model: 'dev/echo' })
      .thenEmits([{ type: 'PriceRemoved', data: { model: 'dev/echo' } }]);
  });

  it('refuses to remove a price that was never overridden', () => {
    spec
      .given([set('dev/echo', echoDefault), { type: 'PriceRemoved', data: { model: 'dev/echo' } }])
      .when({ type: 'RemovePrice', model: 'dev/echo' })
      .thenFails('not_found');
  });
});
