import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { eventDigest } from '../../services/audit/digest.ts';
import { GENESIS_HASH, type LogSealedData, SEALS_STREAM } from '../../services/audit/seal.ts';
import { LogSealer, type LogSealerOptions } from '../../services/audit/sealer.ts';
import { type VerifyProgress, verifyLog } from '../../services/audit/verify.ts';
import { MemoryEventStore } from '../../shared/event-store/memory.ts';
import type { EventStore, StoredEvent } from '../../shared/event-store/types.ts';
import { createLogger } from '../../shared/logger.ts';
import { waitUntil } from '../../shared/testing/wait.ts';
import { TamperedLog } from './tampered-log.ts';
import { untilSealed } from './until-sealed.ts';

const metadata = { actor: 'admin', requestId: 'req-1' };
const running: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((stop) => stop()));
});

function startSealer(store: EventStore, options: Omit<LogSealerOptions, 'events' | 'logger'>) {
  const controller = new AbortController();
  const done = new LogSealer({ events: store, logger: createLogger('silent'), ...options }).run(
    controller.signal,
  );
  const stop = async () => {
    controller.abort();
    await done;
  };
  running.push(stop);
  return { stop };
}

/** Appends `count` events, one at a time; the position of the last. */
async function appendEvents(store: EventStore, count: number, stream = 'studio-acme'): Promise<number> {
  let position = 0;
  for (let i = 0; i < count; i++)
    ({ position } = await store.append(stream, [{ type: 'Noted', data: { i, b: 1, a: 2 } }], { metadata }));
  return position;
}
const seals = async (store: EventStore) =>
  (await store.readStream(SEALS_STREAM)).map((e) => e.data as LogSealedData);

const logEvents = async (store: EventStore) =>
  (await store.readAll()).filter((e) => e.streamId !== SEALS_STREAM);

/** A log of `count` events, sealed `sealEvery` at a time, the sealer stopped. */
async function sealedLog(count: number, sealEvery: number): Promise<MemoryEventStore> {
  const store = new MemoryEventStore();
  // Every event stored before the sealer starts: ranges are cut by count alone (only the tail waits
  // for the time bound), whatever the machine's load; tests name seals by their place.
  const head = await appendEvents(store, count);
  const sealer = startSealer(store, { sealEvery, sealAfterMs: 10 });
  await untilSealed(store, head);
  await sealer.stop();
  return store;
}

describe('the log sealer', () => {
  it('seals every N events, listing each position with its digest, chained from the genesis hash', async () => {
    const store = new MemoryEventStore();
    startSealer(store, { sealEvery: 3, sealAfterMs: 60_000 });
    await appendEvents(store, 7);
    await waitUntil(async () => (await seals(store)).length === 2, 'two seals');
    const [first, second] = await seals(store);
    const events = await logEvents(store);
    expect(first!.previous).toBe(GENESIS_HASH);
    expect(first!.events).toEqual(events.slice(0, 3).map((e) => [e.position, eventDigest(e)]));
    expect([first!.first, first!.last]).toEqual([events[0]!.position, events[2]!.position]);
    expect(second!.previous).toBe(first!.hash);
    expect(second!.events.map(([p]) => p)).toEqual(events.slice(3, 6).map((e) => e.position));

    // The seventh waits for two more (or for the time bound): reported as unsealed, never as verified.
    const report = await verifyLog(store);
    expect(report).toEqual({
      ok: true,
      events_checked: 6,
      seals_checked: 2,
      sealed_through: events[5]!.position,
      unsealed: 1,
      head: await store.headPosition(),
      breaks: 0,
    });
  });

  it('seals a shorter range once its first event has waited the time bound', async () => {
    const store = new MemoryEventStore();
    startSealer(store, { sealEvery: 1_000, sealAfterMs: 20 });
    await untilSealed(store, await appendEvents(store, 2));
    expect((await seals(store)).map((s) => s.events.length)).toEqual([2]);
  });

  it('seals at the time bound while events keep coming, then goes on with a new range', async () => {
    const store = new MemoryEventStore();
    startSealer(store, { sealEvery: 1_000, sealAfterMs: 20 });
    let last = 0;
    const until = Date.now() + 150;
    while (Date.now() < until) {
      last = await appendEvents(store, 1);
      await new Promise((resolve) => setTimeout(resolve, 3));
    }
    await untilSealed(store, last);
    const ranges = (await seals(store)).map((s) => s.events.length);
    // A range of 1,000 never fills here: every seal came from its time bound.
    expect(ranges.length).toBeGreaterThanOrEqual(3);
    expect(ranges.reduce((a, b) => a + b, 0)).toBe((await logEvents(store)).length);
    expect((await verifyLog(store)).ok).toBe(true);
  });

  it('never lists a seal in a range: the chain of seals covers them', async () => {
    const store = await sealedLog(10, 2);
    const sealPositions = new Set((await store.readStream(SEALS_STREAM)).map((e) => e.position));
    const listed = (await seals(store)).flatMap((s) => s.events.map(([p]) => p));
    expect(listed).toEqual((await logEvents(store)).map((e) => e.position));
    expect(listed.some((p) => sealPositions.has(p))).toBe(false);
  });

  it('a sealer started again goes on from the last seal: no event sealed twice, the chain unbroken', async () => {
    const store = await sealedLog(5, 2);
    const before = (await seals(store)).length;
    startSealer(store, { sealEvery: 2, sealAfterMs: 10 });
    await untilSealed(store, await appendEvents(store, 3, 'studio-globex'));
    const all = await seals(store);
    expect(all.length).toBeGreaterThan(before);
    const listed = all.flatMap((s) => s.events.map(([p]) => p));
    expect(listed).toEqual((await logEvents(store)).map((e) => e.position));
    expect((await verifyLog(store)).ok).toBe(true);
  });

  it('two sealers at once still leave one unbroken chain (each seal is appended at the revision it read)', async () => {
    const store = new MemoryEventStore();
    const options = { sealEvery: 2, sealAfterMs: 5, retry: { initialMs: 1, maxMs: 10 } };
    startSealer(store, options);
    startSealer(store, options);
    await untilSealed(store, await appendEvents(store, 30));
    const report = await verifyLog(store);
    expect(report).toMatchObject({ ok: true, events_checked: 30, unsealed: 0, breaks: 0 });
  });
});

describe('verifyLog', () => {
  it('answers ok with nothing checked on an empty log', async () => {
    expect(await verifyLog(new MemoryEventStore())).toEqual({
      ok: true,
      events_checked: 0,
      seals_checked: 0,
      sealed_through: 0,
      unsealed: 0,
      head: 0,
      breaks: 0,
    });
  });

  it('reports every event of a log without seals as unsealed, not as verified', async () => {
    const store = new MemoryEventStore();
    await appendEvents(store, 4);
    expect(await verifyLog(store)).toMatchObject({ ok: true, events_checked: 0, unsealed: 4 });
  });

  it('reads the log in pages and reports its progress up to the head', async () => {
    const store = await sealedLog(25, 4);
    const progress: VerifyProgress[] = [];
    const report = await verifyLog(store, { pageSize: 7, onProgress: (p) => progress.push(p) });
    expect(report).toMatchObject({ ok: true, events_checked: 25, unsealed: 0 });
    expect(progress.length).toBeGreaterThan(3);
    const fractions = progress.map((p) => p.fraction);
    expect(fractions).toEqual([...fractions].sort((a, b) => a - b));
    expect(progress.at(-1)).toEqual({ events: (await store.readAll()).length, fraction: 1 });
  });

  describe('names the first break', () => {
    let store: MemoryEventStore;
    let events: StoredEvent[];
    let sealEvents: StoredEvent[];

    const verifyTampered = (tamper: (log: TamperedLog) => void) => {
      const view = new TamperedLog(store);
      tamper(view);
      return verifyLog(view);
    };

    beforeEach(async () => {
      store = await sealedLog(9, 3);
      events = await logEvents(store);
      sealEvents = await store.readStream(SEALS_STREAM);
    });

    it('an edited event: its position, "edited", and the seal whose range holds it', async () => {
      const target = events[4]!;
      const report = await verifyTampered((log) =>
        log.edit(target.position, (e) => ({ ...e, data: { ...(e.data as object), i: 99 } })),
      );
      expect(report).toMatchObject({
        ok: false,
        breaks: 1,
        first_break: { position: target.position, reason: 'edited', seal: sealEvents[1]!.position },
      });
    });

    it('an edited time or actor is an edit too', async () => {
      const target = events[0]!;
      for (const change of [
        (e: StoredEvent) => ({ ...e, createdAt: '2000-01-01T00:00:00.000Z' }),
        (e: StoredEvent) => ({ ...e, metadata: { ...e.metadata, actor: 'someone-else' } }),
      ]) {
        const report = await verifyTampered((log) => log.edit(target.position, change));
        expect(report.first_break).toEqual({
          position: target.position,
          reason: 'edited',
          seal: sealEvents[0]!.position,
        });
      }
    });

    it('a deleted event: its position and "missing"', async () => {
      const report = await verifyTampered((log) => log.remove(events[7]!.position));
      expect(report.first_break).toEqual({
        position: events[7]!.position,
        reason: 'missing',
        seal: sealEvents[2]!.position,
      });
      expect(report.events_checked).toBe(8);
    });

    it('an event inserted inside a sealed range: its position and "unexpected"', async () => {
      const intruder: StoredEvent = {
        ...events[1]!,
        id: '00000000-0000-4000-8000-000000000001',
        streamId: 'studio-intruder',
        revision: 0,
        position: events[1]!.position + 0.5,
      };
      const report = await verifyTampered((log) => log.insert(intruder));
      expect(report.first_break).toEqual({
        position: intruder.position,
        reason: 'unexpected',
        seal: sealEvents[0]!.position,
      });
      expect(report.events_checked).toBe(9);
    });

    it('a seal whose digests were edited: the seal, "seal_edited"', async () => {
      const seal = sealEvents[1]!;
      const report = await verifyTampered((log) =>
        log.edit(seal.position, (e) => {
          const data = e.data as LogSealedData;
          return { ...e, data: { ...data, events: data.events.map(([p]) => [p, 'f'.repeat(16)]) } };
        }),
      );
      expect(report.first_break).toEqual({
        position: seal.position,
        reason: 'seal_edited',
        seal: seal.position,
      });
    });

    it('a deleted seal: the next seal breaks the chain, named before the events left unaccounted for', async () => {
      const report = await verifyTampered((log) => log.remove(sealEvents[0]!.position));
      expect(report.first_break).toEqual({
        position: sealEvents[1]!.position,
        reason: 'seal_chain_broken',
        seal: sealEvents[1]!.position,
      });
    });

    it('something other than a seal in the seals stream: "seal_unreadable"', async () => {
      // After the last seal in the stream, but inside the log up to its head.
      const forged = { ...sealEvents[2]!, revision: 3, position: sealEvents[1]!.position + 0.5, data: {} };
      const report = await verifyTampered((log) => log.insert(forged));
      expect(report.first_break).toEqual({
        position: forged.position,
        reason: 'seal_unreadable',
        seal: forged.position,
      });
    });

    it('an untouched log verifies', async () => {
      expect(await verifyTampered(() => undefined)).toMatchObject({
        ok: true,
        events_checked: 9,
        unsealed: 0,
      });
    });
  });
});
