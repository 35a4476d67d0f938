/**
 * The one contract every EventStore adapter passes (docs/architecture.md, "The event store
 * contract"). `event-store.test.ts` runs it against memory, pglite, postgres and kurrentdb; a new
 * adapter only needs a factory.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { subscribe as subscribeTo } from '../../shared/event-store/subscription.ts';
import {
  DuplicateEventId,
  type EventMetadata,
  type EventStore,
  type ExpectedRevision,
  isCaughtUp,
  type NewEvent,
  type StoredEvent,
  type StoreTestHooks,
  type SubscribeOptions,
  UnstorableIdentifier,
  WrongExpectedRevision,
} from '../../shared/event-store/types.ts';
import { CommitGate } from '../support/commit-gate.ts';
import { Subscriber } from '../support/subscriber.ts';

export interface ContractStore {
  store: EventStore;
  /**
   * Whether an append to another stream can commit while one append is held open in
   * `beforeCommit` (false for PGlite: one connection, one transaction at a time).
   */
  concurrentTransactions: boolean;
  close(): Promise<void>;
}

export type ContractFactory = (hooks: StoreTestHooks) => Promise<ContractStore>;

/** What an adapter can do, known before its factory runs (so tests can be skipped visibly). */
export interface ContractCapabilities {
  /**
   * Whether the store awaits `StoreTestHooks.beforeCommit` between taking its positions and making
   * an append visible (default true). A server-side store (KurrentDB) commits inside its server, so
   * the tests built on holding an append open are reported as not run (skipped) for it.
   */
  beforeCommitHook?: boolean;
}

const META: EventMetadata = { actor: 'system' };
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A stream id no other test uses, so tests can share one store. */
const streamId = (label: string) => `${label}-${randomUUID()}`;

let counter = 0;
function event(type = 'Thing', data: unknown = { n: ++counter }): NewEvent & { id: string } {
  return { id: randomUUID(), type, data };
}
function events(count: number, type = 'Thing'): Array<NewEvent & { id: string }> {
  return Array.from({ length: count }, (_, i) => event(type, { i }));
}

async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the promise to reject, but it resolved');
}

async function expectWrongRevision(
  promise: Promise<unknown>,
  expected: { streamId: string; expected: ExpectedRevision; actual: number },
): Promise<void> {
  const error = await rejectionOf(promise);
  expect(error).toBeInstanceOf(WrongExpectedRevision);
  expect(error).toMatchObject({ name: 'WrongExpectedRevision', ...expected });
}

async function expectDuplicateId(promise: Promise<unknown>, eventId: string): Promise<void> {
  const error = await rejectionOf(promise);
  expect(error).toBeInstanceOf(DuplicateEventId);
  expect(error).toMatchObject({ name: 'DuplicateEventId', eventId });
}

const ids = (list: readonly { id: string }[]) => list.map((e) => e.id);
const revisions = (list: readonly StoredEvent[]) => list.map((e) => e.revision);
const positions = (list: readonly StoredEvent[]) => list.map((e) => e.position);
const range = (from: number, count: number) => Array.from({ length: count }, (_, i) => from + i);

function expectStrictlyIncreasing(values: readonly number[]): void {
  for (let i = 1; i < values.length; i++) {
    if (!(values[i]! > values[i - 1]!)) {
      throw new Error(`not strictly increasing at index ${i}: ${values[i - 1]} then ${values[i]}`);
    }
  }
}

/**
 * Waits until `position` is visible to `readAll`/`headPosition` and returns the head. An append
 * that has resolved is not always visible at once: on PostgreSQL any older transaction still open on
 * the server (even in another database) holds readers' snapshot xmin back, by design. Visibility is
 * a prefix of the log, so once the head reaches `position` everything up to it is readable.
 */
async function visible(target: EventStore, position: number): Promise<number> {
  for (;;) {
    const head = await target.headPosition();
    if (head >= position) return head;
    await sleep(5);
  }
}

/** Delegates to `inner` and remembers the highest position an append returned. */
function tracked(inner: EventStore): EventStore & { readonly lastPosition: number } {
  let lastPosition = 0;
  return {
    kind: inner.kind,
    get lastPosition() {
      return lastPosition;
    },
    async append(streamId, newEvents, options) {
      const result = await inner.append(streamId, newEvents, options);
      lastPosition = Math.max(lastPosition, result.position);
      return result;
    },
    readStream: (streamId, options) => inner.readStream(streamId, options),
    readAll: (options) => inner.readAll(options),
    subscribePages: (options) => inner.subscribePages(options),
    headPosition: () => inner.headPosition(),
    close: () => inner.close(),
  };
}

export function eventStoreContract(
  name: string,
  factory: ContractFactory,
  capabilities: ContractCapabilities = {},
): void {
  const hookSupported = capabilities.beforeCommitHook ?? true;
  const itWithHook = hookSupported ? it : it.skip;
  describe(`EventStore contract: ${name}`, () => {
    let opened: ContractStore | undefined;
    let store: ReturnType<typeof tracked>;
    let initial: { head: number; all: StoredEvent[] };
    const subscribers: Subscriber[] = [];

    /** A background subscriber that is always stopped after the test. */
    function subscribe(target: EventStore, options: Omit<SubscribeOptions, 'signal'> = {}): Subscriber {
      const subscriber = new Subscriber(target, options);
      subscribers.push(subscriber);
      return subscriber;
    }

    beforeAll(async () => {
      opened = await factory({});
      store = tracked(opened.store);
      initial = { head: await store.headPosition(), all: await store.readAll() };
    });
    afterEach(async () => {
      await Promise.allSettled(subscribers.splice(0).map((s) => s.stop()));
    });
    afterAll(async () => {
      await opened?.close();
    });
    /** Waits until everything appended through `store` so far is visible; returns the head. */
    const settled = () => visible(store, store.lastPosition);

    describe('append and read', () => {
      it('starts empty', async () => {
        expect(initial.head).toBe(0);
        expect(initial.all).toEqual([]);
        expect(await store.readStream(streamId('nothing'))).toEqual([]);
      });

      it('numbers a new stream from revision 0 and returns the last revision and position', async () => {
        const s = streamId('new');
        const appended = events(3);
        const result = await store.append(s, appended, { expected: 'no_stream', metadata: META });

        const stored = await store.readStream(s);
        expect(ids(stored)).toEqual(ids(appended));
        expect(revisions(stored)).toEqual([0, 1, 2]);
        expect(stored.map((e) => e.streamId)).toEqual([s, s, s]);
        expect(stored.map((e) => e.type)).toEqual(appended.map((e) => e.type));
        expect(stored.map((e) => e.data)).toEqual(appended.map((e) => e.data));
        expectStrictlyIncreasing(positions(stored));
        expect(stored[0]!.position).toBeGreaterThanOrEqual(1);
        expect(result).toEqual({ nextExpectedRevision: 2, position: stored[2]!.position });
      });

      it('continues revisions and positions on the next append', async () => {
        const s = streamId('continue');
        const first = await store.append(s, events(2), { metadata: META });
        const second = await store.append(s, events(2), { expected: 1, metadata: META });
        expect(second.nextExpectedRevision).toBe(3);
        expect(second.position).toBeGreaterThan(first.position);
        const stored = await store.readStream(s);
        expect(revisions(stored)).toEqual([0, 1, 2, 3]);
        expectStrictlyIncreasing(positions(stored));
      });

      it('generates a UUID when an event has no id', async () => {
        const s = streamId('no-id');
        await store.append(
          s,
          [
            { type: 'Anonymous', data: { a: 1 } },
            { type: 'Anonymous', data: { a: 2 } },
          ],
          {
            metadata: META,
          },
        );
        const stored = await store.readStream(s);
        expect(stored).toHaveLength(2);
        for (const e of stored) expect(e.id).toMatch(UUID);
        expect(stored[0]!.id).not.toBe(stored[1]!.id);
      });

      it('round-trips data and metadata; createdAt is an ISO 8601 UTC string', async () => {
        const s = streamId('round-trip');
        const metadata: EventMetadata = {
          actor: 'token:tok_123',
          requestId: 'req-1',
          correlationId: randomUUID(),
          causationId: randomUUID(),
        };
        const data = {
          text: 'héllo "wörld" \n ✓ 😀',
          int: 42,
          negative: -7,
          float: 1.5,
          yes: true,
          no: false,
          nothing: null,
          list: [1, 'two', { three: [3] }],
          nested: { deeper: { deepest: 'x' } },
          empty: {},
        };
        await store.append(s, [{ id: randomUUID(), type: 'RoundTrip', data }, event('Second', ['a', 1])], {
          metadata,
        });
        const bare = streamId('bare-metadata');
        await store.append(bare, [event()], { metadata: { actor: 'guest' } });
        await settled();

        for (const stored of [await store.readStream(s), await store.readAll({ streamId: s })]) {
          expect(stored).toHaveLength(2);
          expect(stored[0]!.data).toEqual(data);
          expect(stored[1]!.data).toEqual(['a', 1]);
          for (const e of stored) {
            expect(e.metadata).toEqual(metadata);
            expect(typeof e.createdAt).toBe('string');
            expect(e.createdAt).toMatch(ISO_UTC);
            expect(new Date(e.createdAt).toISOString()).toBe(e.createdAt);
          }
        }
        const [bareEvent] = await store.readStream(bare);
        expect(bareEvent!.metadata.actor).toBe('guest');
        expect(bareEvent!.metadata.requestId).toBeUndefined();
        expect(bareEvent!.metadata.correlationId).toBeUndefined();
        expect(bareEvent!.metadata.causationId).toBeUndefined();
      });

      it('returns copies: mutating a read event or the appended data does not change the store', async () => {
        const s = streamId('copies');
        const appended = event('Thing', { value: 1, list: [1] });
        await store.append(s, [appended], { metadata: META });
        (appended.data as { value: number }).value = 2;
        const [read] = await store.readStream(s);
        expect(read!.data).toEqual({ value: 1, list: [1] });
        (read!.data as { list: number[] }).list.push(2);
        read!.metadata.actor = 'mutated';
        const [again] = await store.readStream(s);
        expect(again!.data).toEqual({ value: 1, list: [1] });
        expect(again!.metadata.actor).toBe('system');
      });

      it('readStream pages with after and limit', async () => {
        const s = streamId('page-stream');
        const appended = events(5);
        await store.append(s, appended, { metadata: META });
        expect(revisions(await store.readStream(s, { after: 1 }))).toEqual([2, 3, 4]);
        expect(revisions(await store.readStream(s, { limit: 2 }))).toEqual([0, 1]);
        expect(revisions(await store.readStream(s, { after: 0, limit: 3 }))).toEqual([1, 2, 3]);
        expect(revisions(await store.readStream(s, { after: -1, limit: 1 }))).toEqual([0]);
        expect(await store.readStream(s, { after: 4 })).toEqual([]);
        expect(ids(await store.readStream(s, { after: 2 }))).toEqual(ids(appended.slice(3)));
      });

      it('readAll filters by after, limit, streamId and types, in position order', async () => {
        const base = await settled();
        const a = streamId('filter-a');
        const b = streamId('filter-b');
        const a1 = event('Created');
        const b1 = event('Created');
        const a2 = event('Renamed');
        const b2 = event('Deleted');
        const a3 = event('Deleted');
        await store.append(a, [a1], { metadata: META });
        await store.append(b, [b1], { metadata: META });
        await store.append(a, [a2], { metadata: META });
        await store.append(b, [b2], { metadata: META });
        await store.append(a, [a3], { metadata: META });
        await settled();

        const all = await store.readAll({ after: base });
        expect(ids(all)).toEqual(ids([a1, b1, a2, b2, a3]));
        expectStrictlyIncreasing(positions(all));
        expect(all[0]!.position).toBeGreaterThan(base);

        expect(ids(await store.readAll({ after: base, streamId: a }))).toEqual(ids([a1, a2, a3]));
        expect(ids(await store.readAll({ streamId: b }))).toEqual(ids([b1, b2]));
        expect(ids(await store.readAll({ after: base, types: ['Deleted'] }))).toEqual(ids([b2, a3]));
        expect(ids(await store.readAll({ after: base, types: ['Created', 'Renamed'] }))).toEqual(
          ids([a1, b1, a2]),
        );
        expect(await store.readAll({ after: base, types: [] })).toEqual([]);
        expect(await store.readAll({ after: base, types: ['NoSuchType'] })).toEqual([]);
        expect(ids(await store.readAll({ after: base, limit: 2 }))).toEqual(ids([a1, b1]));
        expect(ids(await store.readAll({ after: all[1]!.position }))).toEqual(ids([a2, b2, a3]));
        expect(ids(await store.readAll({ after: all[1]!.position, limit: 2 }))).toEqual(ids([a2, b2]));
        expect(
          ids(await store.readAll({ after: all[0]!.position, streamId: a, types: ['Deleted'], limit: 5 })),
        ).toEqual(ids([a3]));
        expect(ids(await store.readAll({ streamId: a, types: ['Created', 'Deleted'], limit: 1 }))).toEqual(
          ids([a1]),
        );
        expect(await store.readAll({ after: all[4]!.position })).toEqual([]);
        expect(await store.readAll({ streamId: streamId('none') })).toEqual([]);

        // The events readAll returns are the same events readStream returns.
        expect(await store.readAll({ after: base, streamId: a })).toEqual(await store.readStream(a));
      });

      it('headPosition is the position of the last visible event', async () => {
        const before = await settled();
        const first = await store.append(streamId('head'), events(2), { metadata: META });
        expect(first.position).toBeGreaterThan(before);
        expect(await visible(store, first.position)).toBe(first.position);
        const second = await store.append(streamId('head'), events(1), { metadata: META });
        expect(await visible(store, second.position)).toBe(second.position);
        expect(await store.headPosition()).toBe(second.position);
        const all = await store.readAll({ after: before });
        expect(all.at(-1)!.position).toBe(second.position);
      });
    });

    describe('expected revision', () => {
      async function streamWith(count: number): Promise<string> {
        const s = streamId('expected');
        await store.append(s, events(count), { expected: 'no_stream', metadata: META });
        return s;
      }

      it("'any' (and no expectation) appends to a new or an existing stream", async () => {
        const s = streamId('any');
        expect(
          (await store.append(s, [event()], { expected: 'any', metadata: META })).nextExpectedRevision,
        ).toBe(0);
        expect(
          (await store.append(s, [event()], { expected: 'any', metadata: META })).nextExpectedRevision,
        ).toBe(1);
        expect((await store.append(s, [event()], { metadata: META })).nextExpectedRevision).toBe(2);
        const fresh = streamId('default');
        expect((await store.append(fresh, [event()], { metadata: META })).nextExpectedRevision).toBe(0);
        expect(revisions(await store.readStream(s))).toEqual([0, 1, 2]);
      });

      it("'no_stream' appends to a new stream and rejects an existing one", async () => {
        const s = streamId('no-stream');
        expect(
          (await store.append(s, events(2), { expected: 'no_stream', metadata: META })).nextExpectedRevision,
        ).toBe(1);
        await expectWrongRevision(store.append(s, [event()], { expected: 'no_stream', metadata: META }), {
          streamId: s,
          expected: 'no_stream',
          actual: 1,
        });
        expect(revisions(await store.readStream(s))).toEqual([0, 1]);
      });

      it("'stream_exists' rejects a new stream and appends to an existing one", async () => {
        const s = streamId('exists');
        await expectWrongRevision(store.append(s, [event()], { expected: 'stream_exists', metadata: META }), {
          streamId: s,
          expected: 'stream_exists',
          actual: -1,
        });
        expect(await store.readStream(s)).toEqual([]);
        await store.append(s, [event()], { expected: 'no_stream', metadata: META });
        expect(
          (await store.append(s, [event()], { expected: 'stream_exists', metadata: META }))
            .nextExpectedRevision,
        ).toBe(1);
      });

      it('an exact revision appends only when it is the last revision', async () => {
        const s = await streamWith(3);
        await expectWrongRevision(store.append(s, [event()], { expected: 1, metadata: META }), {
          streamId: s,
          expected: 1,
          actual: 2,
        });
        await expectWrongRevision(store.append(s, [event()], { expected: 3, metadata: META }), {
          streamId: s,
          expected: 3,
          actual: 2,
        });
        const result = await store.append(s, [event()], { expected: 2, metadata: META });
        expect(result.nextExpectedRevision).toBe(3);
        await expectWrongRevision(store.append(s, [event()], { expected: 2, metadata: META }), {
          streamId: s,
          expected: 2,
          actual: 3,
        });
        expect(revisions(await store.readStream(s))).toEqual([0, 1, 2, 3]);
      });

      it('an exact revision rejects a stream that does not exist', async () => {
        const s = streamId('exact-new');
        await expectWrongRevision(store.append(s, [event()], { expected: 0, metadata: META }), {
          streamId: s,
          expected: 0,
          actual: -1,
        });
        expect(await store.readStream(s)).toEqual([]);
      });

      it('a rejected append stores nothing and does not move the head', async () => {
        const s = await streamWith(1);
        const head = await settled();
        const rejected = event();
        await expectWrongRevision(
          store.append(s, [rejected, event()], { expected: 'no_stream', metadata: META }),
          {
            streamId: s,
            expected: 'no_stream',
            actual: 0,
          },
        );
        expect(await store.headPosition()).toBe(head);
        expect(await store.readAll({ after: head })).toEqual([]);
        expect(revisions(await store.readStream(s))).toEqual([0]);
        // The rejected id was not kept: it can be appended for real now.
        const result = await store.append(s, [rejected], { expected: 0, metadata: META });
        expect(result.nextExpectedRevision).toBe(1);
      });

      it('an empty append only checks the expected revision', async () => {
        const s = streamId('empty');
        expect(
          (await store.append(s, [], { expected: 'no_stream', metadata: META })).nextExpectedRevision,
        ).toBe(-1);
        expect(await store.readStream(s)).toEqual([]);
        const last = await store.append(s, events(2), { metadata: META });
        expect(await store.append(s, [], { expected: 1, metadata: META })).toEqual(last);
        await expectWrongRevision(store.append(s, [], { expected: 'no_stream', metadata: META }), {
          streamId: s,
          expected: 'no_stream',
          actual: 1,
        });
      });
    });

    describe('idempotent appends', () => {
      it('re-appending the same events returns the same result and stores nothing new', async () => {
        const s = streamId('retry');
        const batch = events(3);
        const first = await store.append(s, batch, { expected: 'no_stream', metadata: META });
        const head = await settled();
        const again = await store.append(s, batch, { expected: 'no_stream', metadata: META });
        expect(again).toEqual(first);
        expect(ids(await store.readStream(s))).toEqual(ids(batch));
        expect(await store.headPosition()).toBe(head);
        expect(await store.readAll({ after: head })).toEqual([]);
      });

      it('a retry after the stream moved on still returns the original result', async () => {
        const s = streamId('retry-later');
        const e0 = event();
        const first = await store.append(s, [e0], { expected: 'no_stream', metadata: META });
        await store.append(s, events(2), { expected: 0, metadata: META });
        // The retry carries the expectation of the original call, which no longer matches.
        expect(await store.append(s, [e0], { expected: 'no_stream', metadata: META })).toEqual(first);
        expect(await store.append(s, [e0], { expected: 0, metadata: META })).toEqual(first);
        expect(await store.append(s, [e0], { metadata: META })).toEqual(first);
        const stored = await store.readStream(s);
        expect(revisions(stored)).toEqual([0, 1, 2]);
        expect(stored.filter((e) => e.id === e0.id)).toHaveLength(1);
      });

      it('an id stored in one stream cannot be appended to another', async () => {
        const s = streamId('owner');
        const other = streamId('thief');
        const e = event();
        await store.append(s, [e], { metadata: META });
        await expectDuplicateId(store.append(other, [e], { metadata: META }), e.id);
        await expectDuplicateId(store.append(other, [event(), e], { metadata: META }), e.id);
        expect(await store.readStream(other)).toEqual([]);
        await settled();
        expect((await store.readAll({ after: initial.head })).filter((x) => x.id === e.id)).toHaveLength(1);
      });

      it('an id repeated inside one append is rejected and nothing is stored', async () => {
        const s = streamId('twice');
        const e = event();
        await expectDuplicateId(
          store.append(s, [e, { ...e, data: { other: true } }], { metadata: META }),
          e.id,
        );
        expect(await store.readStream(s)).toEqual([]);
      });

      it('concurrent retries of one append store it once and both get the same result', async () => {
        const s = streamId('concurrent-retry');
        const batch = events(2);
        const results = await Promise.all([
          store.append(s, batch, { expected: 'no_stream', metadata: META }),
          store.append(s, batch, { expected: 'no_stream', metadata: META }),
          store.append(s, batch, { expected: 'no_stream', metadata: META }),
        ]);
        expect(results[1]).toEqual(results[0]);
        expect(results[2]).toEqual(results[0]);
        expect(ids(await store.readStream(s))).toEqual(ids(batch));
      });

      it('concurrent appends of one id to two streams: exactly one stores it', async () => {
        const e = event();
        const s1 = streamId('race-1');
        const s2 = streamId('race-2');
        const outcomes = await Promise.allSettled([
          store.append(s1, [e], { metadata: META }),
          store.append(s2, [e], { metadata: META }),
        ]);
        expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
        const rejected = outcomes.find((o) => o.status === 'rejected');
        expect(rejected?.reason).toBeInstanceOf(DuplicateEventId);
        expect(rejected?.reason).toMatchObject({ eventId: e.id });
        const stored = [...(await store.readStream(s1)), ...(await store.readStream(s2))];
        expect(ids(stored)).toEqual([e.id]);
        await settled();
        expect((await store.readAll({ after: initial.head })).filter((x) => x.id === e.id)).toHaveLength(1);
      });
    });

    describe('any text JSON allows', () => {
      // A NUL, lone surrogates and a literal backslash-u: valid JSON that PostgreSQL's jsonb refuses
      // (or, the last one, that a careless escape would turn into a NUL).
      const awkward = ['\u0000', '\ud800', '\udc00x', '\\u0000', 'a\u0000b\ud800'];
      const nested = Object.fromEntries(awkward.map((text, i) => [text, { [`k${i}${text}`]: [text, i] }]));
      const awkwardData: unknown[] = [
        { ...nested, list: awkward, deeper: { again: nested } },
        awkward.join(''),
        awkward,
        // Shaped like what an adapter may wrap awkward JSON in: must come back as it went in.
        { $studio_json: '{"a":1}' },
        { $studio_json: '\u0000' },
        { $studio_json: { nested } },
      ];
      const awkwardMetadata = {
        actor: 'token:\u0000',
        requestId: '\ud800',
        correlationId: '\udc00x',
        causationId: '\\u0000',
        extra: nested,
      } as EventMetadata;
      const view = (list: readonly StoredEvent[]) =>
        list.map((e) => ({ id: e.id, type: e.type, data: e.data, metadata: e.metadata }));

      it('data and metadata come back identical from readStream, readAll and subscribe', async () => {
        const s = streamId('awkward');
        const appended = awkwardData.map((data) => event('Awkward', data));
        const expected = appended.map((e) => ({ ...e, metadata: awkwardMetadata }));
        const first = await store.append(s, appended, { expected: 'no_stream', metadata: awkwardMetadata });
        await settled();

        expect(view(await store.readStream(s))).toEqual(expected);
        expect(view(await store.readAll({ streamId: s }))).toEqual(expected);
        expect(view(await store.readAll({ after: initial.head, types: ['Awkward'] }))).toEqual(expected);
        const subscriber = subscribe(store, { streamId: s });
        await subscriber.waitForEvents(ids(appended));
        expect(view(subscriber.events)).toEqual(expected);

        // Re-appending the same events is still recognised as the same append.
        const again = await store.append(s, appended, { expected: 'no_stream', metadata: awkwardMetadata });
        expect(again).toEqual(first);
        expect(view(await store.readStream(s))).toEqual(expected);
      });

      it('a stream id or an event type holding NUL or a lone surrogate is refused, nothing stored', async () => {
        const head = await settled();
        for (const bad of ['a\u0000b', 'x\ud800', '\udc00', 'y\udbff\udbff']) {
          const badStream = `${streamId('bad')}${bad}`;
          const refusals = [
            () => store.append(badStream, [event()], { metadata: META }),
            () => store.append(streamId('good'), [event(bad)], { metadata: META }),
            () => store.readStream(badStream),
            () => store.readAll({ streamId: badStream }),
            () => store.readAll({ types: ['Thing', bad] }),
          ];
          for (const refusal of refusals) {
            const error = await rejectionOf(refusal());
            expect(error).toBeInstanceOf(UnstorableIdentifier);
            expect((error as Error).message).toContain(JSON.stringify(bad).slice(1, -1));
          }
          const subscriber = subscribe(store, { streamId: badStream });
          expect(await rejectionOf(subscriber.done)).toBeInstanceOf(UnstorableIdentifier);
        }
        // A pair of surrogates is one character (an emoji): a valid name.
        const emoji = streamId('emoji-😀');
        await store.append(emoji, [event('Thing😀')], { metadata: META });
        expect((await store.readStream(emoji)).map((e) => e.type)).toEqual(['Thing😀']);
        await settled();
        expect((await store.readAll({ after: head })).map((e) => e.streamId)).toEqual([emoji]);
      });
    });

    describe('concurrent appends', () => {
      it('two appends expecting the same revision: exactly one wins', async () => {
        const s = streamId('race');
        await store.append(s, events(2), { expected: 'no_stream', metadata: META });
        const x = event('X');
        const y = event('Y');
        const outcomes = await Promise.allSettled([
          store.append(s, [x], { expected: 1, metadata: META }),
          store.append(s, [y], { expected: 1, metadata: META }),
        ]);
        const won = outcomes.filter((o) => o.status === 'fulfilled');
        const lost = outcomes.filter((o) => o.status === 'rejected');
        expect(won).toHaveLength(1);
        expect(lost).toHaveLength(1);
        expect(won[0]!.value.nextExpectedRevision).toBe(2);
        expect(lost[0]!.reason).toBeInstanceOf(WrongExpectedRevision);
        expect(lost[0]!.reason).toMatchObject({ streamId: s, expected: 1, actual: 2 });
        const winner = outcomes[0]!.status === 'fulfilled' ? x : y;
        const stored = await store.readStream(s);
        expect(revisions(stored)).toEqual([0, 1, 2]);
        expect(stored[2]!.id).toBe(winner.id);
      });

      it("many appends creating one stream with 'no_stream': exactly one wins", async () => {
        const s = streamId('create-race');
        const batches = Array.from({ length: 8 }, () => events(2));
        const outcomes = await Promise.allSettled(
          batches.map((batch) => store.append(s, batch, { expected: 'no_stream', metadata: META })),
        );
        const winners = outcomes.flatMap((o, i) => (o.status === 'fulfilled' ? [i] : []));
        expect(winners).toHaveLength(1);
        for (const outcome of outcomes) {
          if (outcome.status === 'fulfilled') {
            expect(outcome.value.nextExpectedRevision).toBe(1);
            continue;
          }
          expect(outcome.reason).toBeInstanceOf(WrongExpectedRevision);
          expect(outcome.reason).toMatchObject({ streamId: s, expected: 'no_stream', actual: 1 });
        }
        expect(ids(await store.readStream(s))).toEqual(ids(batches[winners[0]!]!));
      });

      it("many concurrent 'any' appends to one stream all land, each contiguous, in position order", async () => {
        // A new stream (writers race to create it), then existing ones (writers queue on its lock):
        // either way the stream's revisions must follow global positions.
        const s = streamId('any-race');
        const batches: Array<Array<NewEvent & { id: string }>> = [];
        const results = [];
        for (let round = 0; round < 4; round++) {
          const more = Array.from({ length: 16 }, (_, i) => events(2, `Round${round}Batch${i}`));
          batches.push(...more);
          results.push(
            ...(await Promise.all(more.map((batch) => store.append(s, batch, { metadata: META })))),
          );
        }
        const stored = await store.readStream(s);
        expect(revisions(stored)).toEqual(range(0, 128));
        expectStrictlyIncreasing(positions(stored));
        for (const [i, batch] of batches.entries()) {
          const at = stored.findIndex((e) => e.id === batch[0]!.id);
          expect(ids(stored.slice(at, at + 2))).toEqual(ids(batch));
          expect(results[i]).toEqual({ nextExpectedRevision: at + 1, position: stored[at + 1]!.position });
        }
        // The global order agrees with the stream's order.
        await settled();
        expect(await store.readAll({ streamId: s })).toEqual(stored);
      });
    });

    describe('many streams at once (a store may commit them together)', () => {
      it('every append keeps its own expected revision, idempotency and outcome', async () => {
        const existing = streamId('mixed-existing');
        await store.append(existing, events(2), { expected: 'no_stream', metadata: META });
        const stored = event();
        const storedIn = streamId('mixed-stored');
        const first = await store.append(storedIn, [stored], { metadata: META });
        const fresh = Array.from({ length: 12 }, (_, i) => ({
          s: streamId(`mixed-${i}`),
          batch: events(1 + (i % 3)),
        }));

        const outcomes = await Promise.allSettled([
          ...fresh.map(({ s, batch }) => store.append(s, batch, { expected: 'no_stream', metadata: META })),
          store.append(existing, [event()], { expected: 0, metadata: META }),
          store.append(existing, [event()], { expected: 'no_stream', metadata: META }),
          store.append(storedIn, [stored], { expected: 'no_stream', metadata: META }),
          store.append(streamId('mixed-clash'), [stored], { metadata: META }),
          store.append(existing, [], { expected: 1, metadata: META }),
          store.append(streamId('mixed-missing'), [event()], { expected: 'stream_exists', metadata: META }),
        ]);
        const [wrongRevision, wrongNoStream, retry, clash, empty, missing] = outcomes.slice(fresh.length);

        expect(wrongRevision).toMatchObject({
          status: 'rejected',
          reason: { streamId: existing, actual: 1 },
        });
        expect(wrongNoStream).toMatchObject({
          status: 'rejected',
          reason: { expected: 'no_stream', actual: 1 },
        });
        expect(retry).toEqual({ status: 'fulfilled', value: first });
        expect(clash).toMatchObject({ status: 'rejected', reason: { eventId: stored.id } });
        expect((clash as PromiseRejectedResult).reason).toBeInstanceOf(DuplicateEventId);
        expect(empty).toMatchObject({ status: 'fulfilled', value: { nextExpectedRevision: 1 } });
        expect((missing as PromiseRejectedResult).reason).toBeInstanceOf(WrongExpectedRevision);

        const seen = new Set<number>();
        for (const [i, { s, batch }] of fresh.entries()) {
          const outcome = outcomes[i]!;
          if (outcome.status !== 'fulfilled')
            throw new Error(`append ${i} failed: ${String(outcome.reason)}`);
          const inStream = await store.readStream(s);
          expect(ids(inStream)).toEqual(ids(batch));
          expect(outcome.value).toEqual({
            nextExpectedRevision: batch.length - 1,
            position: inStream.at(-1)!.position,
          });
          for (const e of inStream) seen.add(e.position);
        }
        // Every position is its own, and the log holds each event once.
        expect(seen.size).toBe(fresh.reduce((n, f) => n + f.batch.length, 0));
        await settled();
        const fromLog = (await store.readAll({ after: first.position })).filter((e) => seen.has(e.position));
        expect(fromLog).toHaveLength(seen.size);
        expect((await store.readStream(existing)).length).toBe(2);
      });
    });

    describe('subscribe', () => {
      it('whole log: catch-up, exactly one $caught_up, then live events; ends cleanly on abort', async () => {
        const base = await settled();
        const s1 = streamId('sub-all');
        const s2 = streamId('sub-all');
        await store.append(s1, events(2), { metadata: META });
        await store.append(s2, events(1), { metadata: META });
        await settled();
        const catchUp = await store.readAll({ after: base });
        expect(catchUp).toHaveLength(3);

        const subscriber = subscribe(store, { after: base });
        await subscriber.waitForCaughtUp();
        expect(subscriber.items).toEqual([
          ...catchUp,
          { type: '$caught_up', position: catchUp[2]!.position },
        ]);

        const live1 = await store.append(s1, events(2), { metadata: META });
        await subscriber.waitFor((items) =>
          items.some((i) => !isCaughtUp(i) && i.position === live1.position),
        );
        const live2 = await store.append(s2, events(1), { metadata: META });
        await subscriber.waitFor((items) =>
          items.some((i) => !isCaughtUp(i) && i.position === live2.position),
        );

        await subscriber.stop();
        await settled();
        const everything = await store.readAll({ after: base });
        expect(everything).toHaveLength(6);
        expect(subscriber.items).toEqual([
          ...catchUp,
          { type: '$caught_up', position: catchUp[2]!.position },
          ...everything.slice(3),
        ]);
        expect(subscriber.markers).toHaveLength(1);
        expect(subscriber.ended).toBe(true);
      });

      it('in pages: the same events as one by one, no page empty, then $caught_up; categories too', async () => {
        const base = await settled();
        const tag = randomUUID().slice(0, 8);
        await store.append(`paged${tag}-1`, events(3), { metadata: META });
        await store.append(`other${tag}-1`, events(2), { metadata: META });
        await store.append(`paged${tag}-2`, events(2), { metadata: META });
        const head = await settled();
        const untilCaughtUp = async (options: Omit<SubscribeOptions, 'signal'>) => {
          const controller = new AbortController();
          const pages: StoredEvent[][] = [];
          try {
            for await (const page of store.subscribePages({ ...options, signal: controller.signal })) {
              if (isCaughtUp(page)) {
                if (page.position >= head) return { pages, caughtUp: page.position };
                continue;
              }
              pages.push([...page.events]);
            }
            throw new Error('ended before catching up');
          } finally {
            controller.abort();
          }
        };

        const all = await untilCaughtUp({ after: base, batchSize: 2 });
        expect(all.pages.every((page) => page.length > 0)).toBe(true);
        expect(all.pages.flat()).toEqual(await store.readAll({ after: base }));
        expect(all.caughtUp).toBe(head);

        const some = await untilCaughtUp({ after: base, batchSize: 2, categories: [`paged${tag}`] });
        expect(some.pages.every((page) => page.length > 0)).toBe(true);
        expect(some.pages.flat().map((e) => e.streamId)).toEqual([
          ...Array(3).fill(`paged${tag}-1`),
          ...Array(2).fill(`paged${tag}-2`),
        ]);
      });

      it('some categories: only their streams, $caught_up through what was read, other commits pass by', async () => {
        const base = await settled();
        // Categories no other test writes: a stream's category is its id up to the first '-'.
        const tag = randomUUID().slice(0, 8);
        const [wanted, also, other] = [`wanted${tag}`, `also${tag}`, `other${tag}`];
        await store.append(`${wanted}-1`, events(2), { metadata: META });
        await store.append(`${other}-1`, events(1), { metadata: META });
        await store.append(also, events(1), { metadata: META });
        const caughtUpTo = await settled();
        const subscriber = subscribe(store, { after: base, categories: [wanted, also] });
        await subscriber.waitFor((items) => items.some((i) => isCaughtUp(i) && i.position >= caughtUpTo));
        expect(subscriber.events.map((e) => e.streamId)).toEqual([`${wanted}-1`, `${wanted}-1`, also]);

        // Another category's commit is not delivered; the subscription's position passes it.
        const skipped = await store.append(`${other}-2`, events(1), { metadata: META });
        await subscriber.waitFor((items) =>
          items.some((i) => isCaughtUp(i) && i.position >= skipped.position),
        );
        const live = await store.append(`${wanted}-2`, events(1), { metadata: META });
        await subscriber.waitFor((items) =>
          items.some((i) => !isCaughtUp(i) && i.position === live.position),
        );
        expect(subscriber.events.map((e) => e.streamId)).toEqual([
          `${wanted}-1`,
          `${wanted}-1`,
          also,
          `${wanted}-2`,
        ]);
        const positions = subscriber.items.map((i) => i.position);
        expect(positions).toEqual([...positions].sort((a, b) => a - b));
      });

      it('whole log from the start delivers everything readAll returns', async () => {
        const s = streamId('sub-start');
        await store.append(s, events(2), { metadata: META });
        await settled();
        const all = await store.readAll();
        const subscriber = subscribe(store);
        await subscriber.waitForCaughtUp();
        expect(subscriber.events).toEqual(all);
        expect(subscriber.markers).toEqual([{ type: '$caught_up', position: all.at(-1)!.position }]);
      });

      it('one stream: positions are revisions; catch-up, $caught_up, live; other streams are not delivered', async () => {
        const s = streamId('sub-stream');
        const other = streamId('sub-other');
        await store.append(s, events(3), { metadata: META });
        await store.append(other, events(2), { metadata: META });

        const fromStart = subscribe(store, { streamId: s });
        const fromRevision1 = subscribe(store, { streamId: s, after: 1 });
        await fromStart.waitForCaughtUp();
        await fromRevision1.waitForCaughtUp();
        expect(fromStart.items).toEqual([
          ...(await store.readStream(s)),
          { type: '$caught_up', position: 2 },
        ]);
        expect(fromRevision1.items).toEqual([
          ...(await store.readStream(s, { after: 1 })),
          { type: '$caught_up', position: 2 },
        ]);

        await store.append(other, events(1), { metadata: META });
        const live = events(2);
        await store.append(s, live, { expected: 2, metadata: META });
        await fromStart.waitForEvents(ids(live));
        await fromRevision1.waitForEvents(ids(live));
        await fromStart.stop();
        await fromRevision1.stop();

        const stored = await store.readStream(s);
        expect(fromStart.items).toEqual([
          ...stored.slice(0, 3),
          { type: '$caught_up', position: 2 },
          ...stored.slice(3),
        ]);
        expect(fromRevision1.items).toEqual([
          stored[2],
          { type: '$caught_up', position: 2 },
          ...stored.slice(3),
        ]);
        expect(revisions(fromStart.events)).toEqual([0, 1, 2, 3, 4]);
      });

      it('a stream that does not exist yet: $caught_up at -1, then its first events live', async () => {
        const s = streamId('sub-future');
        const subscriber = subscribe(store, { streamId: s });
        await subscriber.waitForCaughtUp();
        expect(subscriber.items).toEqual([{ type: '$caught_up', position: -1 }]);
        const first = events(2);
        await store.append(s, first, { expected: 'no_stream', metadata: META });
        await subscriber.waitForEvents(ids(first));
        await subscriber.stop();
        expect(subscriber.items).toEqual([
          { type: '$caught_up', position: -1 },
          ...(await store.readStream(s)),
        ]);
      });

      it('an empty log range: $caught_up at the starting position', async () => {
        const head = await settled();
        const subscriber = subscribe(store, { after: head });
        await subscriber.waitForCaughtUp();
        expect(subscriber.items).toEqual([{ type: '$caught_up', position: head }]);
      });

      it('catch-up across batch boundaries delivers each event once', async () => {
        const base = await settled();
        const s = streamId('sub-batches');
        await store.append(s, events(4), { metadata: META });
        await settled();
        const logSubscriber = subscribe(store, { after: base, batchSize: 2 });
        const streamSubscriber = subscribe(store, { streamId: s, batchSize: 2 });
        const oddSubscriber = subscribe(store, { streamId: s, batchSize: 3 });
        await logSubscriber.waitForCaughtUp();
        await streamSubscriber.waitForCaughtUp();
        await oddSubscriber.waitForCaughtUp();
        const stored = await store.readStream(s);
        expect(logSubscriber.items).toEqual([
          ...stored,
          { type: '$caught_up', position: stored[3]!.position },
        ]);
        expect(streamSubscriber.items).toEqual([...stored, { type: '$caught_up', position: 3 }]);
        expect(oddSubscriber.items).toEqual([...stored, { type: '$caught_up', position: 3 }]);

        const live = events(5);
        await store.append(s, live, { metadata: META });
        await logSubscriber.waitForEvents(ids(live));
        await streamSubscriber.waitForEvents(ids(live));
        await oddSubscriber.waitForEvents(ids(live));
        const all = await store.readStream(s);
        expect(logSubscriber.events).toEqual(all);
        expect(streamSubscriber.events).toEqual(all);
        expect(oddSubscriber.events).toEqual(all);
      });

      it('ends cleanly when aborted while waiting for live events', async () => {
        const s = streamId('sub-abort-live');
        await store.append(s, events(1), { metadata: META });
        const logSubscriber = subscribe(store, { after: await settled() });
        const streamSubscriber = subscribe(store, { streamId: s });
        await logSubscriber.waitForCaughtUp();
        await streamSubscriber.waitForCaughtUp();

        await logSubscriber.stop();
        await streamSubscriber.stop();
        expect(logSubscriber.ended).toBe(true);
        expect(streamSubscriber.ended).toBe(true);

        await store.append(s, events(1), { metadata: META });
        expect(logSubscriber.items).toHaveLength(1);
        expect(streamSubscriber.items).toHaveLength(2);
      });

      it('ends cleanly when aborted during catch-up, yielding nothing more', async () => {
        const base = await settled();
        const s = streamId('sub-abort-catch-up');
        await store.append(s, events(6), { metadata: META });
        await settled();
        for (const options of [{ after: base }, { streamId: s }]) {
          const controller = new AbortController();
          const got: unknown[] = [];
          for await (const item of subscribeTo(store, {
            ...options,
            batchSize: 2,
            signal: controller.signal,
          })) {
            got.push(item);
            if (got.length === 3) controller.abort();
          }
          expect(got).toHaveLength(3);
        }
      });

      it('an already aborted signal yields nothing', async () => {
        const s = streamId('sub-pre-aborted');
        await store.append(s, events(1), { metadata: META });
        const got: unknown[] = [];
        for await (const item of subscribeTo(store, { signal: AbortSignal.abort() })) got.push(item);
        for await (const item of subscribeTo(store, { streamId: s, signal: AbortSignal.abort() }))
          got.push(item);
        expect(got).toEqual([]);
      });
    });

    describe('a long stream (10,000 events)', () => {
      const total = 10_000;
      const pageSize = 1_000;
      let s: string;
      let base: number;

      beforeAll(async () => {
        s = streamId('long');
        base = await settled();
        for (let revision = -1; revision < total - 1; revision += pageSize) {
          const batch = Array.from({ length: pageSize }, (_, i) => event('Tick', { n: revision + 1 + i }));
          const result = await store.append(s, batch, {
            expected: revision === -1 ? 'no_stream' : revision,
            metadata: META,
          });
          expect(result.nextExpectedRevision).toBe(revision + pageSize);
        }
        await settled();
      });

      it('pages through the stream with readStream after/limit', async () => {
        const seen: StoredEvent[] = [];
        let after = -1;
        for (;;) {
          const page = await store.readStream(s, { after, limit: pageSize });
          if (page.length === 0) break;
          expect(page.length).toBeLessThanOrEqual(pageSize);
          seen.push(...page);
          after = page.at(-1)!.revision;
        }
        expect(seen).toHaveLength(total);
        expect(revisions(seen)).toEqual(range(0, total));
        expect(seen.map((e) => (e.data as { n: number }).n)).toEqual(range(0, total));
        expectStrictlyIncreasing(positions(seen));
      });

      it('pages through the log with readAll by position', async () => {
        const seen: StoredEvent[] = [];
        let after = base;
        for (;;) {
          const page = await store.readAll({ after, limit: pageSize });
          if (page.length === 0) break;
          expect(page.length).toBeLessThanOrEqual(pageSize);
          seen.push(...page);
          after = page.at(-1)!.position;
        }
        expectStrictlyIncreasing(positions(seen));
        expect(revisions(seen.filter((e) => e.streamId === s))).toEqual(range(0, total));
        expect(after).toBe(await store.headPosition());

        const byStream: StoredEvent[] = [];
        after = 0;
        for (;;) {
          const page = await store.readAll({ after, limit: pageSize, streamId: s });
          if (page.length === 0) break;
          byStream.push(...page);
          after = page.at(-1)!.position;
        }
        expect(revisions(byStream)).toEqual(range(0, total));
      });

      it('a stream subscription catches up on all of it in order', async () => {
        const subscriber = subscribe(store, { streamId: s });
        await subscriber.waitForCaughtUp();
        expect(revisions(subscriber.events)).toEqual(range(0, total));
        expect(subscriber.markers).toEqual([{ type: '$caught_up', position: total - 1 }]);
      });
    });

    const late = hookSupported
      ? 'appends that commit late'
      : 'appends that commit late (not run: this store commits on its server and cannot hold an append open in beforeCommit)';
    describe(late, () => {
      // Every test here holds an append open in beforeCommit: skipped (not run) without the hook.
      const it = itWithHook;
      const gate = new CommitGate();
      let held: ContractStore | undefined;
      let hstore: EventStore;

      beforeAll(async () => {
        if (!hookSupported) return;
        held = await factory(gate.hooks);
        hstore = held.store;
      });
      afterAll(async () => {
        await Promise.allSettled(subscribers.splice(0).map((s) => s.stop()));
        await held?.close();
      });

      it('readers never skip an event that commits after a later position is visible', async () => {
        const a = streamId('late-a');
        const b = streamId('late-b');
        const eventA = event('A');
        const eventB = event('B');
        const seed = await hstore.append(streamId('seed'), events(1), { metadata: META });
        const before = await visible(hstore, seed.position);
        const live = subscribe(hstore, { after: before });
        await live.waitForCaughtUp();

        const holdA = gate.hold(a);
        const appendA = hstore.append(a, [eventA], { expected: 'no_stream', metadata: META });
        await holdA.entered;
        const appendB = hstore.append(b, [eventB], { expected: 'no_stream', metadata: META });

        let cursor = before;
        if (held!.concurrentTransactions) {
          // B has committed, but A holds a lower position and may still commit: B must stay hidden.
          const resultB = await appendB;
          expect(await hstore.headPosition()).toBe(before);
          expect(await hstore.readAll({ after: before })).toEqual([]);
          expect(await hstore.readAll({ after: before, streamId: b })).toEqual([]);
          expect(live.events).toEqual([]);
          // Its own stream may show it already: revisions of one stream cannot be skipped.
          const streamB = await hstore.readStream(b);
          expect(streamB.every((e) => e.id === eventB.id && e.position === resultB.position)).toBe(true);
          cursor = await hstore.headPosition();
        }

        holdA.release();
        const resultA = await appendA;
        const resultB = await appendB;
        expect(resultA.position).toBeLessThan(resultB.position);
        expect(await visible(hstore, resultB.position)).toBe(resultB.position);

        // A poller whose cursor was taken before the release gets A, exactly once, then B.
        const polled = await hstore.readAll({ after: cursor });
        expect(ids(polled)).toEqual([eventA.id, eventB.id]);
        expect(await hstore.headPosition()).toBe(resultB.position);

        // The live subscriber gets B only after A.
        await live.waitForEvents([eventB.id]);
        expect(ids(live.events)).toEqual([eventA.id, eventB.id]);
        expect(positions(live.events)).toEqual([resultA.position, resultB.position]);
        await live.stop();
        expect(ids(live.events)).toEqual([eventA.id, eventB.id]);
        expect(live.markers).toHaveLength(1);
      });

      it('an append that fails after taking its positions hides nothing and stalls no subscriber', async () => {
        const a = streamId('failed-a');
        const b = streamId('failed-b');
        const eventA = event('A');
        const eventB = event('B');
        const before = await hstore.headPosition();
        const live = subscribe(hstore, { after: before });
        await live.waitForCaughtUp();

        const holdA = gate.hold(a);
        const appendA = hstore.append(a, [eventA], { metadata: META });
        await holdA.entered;
        const appendB = hstore.append(b, [eventB], { metadata: META });
        if (held!.concurrentTransactions) {
          await appendB;
          expect(await hstore.headPosition()).toBe(before);
          expect(await hstore.readAll({ after: before })).toEqual([]);
          expect(live.events).toEqual([]);
        }

        const failure = new Error('crash before commit');
        holdA.fail(failure);
        expect(await rejectionOf(appendA)).toBe(failure);
        const resultB = await appendB;
        expect(await visible(hstore, resultB.position)).toBe(resultB.position);

        await live.waitForEvents([eventB.id]);
        expect(ids(live.events)).toEqual([eventB.id]);
        expect(ids(await hstore.readAll({ after: before }))).toEqual([eventB.id]);
        expect(await hstore.headPosition()).toBe(resultB.position);
        expect(await hstore.readStream(a)).toEqual([]);
        // Nothing of A was kept: the same append succeeds now, as a brand-new stream.
        expect(
          (await hstore.append(a, [eventA], { expected: 'no_stream', metadata: META })).nextExpectedRevision,
        ).toBe(0);
        await live.waitForEvents([eventA.id]);
        expect(ids(live.events)).toEqual([eventB.id, eventA.id]);
      });
    });
  });
}
