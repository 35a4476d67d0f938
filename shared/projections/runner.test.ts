import { afterEach, describe, expect, it } from 'vitest';
import { studiosProjection } from '../../projections/studios.ts';
import { tokensProjection } from '../../projections/tokens.ts';
import type { StudioEvent } from '../../services/studios/studio.ts';
import { ApiError } from '../errors.ts';
import { MemoryEventStore } from '../event-store/memory.ts';
import { FailingReads } from '../event-store/testing.ts';
import { waitUntil } from '../testing/wait.ts';
import { MemoryCheckpointStore } from './checkpoints.ts';
import { defineProjection } from './projection.ts';
import { rebuildProjection } from './rebuild.ts';
import { ProjectionRunner } from './runner.ts';

const meta = { actor: 'admin' };
const created = (studioId: string): StudioEvent => ({
  type: 'StudioCreated',
  data: { studioId, name: studioId },
});
const paused = (studioId: string): StudioEvent => ({ type: 'StudioPaused', data: { studioId, reason: 'r' } });
const issued = (studioId: string, tokenId: string): StudioEvent => ({
  type: 'TokenIssued',
  data: { studioId, tokenId, name: 't', prefix: 'stk_xxxx', tokenHash: `hash-${tokenId}`, expiresAt: null },
});

let runners: ProjectionRunner[] = [];
afterEach(async () => {
  await Promise.all(runners.map((r) => r.stop()));
  runners = [];
});

function runner(store: MemoryEventStore, checkpoints: MemoryCheckpointStore) {
  const r = new ProjectionRunner(store, checkpoints, [studiosProjection, tokensProjection]);
  runners.push(r);
  return r;
}

describe('ProjectionRunner', () => {
  it('catches up with the log before start resolves, then follows it live', async () => {
    const store = new MemoryEventStore();
    await store.append('studio-a', [created('a'), issued('a', 't1')], { metadata: meta });
    const r = runner(store, new MemoryCheckpointStore());
    await r.start();
    expect(r.state(studiosProjection).get('a')?.status).toBe('active');
    expect(r.state(tokensProjection).byHash.get('hash-t1')).toBe('t1');

    const { position } = await store.append('studio-a', [paused('a')], { metadata: meta });
    expect(await r.waitFor(position)).toBe(true);
    expect(r.state(studiosProjection).get('a')).toMatchObject({
      status: 'paused',
      paused_reason: 'r',
      version: 2,
    });
  });

  it('read models of some categories read only those, and their position passes the others', async () => {
    const store = new MemoryEventStore();
    const studiosOnly = { ...studiosProjection, name: 'studios-only', categories: ['studio'] };
    const r = new ProjectionRunner(store, new MemoryCheckpointStore(), [studiosOnly]);
    runners.push(r);
    await r.start();
    const other = await store.append('usage-a', [{ type: 'GenerationCompleted', data: {} }], {
      metadata: meta,
    });
    expect(await r.waitFor(other.position)).toBe(true);
    expect(r.status()).toEqual([
      { name: 'studios-only', schemaVersion: studiosProjection.schemaVersion, position: other.position },
    ]);
    const mine = await store.append('studio-a', [created('a')], { metadata: meta });
    expect(await r.waitFor(mine.position)).toBe(true);
    expect(r.state(studiosOnly).get('a')?.status).toBe('active');
  });

  it('waitFor gives up after its timeout when the position never comes', async () => {
    const r = runner(new MemoryEventStore(), new MemoryCheckpointStore());
    await r.start();
    expect(await r.waitFor(10_000, 50)).toBe(false);
  });

  it('saves snapshots with their checkpoint and resumes from them on restart', async () => {
    const store = new MemoryEventStore();
    const checkpoints = new MemoryCheckpointStore();
    await store.append('studio-a', [created('a')], { metadata: meta });
    const first = runner(store, checkpoints);
    await first.start();
    await first.stop();
    const saved = await checkpoints.load<[string, unknown][]>('studios');
    expect(saved?.position).toBe(await store.headPosition());
    expect(saved?.state?.map(([id]) => id)).toEqual(['a']);

    // A snapshot that says more than the log proves it is the snapshot, not a replay, that is used.
    await checkpoints.save('studios', { ...saved!, state: [...saved!.state!, ['ghost', { id: 'ghost' }]] });
    await store.append('studio-b', [created('b')], { metadata: meta });
    const second = runner(store, checkpoints);
    await second.start();
    expect([...second.state(studiosProjection).keys()].sort()).toEqual(['a', 'b', 'ghost']);
  });

  it('a read model that says how often it is saved is left out of the snapshots in between, never at stop', async () => {
    const store = new MemoryEventStore();
    const checkpoints = new MemoryCheckpointStore();
    const rarely = { ...studiosProjection, name: 'studios-rarely', snapshotEveryMs: 60_000 };
    const r = new ProjectionRunner(store, checkpoints, [studiosProjection, rarely]);
    runners.push(r);
    await r.start();
    await store.append('studio-a', [created('a')], { metadata: meta });
    await r.waitFor(await store.headPosition());
    await r.snapshot();
    await store.append('studio-b', [created('b')], { metadata: meta });
    await r.waitFor(await store.headPosition());
    await r.snapshot();
    // Saved the first time, not again within its minute; the others every time.
    expect((await checkpoints.load<[string, unknown][]>('studios-rarely'))?.state?.map(([id]) => id)).toEqual(
      ['a'],
    );
    expect((await checkpoints.load<[string, unknown][]>('studios'))?.state?.map(([id]) => id)).toEqual([
      'a',
      'b',
    ]);
    await r.stop();
    expect((await checkpoints.load<[string, unknown][]>('studios-rarely'))?.state?.map(([id]) => id)).toEqual(
      ['a', 'b'],
    );
  });

  it('a read model serialized over several turns is saved as it was when its snapshot was taken', async () => {
    const store = new MemoryEventStore();
    const checkpoints = new MemoryCheckpointStore();
    const names = defineProjection<string[], StudioEvent>({
      name: 'studio-names',
      schemaVersion: 1,
      handles: ['StudioCreated'],
      serializeInTurns: true,
      initialState: () => [],
      apply: (state, event) => {
        if (event.type === 'StudioCreated') state.push(event.data.studioId);
      },
      toSnapshot: (state) => [...state],
      fromSnapshot: (snapshot) => snapshot as string[],
    });
    const r = new ProjectionRunner(store, checkpoints, [names]);
    runners.push(r);
    await r.start();
    for (let i = 0; i < 5_000; i++)
      await store.append(`studio-s${i}`, [created(`s${i}`)], { metadata: meta });
    const taken = await store.headPosition();
    await r.waitFor(taken);

    let saved = false;
    const saving = r.snapshot().then(() => {
      saved = true;
    });
    const late = await store.append('studio-late', [created('late')], { metadata: meta });
    expect(await r.waitFor(late.position)).toBe(true);
    // Folded while the snapshot was still being written, and not in it.
    expect(saved).toBe(false);
    await saving;
    const checkpoint = await checkpoints.load<string[]>('studio-names');
    expect(checkpoint?.position).toBe(taken);
    expect(checkpoint?.state).toHaveLength(5_000);
    expect(checkpoint?.state?.at(-1)).toBe('s4999');
  });

  it('saves a read model on its own schedule sooner once 50,000 events came after its snapshot', async () => {
    const store = new MemoryEventStore();
    const checkpoints = new MemoryCheckpointStore();
    const rarely = { ...studiosProjection, name: 'studios-rarely', snapshotEveryMs: 60_000 };
    const r = new ProjectionRunner(store, checkpoints, [rarely]);
    runners.push(r);
    await r.start();
    await store.append('studio-a', [created('a')], { metadata: meta });
    await r.waitFor(await store.headPosition());
    await r.snapshot();
    const saved = async () => (await checkpoints.load('studios-rarely'))?.position;
    const first = await saved();
    // Events it does not fold count as well: a restart would read them all again.
    const noise = Array.from({ length: 1_000 }, () => ({ type: 'Noise', data: {} }));
    for (let i = 0; i < 49; i++) await store.append(`noise-${i}`, noise, { metadata: meta });
    await r.waitFor(await store.headPosition());
    await r.snapshot();
    expect(await saved()).toBe(first);
    await store.append('studio-b', [created('b'), ...noise], { metadata: meta });
    await r.waitFor(await store.headPosition());
    await r.snapshot();
    expect(await saved()).toBe(await store.headPosition());
  });

  it.each([
    ['of another schema version', { schemaVersion: 999, state: [['ghost', {}]] }],
    [
      'of its schema version it cannot read (an object where entries belong)',
      { schemaVersion: studiosProjection.schemaVersion, state: { ghost: { id: 'ghost' } } },
    ],
  ])('discards a snapshot %s and rebuilds from the log', async (_label, snapshot) => {
    const store = new MemoryEventStore();
    const checkpoints = new MemoryCheckpointStore();
    await store.append('studio-a', [created('a')], { metadata: meta });
    await checkpoints.save<unknown>('studios', { ...snapshot, position: 10_000 });
    const r = runner(store, checkpoints);
    await r.start();
    expect([...r.state(studiosProjection).keys()]).toEqual(['a']);
  });

  it('ids named like Object.prototype members are ids like any other, through a snapshot and back', async () => {
    const store = new MemoryEventStore();
    const checkpoints = new MemoryCheckpointStore();
    const ids = ['__proto__', 'constructor', 'toString', 'hasOwnProperty'];
    for (const id of ids)
      await store.append(`studio-${id}`, [created(id), issued(id, id)], { metadata: meta });
    const first = runner(store, checkpoints);
    await first.start();
    expect(first.state(studiosProjection).get('constructor')?.name).toBe('constructor');
    expect(first.state(studiosProjection).get('valueOf')).toBeUndefined();
    await first.stop();

    const second = runner(store, checkpoints);
    await second.start();
    expect([...second.state(studiosProjection).keys()]).toEqual(ids);
    expect([...second.state(tokensProjection).byHash]).toEqual(ids.map((id) => [`hash-${id}`, id]));
    expect(second.state(studiosProjection).get('__proto__')).toMatchObject({
      id: '__proto__',
      status: 'active',
    });
    expect(Object.getOwnPropertyNames(Object.prototype)).not.toContain('status');
  });

  it('rebuild equals live: replaying the log gives the state the runner built as events arrived', async () => {
    const store = new MemoryEventStore();
    const checkpoints = new MemoryCheckpointStore();
    const r = runner(store, checkpoints);
    await r.start();
    for (let i = 0; i < 50; i++) {
      await store.append(`studio-s${i}`, [created(`s${i}`), issued(`s${i}`, `t${i}`)], { metadata: meta });
      if (i % 3 === 0) await store.append(`studio-s${i}`, [paused(`s${i}`)], { metadata: meta });
    }
    expect(await r.waitFor(await store.headPosition())).toBe(true);

    const progress: number[] = [];
    const result = await rebuildProjection(store, checkpoints, studiosProjection, (p) =>
      progress.push(p.fraction),
    );
    expect(result.events).toBe(50 * 2 + 17);
    expect(progress.at(-1)).toBe(1);
    const rebuilt = await checkpoints.load('studios');
    expect(studiosProjection.fromSnapshot(rebuilt?.state)).toEqual(r.state(studiosProjection));
    expect(rebuilt?.position).toBe(await store.headPosition());
  });
});

describe('ProjectionRunner across failed reads of the log', () => {
  const fastRetry = { retry: { initialMs: 5, maxMs: 20 } };

  it('keeps following the log after its reads fail, and catches up from where it was', async () => {
    const reads = new FailingReads();
    const store = new MemoryEventStore(reads.hooks);
    await store.append('studio-a', [created('a'), issued('a', 't1')], { metadata: meta });
    const r = new ProjectionRunner(
      store,
      new MemoryCheckpointStore(),
      [studiosProjection, tokensProjection],
      undefined,
      fastRetry,
    );
    runners.push(r);
    await r.start();

    reads.failing = true;
    await store.append('studio-a', [paused('a')], { metadata: meta }); // wakes the runner; its read fails
    await waitUntil(() => reads.failures >= 3, 'three failed reads');
    await store.append('studio-b', [created('b'), issued('b', 't2')], { metadata: meta });

    reads.failing = false;
    expect(await r.waitFor(await store.headPosition())).toBe(true);
    expect(r.state(studiosProjection).get('a')?.status).toBe('paused');
    expect(r.state(tokensProjection).byHash.get('hash-t2')).toBe('t2');
    await waitUntil(() => r.liveness.state === 'live', 'live again');
    expect(r.liveness.report()).toEqual({
      state: 'live',
      stalled_since: null,
      failed_reads: 0,
      last_error: null,
    });

    // And it goes on following: the failure did not end its subscription.
    const { position } = await store.append('studio-c', [created('c')], { metadata: meta });
    expect(await r.waitFor(position)).toBe(true);
  });

  it('is stale once its reads have failed for longer than the bound, until it has caught up again', async () => {
    const reads = new FailingReads();
    const store = new MemoryEventStore(reads.hooks);
    const r = new ProjectionRunner(store, new MemoryCheckpointStore(), [studiosProjection], undefined, {
      ...fastRetry,
      staleAfterMs: 50,
    });
    runners.push(r);
    await r.start();
    expect(r.liveness.isStale()).toBe(false);

    reads.failing = true;
    const { position } = await store.append('studio-a', [created('a')], { metadata: meta });
    await waitUntil(() => reads.failures >= 2, 'failed reads');
    expect(r.liveness.state).toBe('stalled');
    expect(r.liveness.report()).toMatchObject({
      failed_reads: reads.failures,
      last_error: 'Error (ECONNRESET)',
    });
    const since = Date.parse(r.liveness.report().stalled_since!);
    expect(r.liveness.isStale(since + 49)).toBe(false);
    expect(r.liveness.isStale(since + 50)).toBe(true);
    await waitUntil(() => r.liveness.isStale(), 'stale');
    let refused: unknown;
    try {
      r.liveness.assertFresh('tokens');
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({
      code: 'unavailable',
      status: 503,
      options: { headers: { 'Retry-After': '1' } },
    });
    await expect(r.awaitReadModels(position, 30)).rejects.toMatchObject({ code: 'unavailable', status: 503 });

    reads.failing = false;
    await r.awaitReadModels(position, 2_000);
    await waitUntil(() => !r.liveness.isStale(), 'fresh again');
    expect(r.state(studiosProjection).get('a')?.status).toBe('active');
    expect(r.liveness.report()).toEqual({
      state: 'live',
      stalled_since: null,
      failed_reads: 0,
      last_error: null,
    });
  });

  it('counts as stalled for good when a projection throws: nothing keeps answering from it as if live', async () => {
    const store = new MemoryEventStore();
    const exploding = defineProjection<{ seen: number }, StudioEvent>({
      name: 'exploding',
      schemaVersion: 1,
      handles: ['StudioPaused'],
      initialState: () => ({ seen: 0 }),
      toSnapshot: (state) => state,
      fromSnapshot: (snapshot) => snapshot as { seen: number },
      apply() {
        throw new Error('a bug in a projection');
      },
    });
    const r = new ProjectionRunner(store, new MemoryCheckpointStore(), [exploding], undefined, {
      staleAfterMs: 20,
    });
    runners.push(r);
    await r.start();
    await store.append('studio-a', [created('a'), paused('a')], { metadata: meta });
    await waitUntil(() => r.liveness.state === 'stalled', 'stalled');
    await waitUntil(() => r.liveness.isStale(), 'stale');
  });
});
