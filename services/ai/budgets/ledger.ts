import { unknownCase } from '../../../shared/decider.ts';
import type { ReservationData, UsageEvent } from '../usage/events.ts';
import { budgetKey } from './budgets.ts';
import { windowKeysAt, windowPrefix } from './windows.ts';

/**
 * A studio's balances as its usage stream gives them: spent per (token or studio, window) and the
 * reservations not settled yet. The one fold of a usage stream for budgets: the read model keeps
 * one per studio and the writer that reserves keeps its own copy, caught up from the stream.
 */
export interface LedgerState {
  /** The stream's last revision folded in (-1: none). */
  revision: number;
  /** `<token id or ''>|<window key>` → micro-dollars spent by generations started in that window. */
  spent: Map<string, number>;
  /** Reservation id → the reservation, until settled or expired. */
  open: Map<string, ReservationData>;
  /** `<token id or ''>|<window key>` of soft budgets already reported exceeded. */
  exceeded: Set<string>;
  /** The newest day seen, so windows long past are dropped as days go by. */
  latestDay: string;
}

export const emptyLedger = (): LedgerState => ({
  revision: -1,
  spent: new Map(),
  open: new Map(),
  exceeded: new Set(),
  latestDay: '',
});

export const copyLedger = (state: LedgerState): LedgerState => ({
  revision: state.revision,
  spent: new Map(state.spent),
  open: new Map(state.open),
  exceeded: new Set(state.exceeded),
  latestDay: state.latestDay,
});

export const balanceKey = (tokenId: string | null, windowKey: string) => `${budgetKey(tokenId)}|${windowKey}`;

/** The keys a generation of `tokenId` started at `iso` is charged to: its token's and the studio's. */
function chargedKeys(tokenId: string | null, iso: string): readonly string[] {
  // Every generation of a token on one day is charged to the same keys: made once a day, not per event.
  const memo = `${tokenId ?? ''}|${iso.slice(0, 10)}`;
  let keys = chargedKeysMemo.get(memo);
  if (keys === undefined) {
    const windows = windowKeysAt(iso);
    const owners = tokenId === null ? [null] : [null, tokenId];
    keys = owners.flatMap((owner) => windows.map((w) => balanceKey(owner, w)));
    if (chargedKeysMemo.size >= CHARGED_KEYS_MEMO_SIZE) chargedKeysMemo.clear();
    chargedKeysMemo.set(memo, keys);
  }
  return keys;
}

const CHARGED_KEYS_MEMO_SIZE = 10_000;
const chargedKeysMemo = new Map<string, readonly string[]>();

/**
 * Folds one usage event into `state` (mutated: a stream of a million events folds in one pass).
 * `createdAt` dates events recorded before generations carried their start.
 */
export function foldLedger(state: LedgerState, event: UsageEvent, createdAt: string): void {
  switch (event.type) {
    case 'GenerationCompleted':
    case 'GenerationFailed': {
      const d = event.data;
      if (d.reservationId !== undefined) state.open.delete(d.reservationId);
      const at = d.startedAt ?? createdAt;
      for (const key of chargedKeys(d.tokenId, at)) {
        state.spent.set(key, (state.spent.get(key) ?? 0) + (d.costMicroUsd ?? 0));
      }
      forgetPast(state, at);
      return;
    }
    case 'BudgetReserved':
      state.open.set(event.data.reservationId, event.data);
      forgetPast(state, event.data.startedAt);
      return;
    case 'BudgetReleased':
      state.open.delete(event.data.reservationId);
      return;
    case 'BudgetLeaseExtended': {
      const open = state.open.get(event.data.reservationId);
      if (open) state.open.set(open.reservationId, { ...open, expiresAt: event.data.expiresAt });
      return;
    }
    case 'BudgetExceeded':
      state.exceeded.add(balanceKey(event.data.tokenId, event.data.windowKey));
      return;
    default:
      unknownCase('event', event);
  }
}

const DAY_MS = 86_400_000;

/**
 * Once a new day is seen: drops day windows older than yesterday, month windows older than last
 * month, and reservations that expired before yesterday (a day later than needed, so that one whose
 * generation still runs in its process, which counts it whatever its lease says, is not dropped
 * when its lease lapsed just before midnight). Driven by the events alone, so a rebuild drops
 * exactly what the live fold dropped.
 */
function forgetPast(state: LedgerState, iso: string): void {
  const day = iso.slice(0, 10);
  if (day <= state.latestDay) return;
  state.latestDay = day;
  const keepDay = new Date(Date.parse(day) - DAY_MS).toISOString().slice(0, 10);
  const now = new Date(Date.parse(day));
  const keepMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1))
    .toISOString()
    .slice(0, 7);
  const stale = (key: string) => {
    const window = key.slice(key.lastIndexOf('|') + 1);
    if (window.startsWith('day:')) return window.slice(4) < keepDay;
    if (window.startsWith('month:')) return window.slice(6) < keepMonth;
    return false;
  };
  for (const key of state.spent.keys()) if (stale(key)) state.spent.delete(key);
  for (const key of state.exceeded) if (stale(key)) state.exceeded.delete(key);
  for (const [id, r] of state.open) if (r.expiresAt < keepDay) state.open.delete(id);
}

export const spentIn = (state: LedgerState, tokenId: string | null, windowKey: string) =>
  state.spent.get(balanceKey(tokenId, windowKey)) ?? 0;

/** Reservations whose generations still run in the process deciding (see `reservedIn`). */
export interface HeldHere {
  has(reservationId: string): boolean;
}

const NONE_HELD: HeldHere = { has: () => false };

/**
 * Micro-dollars held back by reservations of `tokenId` (null: of every token of the studio) started
 * in `windowKey` and not expired at `now`. A reservation in `heldHere` counts whatever its lease
 * says: its generation runs in this process and will be charged, so it is open until settled, even
 * when the extension of its lease was not written in time. The lease only decides for reservations
 * of other processes, which may have died.
 */
export function reservedIn(
  state: LedgerState,
  tokenId: string | null,
  windowKey: string,
  now: string,
  heldHere: HeldHere = NONE_HELD,
): number {
  // Started in the window: its instant begins with the window's date (`total`: any instant).
  const prefix = windowPrefix(windowKey);
  let total = 0;
  for (const r of state.open.values()) {
    if (!r.startedAt.startsWith(prefix)) continue;
    if (r.expiresAt <= now && !heldHere.has(r.reservationId)) continue;
    if (tokenId === null || r.tokenId === tokenId) total += r.amountMicroUsd;
  }
  return total;
}
