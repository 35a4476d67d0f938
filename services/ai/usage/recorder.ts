import { randomUUID } from 'node:crypto';
import { newEventId } from '../../../shared/event-store/event-id.ts';
import {
  type EventStore,
  type StoredEvent,
  WrongExpectedRevision,
} from '../../../shared/event-store/types.ts';
import { GroupCommit } from '../../../shared/group-commit.ts';
import type { Logger } from '../../../shared/logger.ts';
import { backoffDelay, pause } from '../../../shared/retry.ts';
import type { BudgetRule } from '../budgets/budgets.ts';
import {
  balanceKey,
  copyLedger,
  emptyLedger,
  foldLedger,
  type HeldHere,
  type LedgerState,
  spentIn,
} from '../budgets/ledger.ts';
import {
  decideReservation,
  type ReservationDecision,
  type ReservationRequest,
} from '../budgets/reservation.ts';
import { chargeableOnSettling } from '../budgets/settlement.ts';
import { windowKey } from '../budgets/windows.ts';
import { FREE, type Price } from '../prices/price.ts';
import type { PriceSource } from '../prices/price-book.ts';
import type { Modality } from '../providers/types.ts';
import {
  type GenerationEvent,
  type LeaseExtendedData,
  type ReleaseData,
  type ReservationData,
  USAGE_EVENT_TYPES,
  type UsageEvent,
  usageStreamId,
} from './events.ts';

const RETRY_AFTER_MS = 1_000;
/**
 * How long a reservation holds for other processes unless extended: a generation extends it while
 * it runs (`holdLease`), so only one whose process died lets it lapse, this long after. Its own
 * process counts it until it is settled, whatever its lease says.
 */
const RESERVATION_LEASE_MS = 10 * 60_000;
/**
 * A video job's reservation outlives its request: it holds while the job waits and runs (its
 * worker extends it), and for two hours after a process that died, so a job resumed at the next
 * start still finds it (jobs give up after an hour).
 */
const JOB_RESERVATION_LEASE_MS = 2 * 60 * 60_000;
/** Appends that lost a race with another process are decided again on the new state, this often at most. */
const MAX_CONFLICTS = 50;

/** What the recorder needs to know of budgets: the rules set, and the read model's balances to start from. */
export interface BudgetSource {
  rulesOf(studioId: string): readonly BudgetRule[];
  /** The read model's ledger of the studio (not to be mutated), or undefined when it has none. */
  ledgerOf(studioId: string): LedgerState | undefined;
}

export interface ReserveRequest extends Omit<ReservationRequest, 'now'> {
  studioId: string;
  requestId: string;
  model: string;
  /** How long the reservation holds if its generation never settles it (its process died). */
  leaseMs: number;
  /**
   * The generation goes on as a job, which a later start resumes: its reservation is written
   * before `reserve` returns, even where others are held unwritten.
   */
  job?: boolean;
}

export type ReserveOutcome =
  | { kind: 'unbudgeted' }
  | (Extract<ReservationDecision, { kind: 'reserved' }> & {
      reservationId: string;
      /** The instant the budgets were weighed at: the generation's start, for its windows. */
      startedAt: string;
    })
  | Extract<ReservationDecision, { kind: 'refused' }>;

type Submission =
  | { kind: 'record'; event: GenerationEvent & { id: string } }
  | { kind: 'reserve'; request: ReserveRequest }
  | { kind: 'release'; data: ReleaseData }
  | { kind: 'extend'; data: LeaseExtendedData }
  /** Writes the reservations held unwritten, with nothing else. */
  | { kind: 'flush' };

type Outcome = ReserveOutcome | undefined;

export interface UsageRecorderOptions {
  /**
   * No other process appends to this log (`hasSoleWriter`). A generation's reservation is then
   * decided and held here, not written: its generation's own event records it once the generation
   * ends (`reservedMicroUsd`). It is written as an event of its own only ahead of its release, or
   * at shutdown. A job's reservation is written at once.
   */
  soleWriter?: boolean;
  /**
   * **Benchmark only** (bench/gateway): `record` resolves at once and the append goes on behind it,
   * so answers do not wait for their record; the benchmark measures what waiting costs against
   * this. Never for a deployment: an answer could then be sent and its record lost in a crash.
   */
  answerBeforeDurable?: boolean;
  /** Told what happens, for metrics (services/ai/ai-metrics.ts). */
  observer?: UsageObserver;
  /** Tests only: reservations' leases, in place of 10 minutes (a generation's) and 2 hours (a job's). */
  leaseMs?: { generation: number; job: number };
}

/** What the recorder tells metrics: each generation's event, each budget refusal, each group's size. */
export interface UsageObserver {
  recorded(event: GenerationEvent): void;
  budgetRefused(studioId: string): void;
  committed(items: number): void;
}

/**
 * The one writer of the usage streams (`usage-<studio>`). `record` appends a generation's event and
 * resolves once it is durable, so a caller can hold the end of its answer until then; `reserve`
 * sets budget aside before an upstream call. Concurrent submissions of a studio share one append
 * (group commit). Where a studio has budgets, each append is decided on the stream's state and
 * made with its expected revision, so processes sharing the log never both spend the same dollar:
 * the loser of a race reads what the winner wrote and decides again.
 */
export class UsageRecorder {
  readonly #commits: GroupCommit<Submission, Outcome>;
  readonly #ledgers = new Map<string, { state: LedgerState; fresh: boolean }>();
  readonly #retrying = new Set<Promise<void>>();
  /**
   * Reservations whose generations still run in this process, by id: their leases are extended
   * together, and this process's budget decisions count them as open until they are settled.
   */
  readonly #held = new Map<string, HeldLease>();
  /**
   * Per studio, reservations decided and not written (`soleWriter`), in the order decided: folded
   * into the studio's ledger here, and recorded by their generation's event once it ends.
   */
  readonly #unwritten = new Map<string, HeldReservation[]>();
  #extending: { timer: NodeJS.Timeout; everyMs: number } | undefined;
  #closed = false;

  constructor(
    private readonly store: EventStore,
    private readonly logger?: Logger,
    private readonly prices?: PriceSource,
    private readonly budgets?: BudgetSource,
    private readonly options: UsageRecorderOptions = {},
  ) {
    const observer = options.observer;
    this.#commits = new GroupCommit(
      (studioId, items) => this.#commit(studioId, items),
      undefined,
      observer && ((size) => observer.committed(size)),
    );
  }

  /** The reservations of `studioId` decided here and not written (`soleWriter`), oldest first. */
  unwrittenOf(studioId: string): readonly HeldReservation[] {
    return this.#unwritten.get(studioId) ?? [];
  }

  /** How long a reservation of a generation of `modality` holds unless extended. */
  leaseMsOf(modality: Modality): number {
    const leases = this.options.leaseMs ?? {
      generation: RESERVATION_LEASE_MS,
      job: JOB_RESERVATION_LEASE_MS,
    };
    return modality === 'video' ? leases.job : leases.generation;
  }

  /** The price a generation starting now is charged at. */
  priceOf(model: string): Price {
    return this.prices?.priceOf(model) ?? FREE;
  }

  async record(event: GenerationEvent): Promise<void> {
    this.options.observer?.recorded(event);
    const withId = { ...event, id: newEventId() };
    const durable = this.#commits
      .submit(event.data.studioId, { kind: 'record', event: withId })
      .then(() => undefined)
      .catch((error: unknown) => {
        this.#retryLater(event.data.studioId, withId);
        throw error;
      });
    if (this.options.answerBeforeDurable) {
      durable.catch(() => undefined);
      return;
    }
    return durable;
  }

  /** Sets aside the worst case of a generation under its studio's and token's hard budgets. */
  async reserve(request: ReserveRequest): Promise<ReserveOutcome> {
    if (hardRulesFor(this.budgets?.rulesOf(request.studioId) ?? [], request.tokenId).length === 0) {
      return { kind: 'unbudgeted' };
    }
    const outcome = await this.#commits.submit(request.studioId, { kind: 'reserve', request });
    if (outcome?.kind === 'refused') this.options.observer?.budgetRefused(request.studioId);
    return outcome ?? { kind: 'unbudgeted' };
  }

  /** Gives back a reservation whose generation moved on to another model without spending it. */
  async release(data: ReleaseData): Promise<void> {
    await this.#commits.submit(data.studioId, { kind: 'release', data });
  }

  /**
   * Keeps a reservation open while its generation runs, until the returned function is called
   * (once its generation's event is recorded, so that no decision falls between the two). This
   * process counts it as open however late its extensions are written; for the others, every third
   * of `leaseMs` its lease is extended to `leaseMs` from then (`BudgetLeaseExtended`). A process
   * that dies stops extending, and its reservations lapse a lease later.
   */
  holdLease(reservation: { reservationId: string; studioId: string }, leaseMs: number): () => void {
    const held: HeldLease = { ...reservation, leaseMs, extendedAt: Date.now() };
    this.#held.set(held.reservationId, held);
    // One timer for every lease held, ticking often enough for the shortest.
    const everyMs = Math.max(10, leaseMs / 6);
    if (!this.#extending || everyMs < this.#extending.everyMs) {
      this.#stopExtending();
      this.#extending = { timer: setInterval(() => this.#extendDue(), everyMs).unref(), everyMs };
    }
    return () => {
      if (this.#held.get(held.reservationId) === held) this.#held.delete(held.reservationId);
      if (this.#held.size === 0) this.#stopExtending();
    };
  }

  #stopExtending(): void {
    if (this.#extending) clearInterval(this.#extending.timer);
    this.#extending = undefined;
  }

  #extendDue(): void {
    const now = Date.now();
    for (const held of this.#held.values()) {
      if (now - held.extendedAt < held.leaseMs / 3) continue;
      held.extendedAt = now;
      const data = {
        reservationId: held.reservationId,
        studioId: held.studioId,
        expiresAt: new Date(now + held.leaseMs).toISOString(),
      };
      this.#commits.submit(held.studioId, { kind: 'extend', data }).catch((error: unknown) => {
        // The next round tries again, a third of a lease before it lapses.
        held.extendedAt = 0;
        this.logger?.warn({ err: error, studioId: held.studioId }, 'could not extend a reservation');
      });
    }
  }

  /**
   * Decides a batch on the studio's ledger and appends what it decided. With one writer
   * (`soleWriter`), the reservations it decides are held unwritten (a job's excepted); a generation
   * whose reservation is held records it in its own event, and a release is written after the
   * reservation it gives back. `retry`: one event whose append failed, decided on `rules` alone.
   */
  async #commit(
    studioId: string,
    items: Submission[],
    retry?: { rules: readonly BudgetRule[] },
  ): Promise<Outcome[]> {
    const rules = retry?.rules ?? this.budgets?.rulesOf(studioId) ?? [];
    if (
      rules.length === 0 &&
      !this.#unwritten.has(studioId) &&
      items.every((item) => item.kind === 'record')
    ) {
      return this.#appendBlind(studioId, items);
    }
    for (let conflicts = 0; ; conflicts++) {
      const ledger = await this.#ledger(studioId);
      const draft = copyLedger(ledger);
      const unwritten = this.#unwritten.get(studioId) ?? [];
      const shaped = withHeldReservations(items, unwritten);
      const { events, outcomes } = decideBatch(rules, draft, shaped.items, new Date(), this.#held);
      const held = this.options.soleWriter ? reservationsToHold(items, outcomes, events) : [];
      const stillHeld = new Map(
        unwritten
          .filter((r) => !shaped.ahead.includes(r) && !shaped.recorded.includes(r))
          .map((r) => [r.data.reservationId, r]),
      );
      // Not written: the reservations this batch holds, and the extensions of those held, whose
      // lease is kept where they are held (no other process reads it).
      const heldIds = new Set(held.map((h) => h.data.reservationId));
      const notWritten = new Set<UsageEvent>(
        events.filter((event) =>
          event.type === 'BudgetReserved'
            ? heldIds.has(event.data.reservationId)
            : event.type === 'BudgetLeaseExtended' && stillHeld.has(event.data.reservationId),
        ),
      );
      const written = [...shaped.ahead, ...events.filter((event) => !notWritten.has(event))];
      const settle = () => {
        this.#written(studioId, [...shaped.ahead, ...shaped.recorded]);
        for (const event of notWritten) {
          if (event.type !== 'BudgetLeaseExtended') continue;
          const reservation = stillHeld.get(event.data.reservationId)!;
          reservation.data = { ...reservation.data, expiresAt: event.data.expiresAt };
        }
        if (held.length > 0)
          this.#unwritten.set(studioId, [...(this.#unwritten.get(studioId) ?? []), ...held]);
      };
      if (written.length === 0) {
        settle();
        this.#ledgers.set(studioId, { state: draft, fresh: true });
        return outcomes;
      }
      try {
        const result = await this.#append(
          studioId,
          written,
          ledger.revision < 0 ? 'no_stream' : ledger.revision,
        );
        settle();
        draft.revision = result.nextExpectedRevision;
        this.#ledgers.set(studioId, { state: draft, fresh: true });
        return outcomes;
      } catch (error) {
        // Read again before the next decision: an append that failed may have been stored.
        this.#ledgers.set(studioId, { state: ledger, fresh: false });
        if (!(error instanceof WrongExpectedRevision) || conflicts >= MAX_CONFLICTS) throw error;
        // Two processes deciding in lockstep would collide again: one of them waits a moment.
        if (conflicts >= 2) await pause(backoffDelay(conflicts - 1, { initialMs: 2, maxMs: 50 }));
      }
    }
  }

  /** Takes the reservations an append wrote or recorded off the studio's unwritten ones. */
  #written(studioId: string, written: readonly HeldReservation[]): void {
    if (written.length === 0) return;
    const left = (this.#unwritten.get(studioId) ?? []).filter((event) => !written.includes(event));
    if (left.length === 0) this.#unwritten.delete(studioId);
    else this.#unwritten.set(studioId, left);
  }

  /** A studio without budgets: nothing to decide, so the append does not wait on the stream's revision. */
  async #appendBlind(studioId: string, items: Submission[]): Promise<Outcome[]> {
    const events = items.flatMap((item) => (item.kind === 'record' ? [item.event] : []));
    const result = await this.#append(studioId, events, 'any');
    const cached = this.#ledgers.get(studioId);
    if (cached?.fresh) {
      if (result.nextExpectedRevision === cached.state.revision + events.length) {
        const now = new Date().toISOString();
        for (const event of events) foldLedger(cached.state, event, now);
        cached.state.revision = result.nextExpectedRevision;
      } else cached.fresh = false;
    }
    return items.map(() => undefined);
  }

  #append(studioId: string, events: readonly UsageEvent[], expected: 'any' | 'no_stream' | number) {
    // One append carries many requests: the metadata names the gateway; each event its token and request.
    return this.store.append(usageStreamId(studioId), events, { expected, metadata: { actor: 'gateway' } });
  }

  /** The studio's ledger as of the stream's last revision this process knows of. */
  async #ledger(studioId: string): Promise<LedgerState> {
    const cached = this.#ledgers.get(studioId);
    if (cached?.fresh) return cached.state;
    let state = cached?.state;
    const unwritten = this.#unwritten.get(studioId) ?? [];
    const fromReadModel = this.budgets?.ledgerOf(studioId);
    // With reservations unwritten, every event since this ledger is read, to find those stored.
    const readModelAhead = fromReadModel && (!state || fromReadModel.revision > state.revision);
    if (readModelAhead && unwritten.length === 0) state = copyLedger(fromReadModel);
    state = state ? copyLedger(state) : emptyLedger();
    const storedIds = new Set<string>();
    const settledIds = new Set<string>();
    for (;;) {
      const page: StoredEvent[] = await this.store.readStream(usageStreamId(studioId), {
        after: state.revision,
        limit: 10_000,
      });
      for (const event of page) {
        foldLedger(state, event as StoredEvent & UsageEvent, event.createdAt);
        state.revision = event.revision;
        if (unwritten.length > 0) {
          storedIds.add(event.id);
          const settled = (event.data as { reservationId?: unknown } | null)?.reservationId;
          if (typeof settled === 'string' && (USAGE_EVENT_TYPES as readonly string[]).includes(event.type))
            settledIds.add(settled);
        }
      }
      if (page.length < 10_000) break;
    }
    if (unwritten.length > 0) {
      // A failed append that was stored after all wrote them, or a generation's event that recorded
      // them; the others are counted here.
      this.#written(
        studioId,
        unwritten.filter((event) => storedIds.has(event.id) || settledIds.has(event.data.reservationId)),
      );
      const now = new Date().toISOString();
      for (const event of this.#unwritten.get(studioId) ?? []) foldLedger(state, event, now);
    }
    this.#ledgers.set(studioId, { state, fresh: true });
    return state;
  }

  #retryLater(studioId: string, event: GenerationEvent & { id: string }): void {
    this.logger?.warn({ studioId }, 'could not append usage; retrying');
    // Its reservation stays open in this process until the event is stored, however long that takes.
    const { reservationId, modality } = event.data;
    const letGo =
      reservationId === undefined
        ? () => undefined
        : this.holdLease({ reservationId, studioId }, this.leaseMsOf(modality));
    const retry = (async () => {
      // Every second, not backing off: the budgets of the studio wait for this event to count it.
      while (!this.#closed) {
        await pause(RETRY_AFTER_MS, undefined, { unref: true });
        if (this.#closed) break;
        try {
          // Alone, not in a group, and decided on its hard budgets only: the failed append may have
          // been stored with its answer lost, and an append mixing ids already stored with new ones
          // (another generation's, a soft budget's BudgetExceeded) is refused (DuplicateEventId).
          // Alone, a stored id returns the original result. The ledger is read again before the
          // next budget decision, which then counts the event as it was stored.
          const hardRules = (this.budgets?.rulesOf(studioId) ?? []).filter((rule) => rule.mode === 'hard');
          await this.#commit(studioId, [{ kind: 'record', event }], { rules: hardRules });
          const cached = this.#ledgers.get(studioId);
          if (cached) cached.fresh = false;
          return;
        } catch {
          // still failing: the next round retries
        }
      }
    })();
    this.#retrying.add(retry);
    void retry.finally(() => {
      letGo();
      this.#retrying.delete(retry);
    });
  }

  /** How many events wait for a retry after a failed append. */
  get retrying(): number {
    return this.#retrying.size;
  }

  /**
   * Writes the reservations held unwritten, then waits (at most `deadlineMs`) for events that
   * failed to append to be retried.
   */
  async close(deadlineMs = 5_000): Promise<void> {
    await Promise.all(
      [...this.#unwritten.keys()].map((studioId) =>
        this.#commits.submit(studioId, { kind: 'flush' }).catch((error: unknown) => {
          this.logger?.warn({ err: error, studioId }, 'could not write the reservations held');
        }),
      ),
    );
    if (this.#retrying.size > 0) {
      await Promise.race([
        Promise.all(this.#retrying),
        new Promise((resolve) => setTimeout(resolve, deadlineMs).unref()),
      ]);
    }
    this.#closed = true;
    this.#stopExtending();
    if (this.#retrying.size > 0)
      this.logger?.error({ events: this.#retrying.size }, 'usage events left unrecorded at shutdown');
  }
}

/** A reservation decided and not written, with the id it is stored under should it be written. */
export type HeldReservation = { type: 'BudgetReserved'; data: ReservationData; id: string };

interface HeldLease {
  reservationId: string;
  studioId: string;
  leaseMs: number;
  /** When its lease was last extended (or taken). */
  extendedAt: number;
}

/**
 * A generation's event as its hard budgets take it: charged at most what they have left once its
 * reservation's lease has lapsed (`chargeableOnSettling`), the rest added to what it left uncharged.
 */
function settledWithin<Event extends GenerationEvent>(
  rules: readonly BudgetRule[],
  ledger: LedgerState,
  event: Event,
  clock: Date,
  heldHere: HeldHere,
): Event {
  const { reservationId, startedAt, costMicroUsd } = event.data;
  if (reservationId === undefined || startedAt === undefined || costMicroUsd === 0) return event;
  const charged = chargeableOnSettling(
    rules,
    ledger,
    { reservationId, startedAt, costMicroUsd },
    clock,
    heldHere,
  );
  if (charged === costMicroUsd) return event;
  const uncharged = (event.data.unchargedMicroUsd ?? 0) + costMicroUsd - charged;
  return { ...event, data: { ...event.data, costMicroUsd: charged, unchargedMicroUsd: uncharged } };
}

/**
 * A batch as the log takes it beside the reservations held unwritten: the event of a generation
 * whose reservation is held records it (`reservedMicroUsd`) in place of the reservation's own event
 * (`recorded`); a release is written after the reservation it gives back, and a flush after all of
 * them (`ahead`).
 */
function withHeldReservations(
  items: readonly Submission[],
  unwritten: readonly HeldReservation[],
): { items: readonly Submission[]; ahead: HeldReservation[]; recorded: HeldReservation[] } {
  if (unwritten.length === 0) return { items, ahead: [], recorded: [] };
  if (items.some((item) => item.kind === 'flush')) return { items, ahead: [...unwritten], recorded: [] };
  const held = new Map(unwritten.map((reservation) => [reservation.data.reservationId, reservation]));
  const ahead: HeldReservation[] = [];
  const recorded: HeldReservation[] = [];
  const shaped = items.map((item): Submission => {
    if (item.kind === 'release') {
      const reservation = held.get(item.data.reservationId);
      if (reservation) ahead.push(reservation);
      return item;
    }
    if (item.kind !== 'record' || item.event.data.reservationId === undefined) return item;
    const reservation = held.get(item.event.data.reservationId);
    if (!reservation) return item;
    recorded.push(reservation);
    const data = { ...item.event.data, reservedMicroUsd: reservation.data.amountMicroUsd };
    return { kind: 'record', event: { ...item.event, data } as GenerationEvent & { id: string } };
  });
  return { items: shaped, ahead, recorded };
}

/** The reservations a batch decided that wait unwritten: all but jobs', with the ids they would be stored under. */
function reservationsToHold(
  items: readonly Submission[],
  outcomes: readonly Outcome[],
  events: readonly UsageEvent[],
): HeldReservation[] {
  const jobs = new Set<string>();
  items.forEach((item, i) => {
    const outcome = outcomes[i];
    if (item.kind === 'reserve' && item.request.job === true && outcome?.kind === 'reserved')
      jobs.add(outcome.reservationId);
  });
  return events.flatMap((event) =>
    event.type === 'BudgetReserved' && !jobs.has(event.data.reservationId)
      ? [{ type: 'BudgetReserved' as const, data: event.data, id: newEventId() }]
      : [],
  );
}

const hardRulesFor = (rules: readonly BudgetRule[], tokenId: string | null) =>
  rules.filter((rule) => rule.mode === 'hard' && (rule.tokenId === null || rule.tokenId === tokenId));

/**
 * The events one batch appends, decided in order on `ledger` (mutated as they are): each
 * generation's record, each reservation the budgets can pay for, and a `BudgetExceeded` for each
 * soft budget the batch takes past its amount for the first time in its window. `heldHere`: the
 * reservations of generations running in this process, open until settled.
 */
function decideBatch(
  rules: readonly BudgetRule[],
  ledger: LedgerState,
  items: readonly Submission[],
  clock: Date,
  heldHere: HeldHere,
): { events: UsageEvent[]; outcomes: Outcome[] } {
  const now = clock.toISOString();
  const events: UsageEvent[] = [];
  const append = (event: UsageEvent & { id?: string }) => {
    events.push(event);
    foldLedger(ledger, event, now);
  };
  const outcomes = items.map((item): Outcome => {
    if (item.kind === 'record') {
      append(
        settledWithin(hardRulesFor(rules, item.event.data.tokenId), ledger, item.event, clock, heldHere),
      );
      return undefined;
    }
    if (item.kind === 'release') {
      append({ type: 'BudgetReleased', data: item.data });
      return undefined;
    }
    if (item.kind === 'flush') return undefined;
    if (item.kind === 'extend') {
      // A reservation settled meanwhile (or dropped as long expired) has nothing to extend.
      if (ledger.open.has(item.data.reservationId)) append({ type: 'BudgetLeaseExtended', data: item.data });
      return undefined;
    }
    const { request } = item;
    const decision = decideReservation(
      hardRulesFor(rules, request.tokenId),
      ledger,
      { ...request, now },
      heldHere,
    );
    if (decision.kind === 'refused') return decision;
    const reservationId = randomUUID();
    append({
      type: 'BudgetReserved',
      data: {
        reservationId,
        studioId: request.studioId,
        tokenId: request.tokenId,
        requestId: request.requestId,
        model: request.model,
        amountMicroUsd: decision.amountMicroUsd,
        startedAt: now,
        expiresAt: new Date(clock.getTime() + request.leaseMs).toISOString(),
      },
    });
    return { ...decision, reservationId, startedAt: now };
  });
  for (const rule of rules) {
    if (rule.mode !== 'soft') continue;
    const key = windowKey(rule.window, now);
    const spent = spentIn(ledger, rule.tokenId, key);
    if (spent < rule.amountMicroUsd || ledger.exceeded.has(balanceKey(rule.tokenId, key))) continue;
    append({
      type: 'BudgetExceeded',
      data: {
        studioId: rule.studioId,
        tokenId: rule.tokenId,
        window: rule.window,
        windowKey: key,
        amountMicroUsd: rule.amountMicroUsd,
        spentMicroUsd: spent,
      },
    });
  }
  return { events, outcomes };
}
