import { type Decider, unknownCase } from '../../../shared/decider.ts';
import { DomainError } from '../../../shared/errors.ts';
import { defaultPriceOf } from './default-prices.ts';
import type { Price } from './price.ts';

/** Every price override lives in the single `prices` stream. */
export const PRICES_STREAM = 'prices';

export type PricesEvent =
  | { type: 'PriceSet'; data: { model: string } & Price }
  | { type: 'PriceRemoved'; data: { model: string } };

export type PricesCommand =
  | { type: 'SetPrice'; model: string; price: Partial<Price> }
  | { type: 'RemovePrice'; model: string };

/** Model → its overriding price. */
export interface PricesState {
  overrides: ReadonlyMap<string, Price>;
}

export const PRICES_EVENT_TYPES = [
  'PriceSet',
  'PriceRemoved',
] as const satisfies readonly PricesEvent['type'][];

function decide(command: PricesCommand, state: PricesState): PricesEvent[] {
  switch (command.type) {
    case 'SetPrice': {
      // Fields left out keep the price in force: the override, else the built-in default.
      const current = state.overrides.get(command.model) ?? defaultPriceOf(command.model);
      return [{ type: 'PriceSet', data: { model: command.model, ...current, ...command.price } }];
    }
    case 'RemovePrice':
      if (!state.overrides.has(command.model))
        throw new DomainError('not_found', `model ${command.model} has no price override`);
      return [{ type: 'PriceRemoved', data: { model: command.model } }];
    default:
      return unknownCase('command', command);
  }
}

function evolve(state: PricesState, event: PricesEvent): PricesState {
  switch (event.type) {
    case 'PriceSet': {
      const { model, ...price } = event.data;
      return { overrides: new Map(state.overrides).set(model, price) };
    }
    case 'PriceRemoved': {
      const overrides = new Map(state.overrides);
      overrides.delete(event.data.model);
      return { overrides };
    }
    default:
      return unknownCase('event', event);
  }
}

export const pricesDecider: Decider<PricesCommand, PricesEvent, PricesState> = {
  initialState: () => ({ overrides: new Map() }),
  decide,
  evolve,
};
