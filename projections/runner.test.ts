import { afterEach, describe, expect, it } from 'vitest';
import type { StudioEvent } from '../services/studios/studio.ts';
import { MemoryEventStore } from '../shared/event-store/memory.ts';
import { MemoryCheckpointStore } from './checkpoints.ts';
import { rebuildProjection } from './rebuild.ts';
import { ProjectionRunner } from './runner.ts';
import { studiosProjection } from './studios.ts';
import { tokensProjection } from './tokens.ts';

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
    expect(r.state(studiosProjection).a?.status).toBe('active');
    expect(r.state(tokensProjection).byHash['hash-t1']).toBe('t1');

    const { position } = await store.append('studio-a', [paused('a')], { metadata: meta });
    expect(await r.waitFor(position)).toBe(true);
    expect(r.state(studiosProjection).a).toMatchObject({ status: 'paused', paused_reason: 'r', version: 2 });
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
    const saved = await checkpoints.load<Record<string, unknown>>('studios');
    expect(saved?.position).toBe(await store.headPosition());
    expect(Object.keys(saved?.state ?? {})).toEqual(['a']);

    // A snapshot that says more than the log proves it is the snapshot, not a replay, that is used.
    await checkpoints.save('studios', { ...saved!, state: { ...saved!.state, ghost: { id: 'ghost' } } });
    await store.append('studio-b', [created('b')], { metadata: meta });
    const second = runner(store, checkpoints);
    await second.start();
    expect(Object.keys(second.state(studiosProjection)).sort()).toEqual(['a', 'b', 'ghost']);
  });

  it('discards a snapshot of another version and rebuilds from the log', async () => {
    const store = new MemoryEventStore();
    const checkpoints = new MemoryCheckpointStore();
    await store.append('studio-a', [created('a')], { metadata: meta });
    await checkpoints.save('studios', { version: 999, position: 10_000, state: { ghost: {} } });
    const r = runner(store, checkpoints);
    await r.start();
    expect(Object.keys(r.state(studiosProjection))).toEqual(['a']);
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
    expect(rebuilt?.state).toEqual(r.state(studiosProjection));
    expect(rebuilt?.position).toBe(await store.headPosition());
  });
});
