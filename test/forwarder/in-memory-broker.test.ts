import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import {
  FORWARDER_CHECKPOINT,
  KafkaForwarder,
  type KafkaForwarderOptions,
} from '../../services/forwarder/kafka.ts';
import { toKafkaMessage } from '../../services/forwarder/message.ts';
import type { BatchProducer } from '../../services/forwarder/producer.ts';
import { MemoryEventStore } from '../../shared/event-store/memory.ts';
import type { EventStore, StoredEvent, SubscribeOptions } from '../../shared/event-store/types.ts';
import { createLogger } from '../../shared/logger.ts';
import { type Checkpoint, MemoryCheckpointStore } from '../../shared/projections/checkpoints.ts';
import { waitUntil } from '../../shared/testing/wait.ts';
import { checkDelivery, fillLog, streamSizes } from './support.ts';

/** A broker in memory: what it acknowledged, in order; it can be down, or fail part of a batch. */
class FakeBroker {
  readonly records: StoredEvent[] = [];
  down = false;
  /** Chance that a send writes the events of some keys only, then fails (a partial ack). */
  partialFailures = 0;
  sends = 0;
  connects = 0;
  inFlight = 0;
  maxInFlight = 0;
  /** Resolves the send in flight when set (to hold a batch unacknowledged). */
  hold: Promise<void> | undefined;

  producer(): BatchProducer {
    return {
      connect: async () => {
        this.connects++;
        if (this.down) throw new Error('connect ECONNREFUSED 127.0.0.1:9');
      },
      send: async (events) => {
        this.sends++;
        this.inFlight++;
        this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
        try {
          await sleep(Math.random() < 0.5 ? 0 : 1);
          await this.hold;
          if (this.down) throw new Error('Connection error: read ECONNRESET');
          if (Math.random() < this.partialFailures) {
            const odd = Math.random() < 0.5;
            this.records.push(...events.filter((e) => Number(e.streamId.split('-')[1]) % 2 === Number(odd)));
            throw new Error('The request timed out');
          }
          this.records.push(...events);
        } finally {
          this.inFlight--;
        }
      },
      disconnect: async () => undefined,
    };
  }

  acknowledged(position: number): boolean {
    return this.records.some((e) => e.position === position);
  }
}

/** `store`, with another subscribePages (to make the subscription fail, or count what it reads). */
function withSubscribe(store: MemoryEventStore, over: Pick<EventStore, 'subscribePages'>): EventStore {
  return {
    kind: store.kind,
    append: (...args) => store.append(...args),
    readStream: (...args) => store.readStream(...args),
    readAll: (...args) => store.readAll(...args),
    subscribePages: over.subscribePages,
    headPosition: () => store.headPosition(),
    close: () => store.close(),
  };
}

const silent = createLogger('silent');
const running: { controller: AbortController; done: Promise<void> }[] = [];

function start(options: Partial<KafkaForwarderOptions> & Pick<KafkaForwarderOptions, 'events' | 'producer'>) {
  const forwarder = new KafkaForwarder({
    checkpoints: new MemoryCheckpointStore(),
    logger: silent,
    retry: { initialMs: 2, maxMs: 20 },
    ...options,
  });
  const controller = new AbortController();
  const done = forwarder.run(controller.signal);
  const handle = { controller, done };
  running.push(handle);
  return {
    forwarder,
    async stop() {
      controller.abort();
      await done;
    },
  };
}

afterEach(async () => {
  for (const { controller, done } of running.splice(0)) {
    controller.abort();
    await done;
  }
});

describe('KafkaForwarder', () => {
  it('delivers every event, in order per stream, through partial failures; checkpoints only acknowledged events', async () => {
    const events = new MemoryEventStore();
    await fillLog(events, 7, 1_500);
    const broker = new FakeBroker();
    broker.partialFailures = 0.3;
    const real = new MemoryCheckpointStore();
    const unacknowledged: number[] = [];
    const checkpoints = {
      load: real.load.bind(real),
      reset: real.reset.bind(real),
      async save<State>(name: string, checkpoint: Checkpoint<State>) {
        // Everything up to the checkpoint must already be at the broker.
        for (const e of await events.readAll({ limit: checkpoint.position })) {
          if (e.position <= checkpoint.position && !broker.acknowledged(e.position))
            unacknowledged.push(e.position);
        }
        await real.save(name, checkpoint);
      },
    };
    const { forwarder, stop } = start({
      events,
      checkpoints,
      producer: () => broker.producer(),
      batchSize: 100,
    });
    const live = fillLog(events, 7, 500, 1_500); // more arrive while it forwards
    await live;
    await waitUntil(async () => (await forwarder.status()).lag === 0, 'the forwarder caught up', 10_000);
    await stop();

    const delivery = checkDelivery(
      broker.records.map((e) => ({ key: e.streamId, revision: e.revision })),
      await streamSizes(events),
    );
    expect(delivery.problems).toEqual([]);
    expect(delivery.unique).toBe(2_000);
    expect(delivery.duplicates).toBeGreaterThan(0); // partial failures re-send what some keys had
    expect(unacknowledged).toEqual([]);
    expect(broker.maxInFlight).toBe(1);
    expect((await real.load(FORWARDER_CHECKPOINT))?.position).toBe(await events.headPosition());
  });

  it('while the broker is down: connecting, last_error, lag, no checkpoint; then it catches up', async () => {
    const events = new MemoryEventStore();
    await fillLog(events, 3, 50);
    const broker = new FakeBroker();
    broker.down = true;
    const checkpoints = new MemoryCheckpointStore();
    const { forwarder } = start({ events, checkpoints, producer: () => broker.producer() });
    await waitUntil(() => broker.connects >= 3, 'the broker was tried three times', 10_000);
    const down = await forwarder.status();
    expect(down).toMatchObject({ state: 'connecting', position: 0, lag: 50 });
    expect(down.last_error).toContain('ECONNREFUSED');
    expect(await checkpoints.load(FORWARDER_CHECKPOINT)).toBeUndefined();

    broker.down = false;
    await waitUntil(async () => (await forwarder.status()).lag === 0, 'the forwarder caught up', 10_000);
    expect(await forwarder.status()).toMatchObject({ state: 'running', last_error: null, forwarded: 50 });
    expect(broker.records.map((e) => e.position)).toEqual((await events.readAll()).map((e) => e.position));

    // Down again in the middle of a stream of events: it retries the same batch, loses nothing.
    broker.down = true;
    const connects = broker.connects;
    await fillLog(events, 3, 30, 50);
    await waitUntil(() => broker.connects >= connects + 3, 'the broker was tried three more times', 10_000);
    expect((await forwarder.status()).state).toBe('connecting');
    broker.down = false;
    await waitUntil(async () => (await forwarder.status()).lag === 0, 'the forwarder caught up', 10_000);
    expect(broker.records.map((e) => e.position)).toEqual((await events.readAll()).map((e) => e.position));
  });

  it('resumes after its checkpoint', async () => {
    const events = new MemoryEventStore();
    await fillLog(events, 2, 20);
    const checkpoints = new MemoryCheckpointStore();
    await checkpoints.save(FORWARDER_CHECKPOINT, { schemaVersion: 1, position: 12 });
    const broker = new FakeBroker();
    const { forwarder } = start({ events, checkpoints, producer: () => broker.producer() });
    await waitUntil(async () => (await forwarder.status()).lag === 0, 'the forwarder caught up', 10_000);
    expect(broker.records.map((e) => e.position)).toEqual([13, 14, 15, 16, 17, 18, 19, 20]);
  });

  it('a stop lets the batch in flight be acknowledged and checkpointed; past the grace it is left for the next run', async () => {
    const events = new MemoryEventStore();
    await fillLog(events, 2, 10);
    const broker = new FakeBroker();
    let release!: () => void;
    broker.hold = new Promise((r) => {
      release = r;
    });
    const checkpoints = new MemoryCheckpointStore();
    const first = start({ events, checkpoints, producer: () => broker.producer(), stopGraceMs: 5_000 });
    await waitUntil(() => broker.inFlight === 1, 'a batch is in flight', 10_000);
    const stopping = first.stop();
    await sleep(20);
    release();
    await stopping;
    expect((await checkpoints.load(FORWARDER_CHECKPOINT))?.position).toBe(10);

    await fillLog(events, 2, 5, 10);
    broker.hold = new Promise(() => undefined); // never acknowledged
    const second = start({ events, checkpoints, producer: () => broker.producer(), stopGraceMs: 50 });
    await waitUntil(() => broker.inFlight === 1, 'a batch is in flight', 10_000);
    await second.stop();
    expect((await checkpoints.load(FORWARDER_CHECKPOINT))?.position).toBe(10);
    expect((await second.forwarder.status()).state).toBe('stopped');
  });

  it('a run started while the previous one is still stopping waits for it (leadership lost, taken again)', async () => {
    const events = new MemoryEventStore();
    await fillLog(events, 2, 10);
    const broker = new FakeBroker();
    let release!: () => void;
    broker.hold = new Promise((r) => {
      release = r;
    });
    const checkpoints = new MemoryCheckpointStore();
    const forwarder = new KafkaForwarder({
      events,
      checkpoints,
      producer: () => broker.producer(),
      logger: silent,
    });
    const lost = new AbortController();
    const first = forwarder.run(lost.signal);
    await waitUntil(() => broker.inFlight === 1, 'a batch is in flight', 10_000);
    lost.abort(); // the first run now waits (grace) for the ack of its batch in flight
    const again = new AbortController();
    const second = forwarder.run(again.signal);
    await sleep(30);
    expect(broker.sends).toBe(1);
    broker.hold = undefined;
    release();
    await first;
    await waitUntil(
      async () => (await forwarder.status()).lag === 0 && broker.sends >= 1,
      'the forwarder caught up after a send',
      10_000,
    );
    again.abort();
    await second;
    expect(broker.maxInFlight).toBe(1);
    expect(broker.records.map((e) => e.position)).toEqual(Array.from({ length: 10 }, (_, i) => i + 1));
  });

  it('in a process that does not run it, status reads the stored checkpoint', async () => {
    const events = new MemoryEventStore();
    await fillLog(events, 2, 10);
    const checkpoints = new MemoryCheckpointStore();
    await checkpoints.save(FORWARDER_CHECKPOINT, { schemaVersion: 1, position: 7 });
    const idle = new KafkaForwarder({
      events,
      checkpoints,
      producer: () => new FakeBroker().producer(),
      logger: silent,
    });
    expect(await idle.status()).toEqual({
      state: 'stopped',
      position: 7,
      lag: 3,
      forwarded: 0,
      last_error: null,
    });
  });

  it('logs its lag periodically while it is behind', async () => {
    const events = new MemoryEventStore();
    await fillLog(events, 2, 10);
    const broker = new FakeBroker();
    broker.down = true;
    const lines: string[] = [];
    const logger = createLogger('info', { write: (line: string) => void lines.push(line) });
    start({ events, producer: () => broker.producer(), logger, lagLogEveryMs: 20 });
    await waitUntil(
      () => lines.filter((l) => l.includes('behind the log')).length >= 2,
      'two lines say it is behind the log',
      10_000,
    );
    const entry = JSON.parse(lines.find((l) => l.includes('behind the log'))!);
    expect(entry).toMatchObject({ level: 40, lag: 10, position: 0, state: 'connecting', lag_capped: false });
    expect(entry.last_error).toContain('ECONNREFUSED');
    // One warning for the outage, not one per attempt.
    expect(lines.filter((l) => l.includes('cannot deliver')).length).toBe(1);
  });

  it('resubscribes after the log subscription fails, from where it got', async () => {
    const store = new MemoryEventStore();
    await fillLog(store, 3, 30);
    let failed = false;
    const events = withSubscribe(store, {
      subscribePages(options: SubscribeOptions) {
        const inner = store.subscribePages(options);
        return (async function* () {
          for await (const page of inner) {
            if (!failed && page.type !== '$caught_up' && page.events.some((e) => e.position === 17)) {
              failed = true;
              throw new Error('connection terminated');
            }
            yield page;
          }
        })();
      },
    });
    const broker = new FakeBroker();
    const { forwarder } = start({ events, producer: () => broker.producer(), batchSize: 4 });
    await waitUntil(async () => (await forwarder.status()).lag === 0, 'the forwarder caught up', 10_000);
    expect(failed).toBe(true);
    expect(broker.records.map((e) => e.position)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
  });

  it('reads no further ahead than its queue holds while the broker is down', async () => {
    const store = new MemoryEventStore();
    await fillLog(store, 3, 2_000);
    let yielded = 0;
    const events = withSubscribe(store, {
      subscribePages(options: SubscribeOptions) {
        const inner = store.subscribePages(options);
        return (async function* () {
          for await (const page of inner) {
            yielded += page.type === '$caught_up' ? 0 : page.events.length;
            yield page;
          }
        })();
      },
    });
    const broker = new FakeBroker();
    broker.down = true;
    start({ events, producer: () => broker.producer(), batchSize: 50 });
    await waitUntil(() => broker.connects >= 3, 'the broker was tried three times', 10_000);
    await sleep(50);
    // The queue's four batches, and the page the one in hand came in.
    expect(yielded).toBeLessThanOrEqual(50 * 5);
  });
});

describe('toKafkaMessage', () => {
  it('key = stream id; value = the event as JSON; headers = id, type, position', async () => {
    const events = new MemoryEventStore();
    await events.append(
      'studio-acme',
      [{ id: '7d0c2c1e-8f5e-4d1a-9b53-0a1f2f0c9e11', type: 'StudioCreated', data: { name: 'Acme' } }],
      {
        metadata: { actor: 'admin', requestId: 'r1' },
      },
    );
    const [event] = await events.readAll();
    const message = toKafkaMessage({ ...event!, extra: 'not forwarded' } as StoredEvent);
    expect(message.key).toBe('studio-acme');
    expect(message.headers).toEqual({
      event_id: '7d0c2c1e-8f5e-4d1a-9b53-0a1f2f0c9e11',
      type: 'StudioCreated',
      position: '1',
    });
    expect(JSON.parse(String(message.value))).toEqual({
      id: '7d0c2c1e-8f5e-4d1a-9b53-0a1f2f0c9e11',
      streamId: 'studio-acme',
      revision: 0,
      position: 1,
      type: 'StudioCreated',
      data: { name: 'Acme' },
      metadata: { actor: 'admin', requestId: 'r1' },
      createdAt: event!.createdAt,
    });
  });
});
