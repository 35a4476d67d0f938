/**
 * What the KurrentDB adapter does beyond the contract, checked against the in-process fake of the
 * client (kurrentdb-fake.ts), not a server: several processes on one log, a dropped live
 * subscription, stream prefixes, what it refuses. The contract itself runs in event-store.test.ts.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { RESERVATION_MARK } from '../../shared/event-store/kurrentdb/names.ts';
import { openKurrentDbStore } from '../../shared/event-store/kurrentdb/open.ts';
import { KurrentDbEventStore } from '../../shared/event-store/kurrentdb/store.ts';
import { openStore } from '../../shared/event-store/open.ts';
import { redactConnectionString } from '../../shared/event-store/redact.ts';
import type { EventMetadata } from '../../shared/event-store/types.ts';
import { Subscriber } from '../support/subscriber.ts';
import { FakeKurrentServer } from './kurrentdb-fake.ts';

const META: EventMetadata = { actor: 'system' };
const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step().catch(() => undefined);
});

async function storeOn(server: FakeKurrentServer, streamPrefix?: string): Promise<KurrentDbEventStore> {
  const store = new KurrentDbEventStore({ client: server.client(), streamPrefix });
  await store.start();
  cleanup.push(() => store.close());
  return store;
}

function watch(store: KurrentDbEventStore, options: { after?: number; streamId?: string } = {}): Subscriber {
  const subscriber = new Subscriber(store, options);
  cleanup.push(() => subscriber.stop());
  return subscriber;
}

describe('kurrentdb adapter (over the fake client)', () => {
  it('a subscriber on one process gets what another process appends, also after the subscription dropped', async () => {
    const server = new FakeKurrentServer();
    const a = await storeOn(server);
    const b = await storeOn(server);
    const all = watch(b, { after: await b.headPosition() });
    const stream = `s-${randomUUID()}`;
    const one = watch(b, { streamId: stream });
    await all.waitForCaughtUp();
    await one.waitForCaughtUp();

    const first = randomUUID();
    await a.append(stream, [{ id: first, type: 'First', data: {} }], { metadata: META });
    await all.waitForEvents([first]);
    await one.waitForEvents([first]);

    // The node drops every subscription; events appended meanwhile must not wait for the next one.
    const versionBefore = b.changes.version;
    server.dropSubscriptions();
    const second = randomUUID();
    await a.append(stream, [{ id: second, type: 'Second', data: {} }], { metadata: META });
    await all.waitForEvents([second]);
    await one.waitForEvents([second]);
    expect(b.changes.version).toBeGreaterThan(versionBefore);
    expect(all.events.map((e) => e.id)).toEqual([first, second]);
    expect(all.markers).toHaveLength(1);
  });

  it('sees only its own streams: no system events, no id reservations, nothing outside its prefix', async () => {
    const server = new FakeKurrentServer({ systemEventEvery: 1 });
    const mine = await storeOn(server, 'mine-');
    const theirs = await storeOn(server, 'theirs-');
    const unprefixed = await storeOn(server);
    server.write('other-app-stream', [{ id: randomUUID(), type: 'Foreign', data: {} }]);

    const id = randomUUID();
    const result = await mine.append('s', [{ id, type: 'Mine', data: { n: 1 } }], { metadata: META });
    await theirs.append('s', [{ type: 'Theirs', data: {} }], { metadata: META });

    const read = await mine.readAll();
    expect(read.map((e) => [e.id, e.streamId])).toEqual([[id, 's']]);
    expect(await mine.headPosition()).toBe(result.position);
    expect((await theirs.readAll()).map((e) => e.type)).toEqual(['Theirs']);
    expect(await mine.readStream('s')).toEqual(read);
    expect(await mine.readAll({ types: ['Theirs', 'Foreign'] })).toEqual([]);
    // Without a prefix a store sees every non-system stream of the database, but never the
    // reservation streams nor system events.
    expect((await unprefixed.readAll()).map((e) => e.streamId)).toEqual([
      'other-app-stream',
      'mine-s',
      'theirs-s',
    ]);
    // The reservations exist on the server, one per event id, named after the id.
    expect(server.streams.has(`mine-${RESERVATION_MARK}${id}`)).toBe(true);
    expect(await mine.readStream(`${RESERVATION_MARK}${id}`)).toEqual([]);
  });

  it('round-trips any JSON value as data, and lower-cases the UUIDs it is given', async () => {
    const server = new FakeKurrentServer();
    const store = await storeOn(server);
    const stream = `values-${randomUUID()}`;
    const upper = randomUUID().toUpperCase();
    const values = [null, 0, -1.5, 'text', true, [], {}];
    const first = await store.append(
      stream,
      values.map((data, i) => ({ id: i === 0 ? upper : randomUUID(), type: 'Value', data })),
      { metadata: META },
    );
    const stored = await store.readStream(stream);
    expect(stored.map((e) => e.data)).toEqual(values);
    expect(stored[0]!.id).toBe(upper.toLowerCase());
    // A retry spelling the id in another case is the same append.
    const again = await store.append(
      stream,
      stored.map((e, i) => ({ id: i === 0 ? upper : e.id, type: e.type, data: e.data })),
      { metadata: META },
    );
    expect(again).toEqual(first);
  });

  it('refuses what KurrentDB cannot hold: ids that are not UUIDs, system and reserved stream names', async () => {
    const store = await storeOn(new FakeKurrentServer());
    await expect(
      store.append('s', [{ id: 'not-a-uuid', type: 'T', data: {} }], { metadata: META }),
    ).rejects.toThrow(TypeError);
    await expect(store.append('$system', [{ type: 'T', data: {} }], { metadata: META })).rejects.toThrow(
      /system or reserved/,
    );
    await expect(
      store.append(`${RESERVATION_MARK}${randomUUID()}`, [{ type: 'T', data: {} }], { metadata: META }),
    ).rejects.toThrow(/system or reserved/);
    expect(await store.readStream('$system')).toEqual([]);
    expect(await store.readAll({ streamId: '$system' })).toEqual([]);
  });

  it('refuses to misplace an event written in an explicit transaction (commit position after its prepare)', async () => {
    const server = new FakeKurrentServer();
    const unprefixed = await storeOn(server);
    const prefixed = await storeOn(server, 'mine-');
    const id = randomUUID();
    server.write('legacy', [{ id: randomUUID(), type: 'Old', data: {} }], { explicit: true });
    await prefixed.append('s', [{ id, type: 'New', data: {} }], { metadata: META });
    await expect(unprefixed.readAll()).rejects.toThrow(/explicit transaction/);
    // A store that does not see that stream pages past it.
    expect((await prefixed.readAll()).map((e) => e.id)).toEqual([id]);
  });

  it('refuses the test-only beforeCommit hook, which a server-side commit cannot honour', async () => {
    await expect(
      openKurrentDbStore({
        connectionString: 'kurrentdb://127.0.0.1:1?tls=false',
        hooks: { beforeCommit: async () => {} },
      }),
    ).rejects.toThrow(/beforeCommit/);
  });
});

describe('kurrentdb: opening through openStore with the real client', () => {
  it('needs KURRENTDB_URL', async () => {
    const saved = process.env.KURRENTDB_URL;
    delete process.env.KURRENTDB_URL;
    try {
      await expect(openStore({ kind: 'kurrentdb', dataDir: '' })).rejects.toThrow(/needs KURRENTDB_URL/);
    } finally {
      if (saved !== undefined) process.env.KURRENTDB_URL = saved;
    }
  });

  it('fails to open, naming the server without its password, when no server answers', async () => {
    const error = await openStore({
      kind: 'kurrentdb',
      dataDir: '',
      kurrentdbUrl: 'kurrentdb://admin:secret@127.0.0.1:1?tls=false',
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toBe(
      'cannot open KurrentDB at kurrentdb://admin:***@127.0.0.1:1?tls=false',
    );
    expect(String((error as Error).cause)).toMatch(/unavailable|ECONNREFUSED|connect/i);
  });

  it('redacts the password of a connection string', () => {
    expect(redactConnectionString('kurrentdb+discover://u:p%40ss@a:2113,b:2113?tls=true')).toBe(
      'kurrentdb+discover://u:***@a:2113,b:2113?tls=true',
    );
    expect(redactConnectionString('kurrentdb://localhost:2113?tls=false')).toBe(
      'kurrentdb://localhost:2113?tls=false',
    );
  });
});
