import { describe, expect, it } from 'vitest';
import { FREE } from '../prices/price.ts';
import type { UsageEvent } from '../usage/events.ts';
import type { BudgetRule } from './budgets.ts';
import { emptyLedger, foldLedger, type HeldHere } from './ledger.ts';
import { decideReservation } from './reservation.ts';

const RESERVED_AT = '2026-11-29T10:00:00.000Z';
/** A second after the reservation's lease of 300 ms lapsed. */
const LATER = '2026-11-29T10:00:01.300Z';

const total: BudgetRule = {
  studioId: 's',
  tokenId: null,
  amountMicroUsd: 1_000_000,
  window: 'total',
  mode: 'hard',
};
/** 10 micro-dollars a token; the next generation's input alone costs at most 500,000. */
const price = { ...FREE, input_per_mtok: 10, output_per_mtok: 10 };
const ask = { inputTokensAtMost: 50_000, inputTokensAtLeast: 1, maxOutputTokens: 1 };

const reserved: UsageEvent = {
  type: 'BudgetReserved',
  data: {
    reservationId: 'r1',
    studioId: 's',
    tokenId: 't',
    requestId: 'req-1',
    model: 'm',
    amountMicroUsd: 600_000,
    startedAt: RESERVED_AT,
    expiresAt: '2026-11-29T10:00:00.300Z',
  },
};
const settled: UsageEvent = {
  type: 'GenerationCompleted',
  data: {
    studioId: 's',
    tokenId: 't',
    requestId: 'req-1',
    model: 'm',
    modality: 'text',
    inputTokens: 10_000,
    outputTokens: 20_000,
    latencyMs: 1,
    costMicroUsd: 300_000,
    status: 200,
    startedAt: RESERVED_AT,
    reservationId: 'r1',
  },
};

/** Given the usage stream `history`, the decision on the next generation at `LATER`. */
function given(history: UsageEvent[]) {
  const ledger = emptyLedger();
  for (const event of history) foldLedger(ledger, event, RESERVED_AT);
  return {
    whenDecidedWith: (heldHere?: HeldHere) =>
      decideReservation([total], ledger, { tokenId: 't', price, ask, outputLimit: 0, now: LATER }, heldHere),
  };
}

const heldHere = (...ids: string[]): HeldHere => new Set(ids);

describe('a reservation decision', () => {
  it('counts a reservation whose generation runs in this process, though its lease lapsed: the next is refused', () => {
    expect(given([reserved]).whenDecidedWith(heldHere('r1'))).toEqual({
      kind: 'refused',
      rule: total,
      availableMicroUsd: 400_000,
      neededMicroUsd: 500_010,
    });
  });

  it('releases a lapsed reservation that no generation here holds (its process died): the next is reserved', () => {
    expect(given([reserved]).whenDecidedWith(heldHere('another'))).toEqual({
      kind: 'reserved',
      amountMicroUsd: 500_010,
      outputTokens: 1,
    });
    expect(given([reserved]).whenDecidedWith()).toMatchObject({ kind: 'reserved' });
  });

  it('counts a settled reservation by what its generation cost, held or not', () => {
    for (const held of [heldHere('r1'), heldHere()]) {
      expect(given([reserved, settled]).whenDecidedWith(held)).toEqual({
        kind: 'reserved',
        amountMicroUsd: 500_010,
        outputTokens: 1,
      });
    }
    const spentMore = { ...settled, data: { ...settled.data, costMicroUsd: 600_000 } } as UsageEvent;
    expect(given([reserved, spentMore]).whenDecidedWith(heldHere('r1'))).toMatchObject({
      kind: 'refused',
      availableMicroUsd: 400_000,
    });
  });
});
