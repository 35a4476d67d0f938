import { describe, expect, it } from 'vitest';
import type { ReservationData, UsageEvent } from '../usage/events.ts';
import type { BudgetRule } from './budgets.ts';
import { emptyLedger, foldLedger, type HeldHere } from './ledger.ts';
import { chargeableOnSettling, LAPSE_MARGIN_MS } from './settlement.ts';

const STARTED_AT = '2026-11-29T10:00:00.000Z';
/** Ten minutes on: the first reservation's lease (below) has lapsed by then. */
const SETTLED_AT = new Date('2026-11-29T10:10:00.000Z');

const hard = (window: BudgetRule['window'], amountMicroUsd: number, tokenId: string | null): BudgetRule => ({
  studioId: 's',
  tokenId,
  amountMicroUsd,
  window,
  mode: 'hard',
});
const total = hard('total', 1_000_000, null);
const tokenDay = hard('day', 700_000, 't');

const reservation = (id: string, amountMicroUsd: number, expiresAt: string): UsageEvent => ({
  type: 'BudgetReserved',
  data: {
    reservationId: id,
    studioId: 's',
    tokenId: 't',
    requestId: `req-${id}`,
    model: 'm',
    amountMicroUsd,
    startedAt: STARTED_AT,
    expiresAt,
  } satisfies ReservationData,
});
const settledBy = (id: string, costMicroUsd: number, tokenId: string | null = 't'): UsageEvent => ({
  type: 'GenerationCompleted',
  data: {
    studioId: 's',
    tokenId,
    requestId: `req-${id}`,
    model: 'm',
    modality: 'text',
    inputTokens: 1,
    outputTokens: 1,
    latencyMs: 1,
    costMicroUsd,
    status: 200,
    startedAt: STARTED_AT,
    ...(id.startsWith('r') ? { reservationId: id } : {}),
  },
});

/** r1's lease lapsed five minutes before it settles (its extensions were not written). */
const lapsed = reservation('r1', 600_000, '2026-11-29T10:05:00.000Z');
/** r1's lease, extended: it runs for ten more minutes. */
const extended: UsageEvent = {
  type: 'BudgetLeaseExtended',
  data: { reservationId: 'r1', studioId: 's', expiresAt: '2026-11-29T10:20:00.000Z' },
};

/** Given the usage stream `history`, how much of r1's `costMicroUsd` the budgets `rules` take. */
function given(history: UsageEvent[], rules: BudgetRule[] = [total]) {
  const ledger = emptyLedger();
  for (const event of history) foldLedger(ledger, event, STARTED_AT);
  return {
    whenR1Settles: (costMicroUsd: number, heldHere: HeldHere = new Set(['r1'])) =>
      chargeableOnSettling(
        rules,
        ledger,
        { reservationId: 'r1', startedAt: STARTED_AT, costMicroUsd },
        SETTLED_AT,
        heldHere,
      ),
  };
}

describe('a settlement under hard budgets', () => {
  it('takes the whole cost while its lease holds, whatever else was spent since', () => {
    // The admin key is bound by no budget, yet its generations are charged to the studio's.
    expect(given([lapsed, extended, settledBy('admin', 900_000, null)]).whenR1Settles(500_000)).toBe(500_000);
  });

  it('takes the whole cost after its lease lapsed, when nobody took the room it held', () => {
    expect(given([lapsed]).whenR1Settles(500_000)).toBe(500_000);
  });

  it('takes at most what is left once its lease lapsed and another gateway reserved its room', () => {
    const meanwhile = reservation('r2', 600_000, '2026-11-29T10:20:00.000Z');
    expect(given([lapsed, meanwhile]).whenR1Settles(500_000)).toBe(400_000);
    expect(given([lapsed, meanwhile, settledBy('r2', 550_000)]).whenR1Settles(500_000)).toBe(450_000);
    const more = reservation('r3', 1_000_000, '2026-11-29T10:20:00.000Z');
    expect(given([lapsed, more]).whenR1Settles(500_000)).toBe(0);
  });

  it('counts the others of this process whatever their leases, and the tightest budget decides', () => {
    const lapsedHere = reservation('r2', 600_000, '2026-11-29T10:05:00.000Z');
    expect(given([lapsed, lapsedHere]).whenR1Settles(500_000, new Set(['r1']))).toBe(500_000);
    expect(given([lapsed, lapsedHere]).whenR1Settles(500_000, new Set(['r1', 'r2']))).toBe(400_000);
    expect(given([lapsed, lapsedHere], [total, tokenDay]).whenR1Settles(500_000, new Set(['r2']))).toBe(
      100_000,
    );
    const spentToday = settledBy('e', 450_000);
    expect(given([lapsed, spentToday], [total, tokenDay]).whenR1Settles(500_000)).toBe(250_000);
  });

  it('treats a lease within the clocks’ margin of its end as lapsed, and one dropped from the ledger too', () => {
    const nearEnd = new Date(SETTLED_AT.getTime() + LAPSE_MARGIN_MS - 1).toISOString();
    const room = reservation('r2', 800_000, '2026-11-29T10:20:00.000Z');
    expect(given([reservation('r1', 600_000, nearEnd), room]).whenR1Settles(500_000)).toBe(200_000);
    const clear = new Date(SETTLED_AT.getTime() + LAPSE_MARGIN_MS + 1).toISOString();
    expect(given([reservation('r1', 600_000, clear), room]).whenR1Settles(500_000)).toBe(500_000);
    expect(given([room]).whenR1Settles(500_000)).toBe(200_000);
  });
});
