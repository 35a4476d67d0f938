import { type ChildProcess, spawn } from 'node:child_process';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Checkpoint,
  type CheckpointStore,
  MemoryCheckpointStore,
} from '../../projections/checkpoints.ts';
import { KafkaForwarder } from '../../services/forwarder/kafka.ts';
import { findExecutable } from '../../services/runtime/plugins/executables.ts';
import { MemoryEventStore } from '../../shared/event-store/memory.ts';
import { createLogger } from '../../shared/logger.ts';

// The forwarder against librdkafka's mock cluster, started by Debian's kcat (.ci/run installs it),
// and against a real broker when KAFKA_BROKERS is set.
const KCAT = findExecutable('kcat');
if (!KCAT && process.env.CI === 'true')
  throw new Error('kcat is missing: .ci/run installs it (apt-get install kcat)');
const REAL = process.env.KAFKA_BROKERS;

async function mockCluster(topic: string): Promise<{ brokers: string[]; stop(): void }> {
  const child: ChildProcess = spawn(
    KCAT!,
    ['-C', '-b', 'dummy:9092', '-X', 'test.mock.num.brokers=1', '-t', topic, '-d', 'mock', '-q'],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  const address = await new Promise<string>((resolve, reject) => {
    let err = '';
    const timer = setTimeout(
      () => reject(new Error(`kcat printed no mock cluster address: ${err.slice(0, 500)}`)),
      10_000,
    );
    child.stderr!.on('data', (chunk) => {
      err += chunk;
      const match = /bootstrap\.servers=(\S+)/.exec(err);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
  });
  return { brokers: [address], stop: () => child.kill('SIGKILL') };
}

/** Appends `count` events round-robin over `streams` streams. */
async function fill(store: MemoryEventStore, streams: number, count: number, from = 0) {
  for (let i = from; i < from + count; i++) {
    await store.append(`stream-${i % streams}`, [{ type: 'Ticked', data: { n: i } }], {
      metadata: { actor: 'test' },
    });
  }
}

/** Reads the topic from the beginning until at least `count` messages arrived and then none for `idleMs`. */
async function consume(brokers: string[], topic: string, count: number, idleMs = 0) {
  const kafka = new Kafka({ clientId: 'test-consumer', brokers, logLevel: logLevel.NOTHING });
  const consumer = kafka.consumer({ groupId: `g-${Math.random().toString(36).slice(2)}` });
  const got: {
    key: string;
    revision: number;
    id: string;
    position: number;
    headers: Record<string, string>;
  }[] = [];
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  let idle: NodeJS.Timeout | undefined;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`only ${got.length} of ${count} messages arrived`)),
      30_000,
    );
    void consumer.run({
      eachMessage: async ({ message }) => {
        const event = JSON.parse(message.value!.toString()) as {
          revision: number;
          id: string;
          position: number;
        };
        const headers = Object.fromEntries(
          Object.entries(message.headers ?? {}).map(([k, v]) => [k, String(v)]),
        );
        got.push({
          key: message.key!.toString(),
          revision: event.revision,
          id: event.id,
          position: event.position,
          headers,
        });
        if (got.length >= count) {
          clearTimeout(timer);
          clearTimeout(idle);
          idle = setTimeout(resolve, idleMs);
        }
      },
    });
  });
  await consumer.disconnect();
  return got;
}

/** Every stream's revisions all arrived, and in order per key (a re-send repeats a run, in order). */
function expectComplete(got: Awaited<ReturnType<typeof consume>>, streams: number, perStream: number) {
  const byKey = new Map<string, number[]>();
  for (const m of got) byKey.set(m.key, [...(byKey.get(m.key) ?? []), m.revision]);
  expect(byKey.size).toBe(streams);
  for (const [key, revisions] of byKey) {
    expect([...new Set(revisions)], key).toEqual(Array.from({ length: perStream }, (_, i) => i));
    // Each delivery is ordered: revisions only go back where a re-sent run starts over.
    const restarts = revisions.filter((r, i) => i > 0 && r <= revisions[i - 1]!).length;
    expect(restarts, key).toBeLessThanOrEqual(1);
  }
  return { duplicates: got.length - streams * perStream };
}

const suites = [
  ...(KCAT ? [{ name: 'librdkafka mock cluster (kcat)', start: mockCluster }] : []),
  ...(REAL
    ? [
        {
          name: `the broker at KAFKA_BROKERS`,
          start: async () => ({ brokers: REAL.split(','), stop: () => undefined }),
        },
      ]
    : []),
];

describe.skipIf(REAL !== undefined)('kafka forwarder against a real broker', () => {
  it.skipIf(REAL === undefined)('not run: KAFKA_BROKERS is not set', () => undefined);
});

for (const suite of suites) {
  describe(`kafka forwarder → ${suite.name}`, { timeout: 60_000 }, () => {
    let cluster: Awaited<ReturnType<typeof mockCluster>>;
    beforeAll(async () => {
      cluster = await suite.start(`t-${Date.now()}`);
    });
    afterAll(() => cluster?.stop());

    it('publishes every event once, in order per stream key, with id, type and position headers', async () => {
      const topic = `studio-events-${Date.now()}`;
      const store = new MemoryEventStore();
      await fill(store, 5, 200);
      const checkpoints = new MemoryCheckpointStore();
      const forwarder = new KafkaForwarder({
        events: store,
        checkpoints,
        brokers: cluster.brokers,
        topic,
        logger: createLogger('silent'),
      });
      const controller = new AbortController();
      const running = forwarder.run(controller.signal);
      await fill(store, 5, 50, 200); // some arrive live
      const got = await consume(cluster.brokers, topic, 250);
      controller.abort();
      await running;
      expect(expectComplete(got, 5, 50).duplicates).toBe(0);
      const all = await store.readAll();
      const first = got.find((m) => m.id === all[0]!.id)!;
      expect(first.headers).toEqual({
        event_id: all[0]!.id,
        type: 'Ticked',
        position: String(all[0]!.position),
      });
      expect((await checkpoints.load(FORWARDER))?.position).toBe(all.at(-1)!.position);
      expect((await forwarder.status()).lag).toBe(0);
    });

    it('after a crash between the broker ack and the checkpoint, a restart misses nothing (duplicates allowed, counted)', async () => {
      const topic = `studio-crash-${Date.now()}`;
      const store = new MemoryEventStore();
      await fill(store, 4, 200);
      const real = new MemoryCheckpointStore();
      // The first process saves its first checkpoint, then "dies" right after the broker acknowledged
      // its second batch and before that checkpoint was saved: the second batch will be sent again.
      let saves = 0;
      const controller = new AbortController();
      const crashing: CheckpointStore = {
        load: (name) => real.load(name),
        reset: (name) => real.reset(name),
        async save<State>(name: string, checkpoint: Checkpoint<State>) {
          if (++saves >= 2) {
            controller.abort();
            throw new Error('process killed');
          }
          await real.save(name, checkpoint);
          void fill(store, 4, 200, 200);
        },
      };
      const first = new KafkaForwarder({
        events: store,
        checkpoints: crashing,
        brokers: cluster.brokers,
        topic,
        logger: createLogger('silent'),
      });
      await first.run(controller.signal).catch(() => undefined);
      const resumedFrom = (await real.load(FORWARDER))?.position ?? 0;
      expect(resumedFrom).toBeGreaterThan(0);
      expect(resumedFrom).toBeLessThan((await store.readAll()).at(-1)!.position);

      const second = new KafkaForwarder({
        events: store,
        checkpoints: real,
        brokers: cluster.brokers,
        topic,
        logger: createLogger('silent'),
      });
      const again = new AbortController();
      const running = second.run(again.signal);
      await fill(store, 4, 40, 400);
      const total = 440;
      for (let i = 0; i < 200 && (await second.status()).lag > 0; i++)
        await new Promise((r) => setTimeout(r, 20));
      again.abort();
      await running;
      // Everything must arrive; re-sent ones come on top.
      const got = await consume(cluster.brokers, topic, total, 1_000);
      const { duplicates } = expectComplete(got, 4, 110);
      console.log(
        `kafka forwarder crash test (${suite.name}): ${total} events, ${duplicates} duplicates after the restart`,
      );
      expect(duplicates).toBeGreaterThan(0); // the batch acknowledged but not checkpointed came again
    });
  });
}

const FORWARDER = 'kafka-forwarder';
