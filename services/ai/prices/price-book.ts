import { pricesProjection } from '../../../projections/prices.ts';
import type { GatewayContext } from '../../../shared/gateway-context.ts';
import { defaultPriceOf } from './default-prices.ts';
import type { Price } from './price.ts';

export interface PriceSource {
  /** The price in force now: an admin's override, else the built-in default. */
  priceOf(model: string): Price;
}

/** Prices as the `prices` read model holds them over the built-in table. */
export class PriceBook implements PriceSource {
  constructor(private readonly gw: GatewayContext) {}

  override(model: string): Price | undefined {
    const found = this.gw.projections.state(pricesProjection).get(model);
    if (!found) return undefined;
    const { updated_at: _at, ...price } = found;
    return price;
  }

  priceOf(model: string): Price {
    return this.override(model) ?? defaultPriceOf(model);
  }
}
