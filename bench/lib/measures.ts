import { randomBytes, randomUUID } from 'node:crypto';
import { type EnvStoreState, envProjection } from '../../projections/env.ts';
import { type StudiosState, studiosProjection } from '../../projections/studios.ts';
import { type TokensState, tokensProjection } from '../../projections/tokens.ts';
import { GATEWAY_PROJECTIONS } from '../../services/gateway/projections.ts';
import { RUNTIME_PROJECTIONS } from '../../services/runtime/projections.ts';
import type { StudioEvent } from '../../services/studios/studio.ts';
import { subscribe } from '../../shared/event-store/subscription.ts';
import type {
  EventMetadata,
  EventStore,
  ExpectedRevision,
  NewEvent,
} from '../../shared/event-store/types.ts';
import { isCaughtUp } from '../../shared/event-store/types.ts';
import type { CheckpointStore } from '../../shared/projections/checkpoints.ts';
import { rebuildProjections } from '../../shared/projections/rebuild.ts';
import { ProjectionRunner } from '../../shared/projections/runner.ts';
import type { DatasetShape } from './dataset.ts';

/** A measurement stops at whichever comes first. */
export interface Budget {
  ms: number;
  maxOps: number;
}

export interface RateResult {
  ops: number;
  ms: number;
  perSecond: number;
}

/** Only `append` is used, so a diagnosis can measure something that is not a whole EventStore. */
export type Appender = Pick<EventStore, 'append'>;

const WRITE_METADATA: EventMetadata = { actor: 'admin', requestId: 'bench-append' };

function rate(ops: number, ms: number): RateResult {
  return { ops, ms, perSecond: ms > 0 ? (ops * 1000) / ms : 0 };
}

/** A TokenIssued event, as `POST /v1/studios/:id/tokens` appends it (no id: the store assigns one). */
function tokenIssued(studioId: string): NewEvent {
  const event: StudioEvent = {
    type: 'TokenIssued',
    data: {
      studioId,
      tokenId: randomUUID(),
      name: 'bench token',
      prefix: 'stu_bench',
      tokenHash: randomBytes(32).toString('hex'),
      expiresAt: null,
    },
  };
  return event;
}

/** Appends single events to `streams` one at a time, round-robin, each with its expected revision. */
async function writer(
  store: Appender,
  streams: readonly string[],
  deadline: number,
  claim: () => boolean,
): Promise<number> {
  const expected: ExpectedRevision[] = streams.map(() => 'no_stream');
  let appended = 0;
  for (let i = 0; performance.now() < deadline && claim(); i = (i + 1) % streams.length) {
    const streamId = streams[i]!;
    const result = await store.append(streamId, [tokenIssued(streamId)], {
      expected: expected[i]!,
      metadata: WRITE_METADATA,
    });
    expected[i] = result.nextExpectedRevision;
    appended++;
  }
  return appended;
}

/**
 * `writers` concurrent writers, each on its own streams (`streamsPerWriter` of them), sequential
 * single-event appends with expected revision. Events/s over the whole run.
 */
export async function measureAppends(
  store: Appender,
  tag: string,
  writers: number,
  streamsPerWriter: number,
  budget: Budget,
): Promise<RateResult> {
  let claimed = 0;
  const claim = () => (claimed < budget.maxOps ? ++claimed > 0 : false);
  const started = performance.now();
  const deadline = started + budget.ms;
  const counts = await Promise.all(
    Array.from({ length: writers }, (_, w) =>
      writer(
        store,
        Array.from({ length: streamsPerWriter }, (_, s) => `bench-${tag}-w${w}-s${s}`),
        deadline,
        claim,
      ),
    ),
  );
  const ms = performance.now() - started;
  return rate(
    counts.reduce((a, b) => a + b, 0),
    ms,
  );
}

/** readAll from the start in pages of `page` until a short page. */
export async function measureReadAll(store: EventStore, page: number): Promise<RateResult> {
  const started = performance.now();
  let after = 0;
  let events = 0;
  for (;;) {
    const batch = await store.readAll({ after, limit: page });
    events += batch.length;
    after = batch.at(-1)?.position ?? after;
    if (batch.length < page) break;
  }
  return rate(events, performance.now() - started);
}

/** A `$all` subscription from the start until its `$caught_up` marker. */
export async function measureSubscribeCatchUp(store: EventStore, batchSize?: number): Promise<RateResult> {
  const controller = new AbortController();
  const started = performance.now();
  let events = 0;
  try {
    for await (const item of subscribe(store, {
      signal: controller.signal,
      ...(batchSize ? { batchSize } : {}),
    })) {
      if (isCaughtUp(item)) break;
      events++;
    }
  } finally {
    controller.abort();
  }
  return rate(events, performance.now() - started);
}

export interface ReplayResult {
  ms: number;
  /** Events in the log when it ran: events/s = logEvents / time. */
  logEvents: number;
  perSecond: number;
  /** Set when a read model did not come out as the data set says it must. */
  mismatch?: string;
}

function check(
  shape: DatasetShape,
  studios: StudiosState,
  tokens: TokensState,
  env: EnvStoreState,
): string | undefined {
  const studioList = [...studios.values()];
  const got = {
    studios: studioList.length,
    paused: studioList.filter((s) => s.status === 'paused').length,
    tokens: tokens.byId.size,
    revoked: [...tokens.byId.values()].filter((t) => t.revoked_at !== null).length,
    envKeys: env.size,
  };
  const wrong = (Object.keys(got) as (keyof typeof got)[]).filter((k) => got[k] !== shape[k]);
  return wrong.length === 0 ? undefined : wrong.map((k) => `${k} ${got[k]} ≠ ${shape[k]}`).join(', ');
}

/** Every read model rebuilt in one pass over the log, as `studio projections rebuild` does. */
export async function measureRebuild(
  store: EventStore,
  checkpoints: CheckpointStore,
  shape: DatasetShape,
  logEvents: number,
): Promise<ReplayResult> {
  const started = performance.now();
  await rebuildProjections(store, checkpoints, [...GATEWAY_PROJECTIONS, ...RUNTIME_PROJECTIONS]);
  const ms = performance.now() - started;
  const [studios, tokens, env] = await Promise.all([
    checkpoints.load(studiosProjection.name),
    checkpoints.load(tokensProjection.name),
    checkpoints.load(envProjection.name),
  ]);
  const mismatch =
    studios?.state && tokens?.state && env?.state
      ? check(
          shape,
          studiosProjection.fromSnapshot(studios.state),
          tokensProjection.fromSnapshot(tokens.state),
          envProjection.fromSnapshot(env.state),
        )
      : 'a rebuilt projection saved no state';
  return { ms, logEvents, perSecond: (logEvents * 1000) / ms, ...(mismatch ? { mismatch } : {}) };
}

/**
 * A cold ProjectionRunner over the gateway projections (checkpoints reset first, so it replays the
 * whole log): time from construction until `start()` resolves (caught up).
 */
export async function measureRunnerStart(
  store: EventStore,
  checkpoints: CheckpointStore,
  shape: DatasetShape,
  logEvents: number,
): Promise<ReplayResult> {
  for (const projection of GATEWAY_PROJECTIONS) await checkpoints.reset(projection.name);
  const started = performance.now();
  const runner = new ProjectionRunner(store, checkpoints, GATEWAY_PROJECTIONS);
  await runner.start();
  const ms = performance.now() - started;
  const mismatch = check(
    shape,
    runner.state(studiosProjection),
    runner.state(tokensProjection),
    runner.state(envProjection),
  );
  await runner.stop();
  return { ms, logEvents, perSecond: (logEvents * 1000) / ms, ...(mismatch ? { mismatch } : {}) };
}
