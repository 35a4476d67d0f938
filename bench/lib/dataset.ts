import { ENV_STREAM, type EnvEvent } from '../../services/env/env.ts';
import { type StudioEvent, studioStreamId } from '../../services/studios/studio.ts';
import type { EventMetadata, EventStore, ExpectedRevision } from '../../shared/event-store/types.ts';

/**
 * The replay data set: studio streams (StudioCreated, TokenIssued, TokenRevoked, StudioPaused) and
 * the env stream (EnvVariableSet), generated from a fixed seed so every store gets the same events.
 */
export interface DatasetShape {
  total: number;
  studioEvents: number;
  envEvents: number;
  studios: number;
  tokens: number;
  revoked: number;
  paused: number;
  envKeys: number;
}

interface StudioPlan {
  studioId: string;
  /** First append: StudioCreated + the tokens issued. */
  first: StudioEvent[];
  /** Second append, later: revocations and maybe a pause (possibly empty). */
  second: StudioEvent[];
}

interface Plan {
  shape: DatasetShape;
  studios: StudioPlan[];
  envBatches: EnvEvent[][];
}

/** Share of the log in the env stream; the rest is studio streams. */
const ENV_SHARE = 0.3;
const ENV_KEYS = 400;
const ENV_BATCH = 1_000;

export const DATASET_METADATA: EventMetadata = { actor: 'admin', requestId: 'bench-load' };

/** mulberry32: small, fast, seeded. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

function hex(random: () => number, length: number): string {
  let out = '';
  while (out.length < length)
    out += Math.floor(random() * 0x1_0000_0000)
      .toString(16)
      .padStart(8, '0');
  return out.slice(0, length);
}

function uuid(random: () => number): string {
  const h = hex(random, 32);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export function planDataset(total: number, seed = 20261122): Plan {
  const random = prng(seed);
  const envEvents = Math.round(total * ENV_SHARE);
  const studioBudget = total - envEvents;
  const studios: StudioPlan[] = [];
  const shape: DatasetShape = {
    total,
    studioEvents: 0,
    envEvents,
    studios: 0,
    tokens: 0,
    revoked: 0,
    paused: 0,
    envKeys: 0,
  };

  let used = 0;
  while (used < studioBudget) {
    const studioId = `st_${hex(random, 12)}`;
    const issued = 10 + Math.floor(random() * 21); // 10..30 tokens
    const tokenIds: string[] = [];
    const first: StudioEvent[] = [
      { type: 'StudioCreated', data: { studioId, name: `Studio ${studios.length + 1}` } },
    ];
    for (let t = 0; t < issued; t++) {
      const tokenId = uuid(random);
      tokenIds.push(tokenId);
      first.push({
        type: 'TokenIssued',
        data: {
          studioId,
          tokenId,
          name: `token ${t + 1}`,
          prefix: `stu_${hex(random, 6)}`,
          tokenHash: hex(random, 64),
          expiresAt: random() < 0.3 ? new Date(Date.UTC(2027, 0, 1 + t)).toISOString() : null,
        },
      });
    }
    const second: StudioEvent[] = [];
    for (const tokenId of tokenIds) {
      if (random() < 0.25)
        second.push({ type: 'TokenRevoked', data: { studioId, tokenId, reason: 'revoked' } });
    }
    const pause = random() < 0.15;
    if (pause) second.push({ type: 'StudioPaused', data: { studioId, reason: 'over budget' } });

    // Trim the last studio so the log holds exactly `total` events.
    const room = studioBudget - used;
    const all = [...first, ...second].slice(0, room);
    const kept: StudioPlan = { studioId, first: all.slice(0, first.length), second: all.slice(first.length) };
    studios.push(kept);
    used += all.length;
    shape.studios++;
    shape.tokens += kept.first.length - 1;
    shape.revoked += kept.second.filter((e) => e.type === 'TokenRevoked').length;
    shape.paused += kept.second.some((e) => e.type === 'StudioPaused') ? 1 : 0;
  }
  shape.studioEvents = used;

  const keys = new Set<string>();
  const envBatches: EnvEvent[][] = [];
  for (let i = 0; i < envEvents; i += ENV_BATCH) {
    const batch: EnvEvent[] = [];
    for (let j = i; j < Math.min(envEvents, i + ENV_BATCH); j++) {
      const n = Math.floor(random() * ENV_KEYS);
      const secret = n % 4 === 0;
      const key = secret ? `PROVIDER_${n}_API_KEY` : `SETTING_${n}`;
      keys.add(key);
      batch.push(
        secret
          ? {
              type: 'EnvVariableSet',
              data: { key, secret: true, sealed: `v1.${hex(random, 24)}.${hex(random, 48)}` },
            }
          : { type: 'EnvVariableSet', data: { key, secret: false, value: `value-${hex(random, 16)}` } },
      );
    }
    envBatches.push(batch);
  }
  shape.envKeys = keys.size;
  return { shape, studios, envBatches };
}

/** Runs `jobs` with at most `concurrency` in flight. */
async function pool<T>(
  items: readonly T[],
  concurrency: number,
  job: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++]!;
      await job(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}

/**
 * Loads the plan with batched appends (one append per studio for its creation and tokens, a second
 * one later for revocations; the env stream in appends of 1,000), with expected revisions, several
 * appends in flight, the env stream interleaved with the studios.
 */
export async function loadDataset(store: EventStore, plan: Plan, concurrency = 8): Promise<void> {
  const firstRevision = new Map<string, number>();
  const loadEnv = async () => {
    let expected: ExpectedRevision = 'no_stream';
    for (const batch of plan.envBatches) {
      const result = await store.append(ENV_STREAM, batch, { expected, metadata: DATASET_METADATA });
      expected = result.nextExpectedRevision;
    }
  };
  const loadFirst = pool(plan.studios, concurrency, async (studio) => {
    const result = await store.append(studioStreamId(studio.studioId), studio.first, {
      expected: 'no_stream',
      metadata: DATASET_METADATA,
    });
    firstRevision.set(studio.studioId, result.nextExpectedRevision);
  });
  await Promise.all([loadEnv(), loadFirst]);
  await pool(
    plan.studios.filter((s) => s.second.length > 0),
    concurrency,
    async (studio) => {
      await store.append(studioStreamId(studio.studioId), studio.second, {
        expected: firstRevision.get(studio.studioId)!,
        metadata: DATASET_METADATA,
      });
    },
  );
}
