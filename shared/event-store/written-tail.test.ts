import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from './migrations.ts';
import { PGLITE_SETTINGS } from './pglite.ts';
import { startPgliteThread } from './pglite-thread.ts';
import type { SqlDriver } from './sql-driver.ts';
import { SqlEventStore } from './sql-store.ts';
import type { StoredEvent } from './types.ts';
import { WrittenTail } from './written-tail.ts';

const event = (position: number): StoredEvent => ({
  id: `e-${position}`,
  streamId: 's',
  revision: position,
  position,
  type: 'Noted',
  data: {},
  metadata: { actor: 'test' },
  createdAt: '2026-11-24T00:00:00.000Z',
});
const positions = (events: StoredEvent[] | undefined) => events?.map((e) => e.position);

describe('the tail of events a sole writer wrote', () => {
  const added = (tail: WrittenTail, ...events: [StoredEvent, number][]) => {
    for (const [e, size] of events) tail.add(e, size);
  };

  it('answers reads after its start, from the first event past the cursor, up to the limit', () => {
    const tail = new WrittenTail(10);
    added(tail, [event(12), 10], [event(15), 10], [event(16), 10], [event(20), 10]);
    expect(positions(tail.read(10))).toEqual([12, 15, 16, 20]);
    expect(positions(tail.read(12, 2))).toEqual([15, 16]);
    expect(positions(tail.read(13))).toEqual([15, 16, 20]);
    expect(positions(tail.read(20))).toEqual([]);
    expect(tail.read(9)).toBeUndefined();
  });

  it('lets the older events go past twice what it keeps, and no longer answers reads from before', () => {
    const tail = new WrittenTail(0, { events: 2, bytes: 1_000 });
    added(tail, [event(1), 10], [event(2), 10], [event(3), 10]);
    expect(positions(tail.read(0))).toEqual([1, 2, 3]);
    added(tail, [event(4), 10]);
    expect(tail.read(0)).toBeUndefined();
    expect(tail.read(1)).toBeUndefined();
    expect(positions(tail.read(2))).toEqual([3, 4]);
  });

  it('holds large events briefly: past twice its bytes, it keeps only what fits in them', () => {
    const tail = new WrittenTail(0, { events: 100, bytes: 1_000 });
    added(tail, [event(1), 400], [event(2), 400], [event(3), 400]);
    expect(positions(tail.read(0))).toEqual([1, 2, 3]);
    added(tail, [event(4), 900]);
    expect(tail.read(2)).toBeUndefined();
    expect(positions(tail.read(3))).toEqual([4]);
  });
});

describe('a PGlite store reading back what it wrote', () => {
  let driver: SqlDriver;
  let store: SqlEventStore;
  const reads: string[] = [];

  beforeAll(async () => {
    const inner = await startPgliteThread(undefined, PGLITE_SETTINGS);
    await migrate(inner);
    driver = {
      ...inner,
      query: async <Row>(sql: string, params?: unknown[]) => {
        if (sql.startsWith('SELECT position')) reads.push(sql);
        return inner.query<Row>(sql, params);
      },
    };
    store = new SqlEventStore('pglite', driver, { batchesInFlight: 1, soleWriterAfter: 0 });
  });
  afterAll(() => store.close());

  it('answers whole-log reads with the events it appended, exactly as the database has them', async () => {
    const awkward = { text: 'nul \u0000 and lone \ud800', nested: { z: 1, a: [1.5, null, true] }, é: 'ü' };
    // Appends in one turn go together in one batch; their positions continue across streams.
    await Promise.all([
      store.append(
        'a-1',
        [
          { type: 'One', data: { n: 1 } },
          { type: 'Two', data: awkward },
        ],
        {
          metadata: { actor: 'test', correlationId: 'c-1' },
        },
      ),
      store.append('b-1', [{ type: 'One', data: { n: 2 } }], { metadata: { actor: 'test' } }),
    ]);
    await store.append('a-1', [{ type: 'Two', data: [] }], { expected: 1, metadata: { actor: 'test' } });
    // An append refused stores nothing and leaves no trace in the tail.
    await expect(
      store.append('a-1', [{ type: 'One', data: {} }], { expected: 0, metadata: { actor: 'test' } }),
    ).rejects.toThrow();

    reads.length = 0;
    const fromTail = await store.readAll({ after: 0 });
    expect(reads).toEqual([]);
    // A filtered read always goes to the database: the same events, field for field.
    const fromDatabase = await store.readAll({ after: 0, types: ['One', 'Two'] });
    expect(reads).toHaveLength(1);
    expect(fromTail).toEqual(fromDatabase);
    expect(fromTail.map((e) => [e.streamId, e.revision, e.type])).toEqual([
      ['a-1', 0, 'One'],
      ['a-1', 1, 'Two'],
      ['b-1', 0, 'One'],
      ['a-1', 2, 'Two'],
    ]);
    expect(fromTail[1]?.data).toEqual(awkward);
    expect(fromTail[0]?.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);

    const [, second] = fromTail;
    expect(await store.readAll({ after: second!.position, limit: 1 })).toEqual([fromTail[2]]);
  });
});
