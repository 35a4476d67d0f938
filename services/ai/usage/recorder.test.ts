import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryEventStore } from '../../../shared/event-store/memory.ts';
import type { AppendOptions, EventStore, NewEvent, StoredEvent } from '../../../shared/event-store/types.ts';
import { waitUntil } from '../../../shared/testing/wait.ts';
import { emptyLedger, foldLedger, spentIn } from '../budgets/ledger.ts';
import { FREE } from '../prices/price.ts';
import type { GenerationEvent, UsageEvent } from './events.ts';
import { UsageRecorder, type UsageRecorderOptions } from './recorder.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const tick = () => new Promise((resolve) => setImmediate(resolve));

/** A memory store whose appends are counted, and can be held or made to fail, one by one. */
class WatchedStore extends MemoryEventStore {
  readonly appends: { streamId: string; ids: string[] }[] = [];
  /** Decides what the next appends do: go on, fail before storing, or store and then fail (a lost answer). */
  next: ('ok' | 'fail' | 'lose-answer' | 'hold')[] = [];
  #held: (() => void)[] = [];

  override async append(streamId: string, events: readonly NewEvent[], options: AppendOptions) {
    this.appends.push({ streamId, ids: events.map((e) => e.id ?? '') });
    const what = this.next.shift() ?? 'ok';
    if (what === 'hold') await new Promise<void>((resolve) => this.#held.push(resolve));
    if (what === 'fail') throw new Error('connection reset');
    const result = await super.append(streamId, events, options);
    if (what === 'lose-answer') throw new Error('connection reset after commit');
    return result;
  }

  release(): void {
    for (const resolve of this.#held.splice(0)) resolve();
  }
}

const generation = (studioId: string, requestId: string): GenerationEvent => ({
  type: 'GenerationCompleted',
  data: {
    studioId,
    tokenId: 'tok_1',
    requestId,
    model: 'dev/echo',
    modality: 'text',
    inputTokens: 1,
    outputTokens: 1,
    latencyMs: 1,
    costMicroUsd: 3,
    status: 200,
  },
});

async function logOf(store: EventStore, studioId: string) {
  const events = await store.readStream(`usage-${studioId}`);
  return events.map((e) => ({ id: e.id, requestId: (e.data as { requestId: string }).requestId }));
}

/** A recorder for a studio `acme` with one budget for its whole life, of `amountMicroUsd`. */
const withTotalBudget = (
  store: EventStore,
  mode: 'hard' | 'soft',
  amountMicroUsd: number,
  options: UsageRecorderOptions = {},
) =>
  new UsageRecorder(
    store,
    undefined,
    undefined,
    {
      rulesOf: () => [{ studioId: 'acme', tokenId: null, amountMicroUsd, window: 'total', mode }],
      ledgerOf: () => undefined,
    },
    options,
  );

/** Asks `recorder` to reserve 600,000 micro-dollars for `requestId` (a budget of 1,000,000 pays for one at a time). */
const reserveOn = (recorder: UsageRecorder, requestId: string, leaseMs: number, job = false) =>
  recorder.reserve({
    job,
    studioId: 'acme',
    tokenId: 'tok_1',
    requestId,
    model: 'dev/echo',
    price: { ...FREE, input_per_mtok: 10 },
    ask: { inputTokensAtMost: 60_000, inputTokensAtLeast: 1 },
    outputLimit: 0,
    leaseMs,
  });

/** Records `requestId`'s generation, costing `costMicroUsd`, settling the reservation it was given. */
async function settle(
  recorder: UsageRecorder,
  requestId: string,
  reserving: ReturnType<typeof reserveOn>,
  costMicroUsd: number,
): Promise<void> {
  const reserved = await reserving;
  if (reserved.kind !== 'reserved')
    throw new Error(`${requestId}: expected a reservation, got ${reserved.kind}`);
  const { reservationId, startedAt } = reserved;
  const data = { ...generation('acme', requestId).data, reservationId, startedAt, costMicroUsd };
  await recorder.record({ type: 'GenerationCompleted', data });
}

afterEach(() => {
  vi.useRealTimers();
});

describe('UsageRecorder', () => {
  it('resolves a record once its event is stored', async () => {
    const store = new WatchedStore();
    const recorder = new UsageRecorder(store);
    await recorder.record(generation('acme', 'r1'));
    expect((await logOf(store, 'acme')).map((e) => e.requestId)).toEqual(['r1']);
  });

  it('gives its events new event ids (UUIDv7, ordered by time), so the log index of ids grows at its end', async () => {
    const store = new WatchedStore();
    const recorder = new UsageRecorder(store);
    const before = Date.now();
    for (const requestId of ['r1', 'r2', 'r3']) await recorder.record(generation('acme', requestId));
    const ids = (await logOf(store, 'acme')).map((e) => e.id);
    for (const id of ids) {
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16)).toBeGreaterThanOrEqual(before);
    }
  });

  it('lets concurrent records of one studio share appends, and other studios append alongside', async () => {
    const store = new WatchedStore();
    store.next = ['hold'];
    const recorder = new UsageRecorder(store);
    const first = recorder.record(generation('acme', 'r0'));
    await tick();
    const rest = Array.from({ length: 49 }, (_, i) => recorder.record(generation('acme', `r${i + 1}`)));
    const other = recorder.record(generation('other', 'o1'));
    await other; // not held up by acme's append in flight
    await tick();
    expect(store.appends.map((a) => a.ids.length)).toEqual([1, 1]);
    store.release();
    await Promise.all([first, ...rest]);

    const acme = store.appends.filter((a) => a.streamId === 'usage-acme');
    expect(acme.map((a) => a.ids.length)).toEqual([1, 49]);
    expect((await logOf(store, 'acme')).map((e) => e.requestId)).toEqual(
      Array.from({ length: 50 }, (_, i) => `r${i}`),
    );
  });

  it('rejects the callers of a failed append and stores their events later, with the same ids, once', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout'] });
    const store = new WatchedStore();
    store.next = ['hold', 'fail'];
    const recorder = new UsageRecorder(store);
    const first = recorder.record(generation('acme', 'r1'));
    await tick();
    const failing = [recorder.record(generation('acme', 'r2')), recorder.record(generation('acme', 'r3'))];
    store.release();
    await first;
    for (const record of failing) await expect(record).rejects.toThrow('connection reset');
    const failedIds = store.appends[1]!.ids;
    expect(recorder.retrying).toBe(2);

    await vi.advanceTimersByTimeAsync(1_000);
    await waitUntil(() => recorder.retrying === 0, 'no generation is retrying', 1_000);
    const log = await logOf(store, 'acme');
    expect(log.map((e) => e.requestId).sort()).toEqual(['r1', 'r2', 'r3']);
    expect(log.slice(1).map((e) => e.id)).toEqual(failedIds);
  });

  it('retries an append whose answer was lost without a duplicate, and without failing the appends of others', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout'] });
    const store = new WatchedStore();
    store.next = ['lose-answer'];
    const recorder = new UsageRecorder(store);
    await expect(recorder.record(generation('acme', 'lost'))).rejects.toThrow('after commit');
    expect(await logOf(store, 'acme')).toHaveLength(1);

    // The retry is due while other generations of the studio are being recorded.
    store.next = ['hold'];
    const busy = recorder.record(generation('acme', 'n0'));
    await tick();
    await vi.advanceTimersByTimeAsync(1_000);
    const others = Array.from({ length: 3 }, (_, i) => recorder.record(generation('acme', `n${i + 1}`)));
    store.release();
    await Promise.all([busy, ...others]);
    await waitUntil(() => recorder.retrying === 0, 'no generation is retrying', 1_000);

    const log = await logOf(store, 'acme');
    expect(log.map((e) => e.requestId).sort()).toEqual(['lost', 'n0', 'n1', 'n2', 'n3']);
    expect(new Set(log.map((e) => e.id)).size).toBe(log.length);
  });

  it('with a budget, counts a retried event once and goes on deciding on the stream it finds', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout'] });
    const store = new WatchedStore();
    const recorder = withTotalBudget(store, 'soft', 10);
    store.next = ['lose-answer'];
    await expect(recorder.record(generation('acme', 'lost'))).rejects.toThrow('after commit');
    await vi.advanceTimersByTimeAsync(1_000);
    await waitUntil(() => recorder.retrying === 0, 'no generation is retrying', 1_000);
    // 3 micro-dollars each: the fourth generation takes the studio past its 10
    for (const n of [1, 2, 3]) await recorder.record(generation('acme', `n${n}`));

    const log = await store.readStream('usage-acme');
    expect(log.map((e) => e.type)).toEqual([
      'GenerationCompleted',
      'GenerationCompleted',
      'GenerationCompleted',
      'GenerationCompleted',
      'BudgetExceeded',
    ]);
    expect(log[4]!.data).toMatchObject({ spentMicroUsd: 12 });
  });

  it('counts a reservation this process holds after its lease lapsed behind a slow store; the lease decides once it is let go', async () => {
    const store = new WatchedStore();
    const recorder = withTotalBudget(store, 'hard', 1_000_000);
    const leaseMs = 20;
    const reserve = (requestId: string) => reserveOn(recorder, requestId, leaseMs);
    const first = await reserve('r1');
    if (first.kind !== 'reserved') throw new Error(`expected a reservation, got ${first.kind}`);
    store.next = ['hold'];
    const letGo = recorder.holdLease({ reservationId: first.reservationId, studioId: 'acme' }, leaseMs);
    await waitUntil(() => store.appends.length === 2, 'the first extension is being appended', 1_000);
    // The next reservation waits behind the extension, stuck in the store until the lease it
    // extends has lapsed; the extensions due meanwhile queue behind the reservation.
    const second = reserve('r2');
    await new Promise((resolve) => setTimeout(resolve, leaseMs * 3));
    store.release();
    expect(await second).toMatchObject({ kind: 'refused', availableMicroUsd: 400_000 });

    letGo();
    await new Promise((resolve) => setTimeout(resolve, leaseMs * 2));
    expect(await reserve('r3')).toMatchObject({ kind: 'reserved', amountMicroUsd: 600_000 });
  });

  it('on two gateways, charges a generation whose lease lapsed unextended only what the budget has left', async () => {
    const store = new MemoryEventStore();
    const gatewayA = withTotalBudget(store, 'hard', 1_000_000);
    const gatewayB = withTotalBudget(store, 'hard', 1_000_000);
    // A's extensions are never written (its store stalled), so once its lease lapsed B no longer
    // counts it, and reserves the room it held.
    const onA = reserveOn(gatewayA, 'a', 20);
    await onA;
    expect(await reserveOn(gatewayB, 'b-early', 600_000)).toMatchObject({ kind: 'refused' });
    await new Promise((resolve) => setTimeout(resolve, 40));
    const onB = reserveOn(gatewayB, 'b', 600_000);
    await onB;

    await settle(gatewayA, 'a', onA, 550_000);
    await settle(gatewayB, 'b', onB, 550_000);

    const charges = (await store.readStream('usage-acme'))
      .filter((e) => e.type === 'GenerationCompleted')
      .map((e) => e.data as { requestId: string; costMicroUsd: number; unchargedMicroUsd?: number });
    expect(charges).toEqual([
      expect.objectContaining({ requestId: 'a', costMicroUsd: 400_000, unchargedMicroUsd: 150_000 }),
      expect.objectContaining({ requestId: 'b', costMicroUsd: 550_000 }),
    ]);
    expect(charges[1]!.unchargedMicroUsd).toBeUndefined();
  });

  it('keeps the reservation of a generation whose record failed open here until the retry stores it', async () => {
    const store = new WatchedStore();
    const recorder = withTotalBudget(store, 'hard', 1_000_000);
    const leaseMs = 300;
    const first = reserveOn(recorder, 'r1', leaseMs);
    await first;
    store.next = ['fail'];
    await expect(settle(recorder, 'r1', first, 100_000)).rejects.toThrow('connection reset');
    // Its generation is over and holds nothing; its lease lapses before the retry, a second later.
    await new Promise((resolve) => setTimeout(resolve, leaseMs * 2));
    expect(await reserveOn(recorder, 'r2', leaseMs)).toMatchObject({
      kind: 'refused',
      availableMicroUsd: 400_000,
    });

    await waitUntil(() => recorder.retrying === 0, 'the record is retried', 3_000);
    const log = await store.readStream('usage-acme');
    expect(log.filter((e) => e.type === 'GenerationCompleted').map((e) => e.data)).toEqual([
      expect.objectContaining({ requestId: 'r1', costMicroUsd: 100_000 }),
    ]);
    expect(await reserveOn(recorder, 'r3', leaseMs)).toMatchObject({
      kind: 'reserved',
      amountMicroUsd: 600_000,
    });
  });

  it('with hard and soft budgets, stores a record whose answer was lost once: its retry finds it stored', async () => {
    const store = new WatchedStore();
    const rules = [
      { studioId: 'acme', tokenId: null, amountMicroUsd: 1_000_000, window: 'total', mode: 'hard' },
      { studioId: 'acme', tokenId: null, amountMicroUsd: 50_000, window: 'total', mode: 'soft' },
    ] as const;
    const recorder = new UsageRecorder(store, undefined, undefined, {
      rulesOf: () => rules,
      ledgerOf: () => undefined,
    });
    const first = reserveOn(recorder, 'r1', 60_000);
    await first;
    store.next = ['lose-answer'];
    await expect(settle(recorder, 'r1', first, 100_000)).rejects.toThrow('after commit');

    await waitUntil(() => recorder.retrying === 0, 'the record is retried', 3_000);
    const log = await store.readStream('usage-acme');
    expect(log.map((e) => e.type)).toEqual(['BudgetReserved', 'GenerationCompleted', 'BudgetExceeded']);
    expect(await reserveOn(recorder, 'r2', 60_000)).toMatchObject({
      kind: 'reserved',
      amountMicroUsd: 600_000,
    });
  });

  it('keeps retrying, a second apart, while the store fails', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout'] });
    const store = new WatchedStore();
    store.next = ['fail', 'fail', 'fail'];
    const recorder = new UsageRecorder(store);
    await expect(recorder.record(generation('acme', 'r1'))).rejects.toThrow();
    await vi.advanceTimersByTimeAsync(1_000);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(recorder.retrying).toBe(1);
    await vi.advanceTimersByTimeAsync(1_000);
    await waitUntil(() => recorder.retrying === 0, 'no generation is retrying', 1_000);
    expect(store.appends).toHaveLength(4);
    expect(new Set(store.appends.flatMap((a) => a.ids)).size).toBe(1);
    expect((await logOf(store, 'acme')).map((e) => e.requestId)).toEqual(['r1']);
  });

  it('with answerBeforeDurable (the benchmark’s "without"), resolves before the append is done', async () => {
    const store = new WatchedStore();
    store.next = ['hold'];
    const recorder = new UsageRecorder(store, undefined, undefined, undefined, { answerBeforeDurable: true });
    await recorder.record(generation('acme', 'r1'));
    await tick();
    expect(store.appends).toHaveLength(1);
    expect(await logOf(store, 'acme')).toEqual([]);
    store.release();
    await waitUntil(
      async () => (await logOf(store, 'acme')).length === 1,
      'the generation is in the log',
      1_000,
    );
  });
});

describe('UsageRecorder, the only writer of its log', () => {
  const soleWriter = (store: EventStore, amountMicroUsd = 1_000_000) =>
    withTotalBudget(store, 'hard', amountMicroUsd, { soleWriter: true });
  const typesIn = async (store: EventStore) =>
    (await store.readStream('usage-acme')).map(
      (e) => `${e.type} ${(e.data as { requestId?: string }).requestId}`,
    );

  /** The studio's ledger as a fresh fold of its stored stream gives it. */
  const foldedFrom = async (store: EventStore) => {
    const ledger = emptyLedger();
    for (const event of await store.readStream('usage-acme'))
      foldLedger(ledger, event as StoredEvent & UsageEvent, event.createdAt);
    return ledger;
  };

  it("decides a reservation without an append; its generation's event records it, in one append", async () => {
    const store = new WatchedStore();
    const recorder = soleWriter(store);
    const reserving = reserveOn(recorder, 'r1', 60_000);
    expect(await reserving).toMatchObject({ kind: 'reserved', amountMicroUsd: 600_000 });
    expect(store.appends).toEqual([]);

    await settle(recorder, 'r1', reserving, 100_000);
    expect(store.appends).toHaveLength(1);
    const [event, ...rest] = await store.readStream('usage-acme');
    expect(rest).toEqual([]);
    const reserved = await reserving;
    expect(event).toMatchObject({
      type: 'GenerationCompleted',
      data: {
        requestId: 'r1',
        costMicroUsd: 100_000,
        reservationId: reserved.kind === 'reserved' ? reserved.reservationId : 'none',
        reservedMicroUsd: 600_000,
      },
    });
    expect(recorder.unwrittenOf('acme')).toEqual([]);
    const ledger = await foldedFrom(store);
    expect([...ledger.open.keys()]).toEqual([]);
    expect(spentIn(ledger, null, 'total')).toBe(100_000);
  });

  it('counts the reservations it has not written in every decision', async () => {
    const store = new WatchedStore();
    const recorder = soleWriter(store);
    const first = reserveOn(recorder, 'r1', 60_000);
    await first;
    expect(await reserveOn(recorder, 'r2', 60_000)).toMatchObject({
      kind: 'refused',
      availableMicroUsd: 400_000,
    });
    await settle(recorder, 'r1', first, 100_000);
    expect(await reserveOn(recorder, 'r3', 60_000)).toMatchObject({ kind: 'reserved' });
    expect(store.appends).toHaveLength(1);
  });

  it("keeps other generations' reservations held through the studio's appends, and counts them", async () => {
    const store = new WatchedStore();
    const recorder = soleWriter(store, 1_500_000);
    const first = reserveOn(recorder, 'r1', 60_000);
    const second = reserveOn(recorder, 'r2', 60_000);
    await Promise.all([first, second]);
    await settle(recorder, 'r2', second, 100_000);
    expect(await typesIn(store)).toEqual(['GenerationCompleted r2']);
    expect(recorder.unwrittenOf('acme').map((r) => r.data.requestId)).toEqual(['r1']);
    // 1.5 USD less r2's 0.1 spent and r1's 0.6 held: 0.8 left, too little for another 0.6 and 0.6.
    expect(await reserveOn(recorder, 'r3', 60_000)).toMatchObject({ kind: 'reserved' });
    expect(await reserveOn(recorder, 'r4', 60_000)).toMatchObject({
      kind: 'refused',
      availableMicroUsd: 200_000,
    });
    await settle(recorder, 'r1', first, 100_000);
    expect(await typesIn(store)).toEqual(['GenerationCompleted r2', 'GenerationCompleted r1']);
    expect(store.appends).toHaveLength(2);
  });

  it('groups the reservations decided while an append is under way with it, and holds them unwritten', async () => {
    const store = new WatchedStore();
    const recorder = soleWriter(store, 10_000_000);
    const first = reserveOn(recorder, 'r1', 60_000);
    await first;
    store.next = ['hold'];
    const recording = settle(recorder, 'r1', first, 100_000);
    await waitUntil(() => store.appends.length === 1, 'the append starts', 1_000);
    const second = reserveOn(recorder, 'r2', 60_000);
    const recordedToo = recorder.record(generation('acme', 'unbudgeted'));
    store.release();
    await Promise.all([recording, second, recordedToo]);
    expect(await typesIn(store)).toEqual(['GenerationCompleted r1', 'GenerationCompleted unbudgeted']);
    expect(recorder.unwrittenOf('acme').map((r) => r.data.requestId)).toEqual(['r2']);
  });

  it("writes a job's reservation at once: a later start resumes the job and must find it", async () => {
    const store = new WatchedStore();
    const recorder = soleWriter(store);
    await reserveOn(recorder, 'video', 60_000, true);
    expect(await typesIn(store)).toEqual(['BudgetReserved video']);
  });

  it("writes nothing for a held reservation's lease: no other process counts it", async () => {
    const store = new WatchedStore();
    const recorder = soleWriter(store);
    const reserving = reserveOn(recorder, 'long', 30);
    const reserved = await reserving;
    if (reserved.kind !== 'reserved') throw new Error(`expected a reservation, got ${reserved.kind}`);
    const letGo = recorder.holdLease({ reservationId: reserved.reservationId, studioId: 'acme' }, 30);
    await sleep(100);
    expect(store.appends).toEqual([]);
    // Long past its lease, this process still counts it: its generation runs here.
    expect(await reserveOn(recorder, 'next', 60_000)).toMatchObject({ kind: 'refused' });
    await settle(recorder, 'long', reserving, 100_000);
    letGo();
    expect(await typesIn(store)).toEqual(['GenerationCompleted long']);
  });

  it('writes a held reservation ahead of its release', async () => {
    const store = new WatchedStore();
    const recorder = soleWriter(store);
    const reserved = await reserveOn(recorder, 'moved-on', 60_000);
    if (reserved.kind !== 'reserved') throw new Error(`expected a reservation, got ${reserved.kind}`);
    await recorder.release({
      reservationId: reserved.reservationId,
      studioId: 'acme',
      tokenId: 'tok_1',
      requestId: 'moved-on',
    });
    expect(await typesIn(store)).toEqual(['BudgetReserved moved-on', 'BudgetReleased moved-on']);
    expect(recorder.unwrittenOf('acme')).toEqual([]);
    expect([...(await foldedFrom(store)).open.keys()]).toEqual([]);
  });

  it('writes the reservations it holds when it closes', async () => {
    const store = new WatchedStore();
    const recorder = soleWriter(store);
    await reserveOn(recorder, 'r1', 60_000);
    await recorder.close();
    expect(await typesIn(store)).toEqual(['BudgetReserved r1']);
  });

  it('keeps a reservation whose append failed, and records it with the retry', async () => {
    const store = new WatchedStore();
    const recorder = soleWriter(store);
    const first = reserveOn(recorder, 'r1', 60_000);
    await first;
    store.next = ['fail'];
    await expect(settle(recorder, 'r1', first, 100_000)).rejects.toThrow('connection reset');
    expect(recorder.unwrittenOf('acme')).toHaveLength(1);
    await waitUntil(() => recorder.retrying === 0, 'the record is retried', 3_000);
    const events = await store.readStream('usage-acme');
    expect(events.map((e) => [e.type, (e.data as { reservedMicroUsd?: number }).reservedMicroUsd])).toEqual([
      ['GenerationCompleted', 600_000],
    ]);
    expect(recorder.unwrittenOf('acme')).toEqual([]);
    expect(await reserveOn(recorder, 'r2', 60_000)).toMatchObject({ kind: 'reserved' });
  });

  it("retries a generation's event once when the failed append stored it, and counts its reservation settled", async () => {
    const store = new WatchedStore();
    const recorder = soleWriter(store, 1_500_000);
    const [first, other] = [reserveOn(recorder, 'r1', 60_000), reserveOn(recorder, 'other', 60_000)];
    await Promise.all([first, other]);
    store.next = ['lose-answer'];
    await expect(settle(recorder, 'r1', first, 100_000)).rejects.toThrow('after commit');
    await waitUntil(() => recorder.retrying === 0, 'the record is retried', 3_000);
    expect(recorder.unwrittenOf('acme').map((r) => r.data.requestId)).toEqual(['other']);
    // 1.5 USD less r1's 0.1 and other's 0.6 held: r1's reservation no longer counts.
    expect(await reserveOn(recorder, 'r3', 60_000)).toMatchObject({ kind: 'reserved' });
    await settle(recorder, 'other', other, 100_000);
    expect(await typesIn(store)).toEqual(['GenerationCompleted r1', 'GenerationCompleted other']);
  });

  it('leaves nothing of a reservation in flight when its process dies: the next process may spend its room', async () => {
    const store = new WatchedStore();
    await reserveOn(soleWriter(store), 'cut-short', 60_000);
    const restarted = soleWriter(store);
    expect(await reserveOn(restarted, 'after', 60_000)).toMatchObject({ kind: 'reserved' });
    expect(store.appends).toEqual([]);
  });
});
