import { describe, expect, it } from 'vitest';
import type { UsageEvent } from '../usage/events.ts';
import { emptyLedger, foldLedger, reservedIn } from './ledger.ts';
import { windowKey } from './windows.ts';

const NOW = '2026-11-29T10:00:00.000Z';
const reserved = (
  reservationId: string,
  amountMicroUsd: number,
  expiresAt: string,
  startedAt = NOW,
): UsageEvent => ({
  type: 'BudgetReserved',
  data: {
    reservationId,
    studioId: 's',
    tokenId: 't',
    requestId: `req-${reservationId}`,
    model: 'm',
    amountMicroUsd,
    startedAt,
    expiresAt,
  },
});

describe('the ledger', () => {
  it('holds open reservations back in every window, total included', () => {
    const ledger = emptyLedger();
    foldLedger(ledger, reserved('r1', 700, '2026-11-29T11:00:00.000Z'), NOW);
    for (const window of ['total', 'day', 'month'] as const) {
      expect(reservedIn(ledger, null, windowKey(window, NOW), NOW)).toBe(700);
      expect(reservedIn(ledger, 't', windowKey(window, NOW), NOW)).toBe(700);
      expect(reservedIn(ledger, 'other', windowKey(window, NOW), NOW)).toBe(0);
    }
  });

  it('a lease extended holds past its first expiry; one not extended lapses', () => {
    const ledger = emptyLedger();
    foldLedger(ledger, reserved('r1', 700, '2026-11-29T10:10:00.000Z'), NOW);
    foldLedger(ledger, reserved('r2', 300, '2026-11-29T10:10:00.000Z'), NOW);
    foldLedger(
      ledger,
      {
        type: 'BudgetLeaseExtended',
        data: { reservationId: 'r1', studioId: 's', expiresAt: '2026-11-29T10:20:00.000Z' },
      },
      NOW,
    );
    const later = '2026-11-29T10:15:00.000Z';
    expect(reservedIn(ledger, null, 'total', later)).toBe(700);
    // Extending a reservation already settled does not bring it back.
    foldLedger(
      ledger,
      { type: 'BudgetReleased', data: { reservationId: 'r1', studioId: 's', tokenId: 't', requestId: 'x' } },
      NOW,
    );
    foldLedger(
      ledger,
      {
        type: 'BudgetLeaseExtended',
        data: { reservationId: 'r1', studioId: 's', expiresAt: '2026-11-29T10:30:00.000Z' },
      },
      NOW,
    );
    expect(reservedIn(ledger, null, 'total', later)).toBe(0);
  });

  it('counts a lapsed reservation held by this process, and only then', () => {
    const ledger = emptyLedger();
    foldLedger(ledger, reserved('r1', 700, '2026-11-29T10:10:00.000Z'), NOW);
    const later = '2026-11-29T10:15:00.000Z';
    expect(reservedIn(ledger, null, 'total', later, new Set(['r1']))).toBe(700);
    expect(reservedIn(ledger, null, 'total', later, new Set(['r2']))).toBe(0);
  });

  it('keeps a reservation lapsed before midnight through the next day, and drops it the day after', () => {
    const ledger = emptyLedger();
    foldLedger(ledger, reserved('r1', 700, '2026-11-29T23:50:00.000Z'), NOW);
    const held = new Set(['r1']);
    const nextDay = '2026-11-30T00:05:00.000Z';
    foldLedger(ledger, reserved('r2', 1, '2026-11-30T00:15:00.000Z', nextDay), nextDay);
    expect(reservedIn(ledger, null, 'total', nextDay, held)).toBe(701);
    const dayAfter = '2026-12-01T00:05:00.000Z';
    foldLedger(ledger, reserved('r3', 1, '2026-12-01T00:15:00.000Z', dayAfter), dayAfter);
    // r2 lapsed on the 30th: kept through the 1st.
    expect([...ledger.open.keys()]).toEqual(['r2', 'r3']);
  });
});
