/**
 * Helpers of the forwarder's suites and bench: librdkafka's mock cluster (started by Debian's kcat),
 * a deterministic log, reading a topic back, and the delivery check (complete, in order per key).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { Kafka, logLevel } from 'kafkajs';
import type { MemoryEventStore } from '../../shared/event-store/memory.ts';
import { findExecutable } from '../../shared/executables.ts';
import type { Checkpoint, CheckpointStore } from '../../shared/projections/checkpoints.ts';

export const KCAT = findExecutable('kcat');

export interface Cluster {
  brokers: string[];
  /** True for the mock cluster: it creates topics on first use, with 4 partitions. */
  mock: boolean;
  stop(): Promise<void>;
}

/** Starts librdkafka's mock cluster in a kcat process; resolves with its bootstrap address. */
export async function startMockCluster(): Promise<Cluster> {
  if (!KCAT) throw new Error('kcat is not installed (apt-get install kcat)');
  const child: ChildProcess = spawn(
    KCAT,
    ['-C', '-b', 'dummy:9092', '-X', 'test.mock.num.brokers=1', '-t', 'mock-keepalive', '-d', 'mock', '-q'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    const address = await new Promise<string>((resolve, reject) => {
      let err = '';
      const timer = setTimeout(
        () => reject(new Error(`kcat printed no mock cluster address: ${err.slice(0, 500)}`)),
        10_000,
      );
      child.once('exit', (code) => reject(new Error(`kcat exited (${code}): ${err.slice(0, 500)}`)));
      child.stderr!.on('data', (chunk) => {
        if (err.length > 100_000) return; // only the first lines matter; keep draining the pipe
        err += chunk;
        const match = /bootstrap\.servers=(\S+)/.exec(err);
        if (match) {
          clearTimeout(timer);
          resolve(match[1]!);
        }
      });
    });
    return {
      brokers: [address],
      mock: true,
      async stop() {
        if (child.exitCode === null) child.kill('SIGKILL');
        await exited;
      },
    };
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
}

/** A topic name nobody used before. */
export const freshTopic = (prefix: string) => `${prefix}-${Date.now()}-${randomBytes(3).toString('hex')}`;

/**
 * On a real broker, creates the topic with 4 partitions. The mock cluster creates topics on first
 * use (4 partitions) and has no controller for CreateTopics; a broker that refuses is left to
 * auto-create it too.
 */
export async function createTopic(cluster: Cluster, topic: string): Promise<void> {
  if (cluster.mock) return;
  const admin = new Kafka({
    clientId: 'studio-test',
    brokers: cluster.brokers,
    logLevel: logLevel.NOTHING,
    retry: { retries: 1 },
  }).admin();
  await admin.connect();
  try {
    await admin.createTopics({ topics: [{ topic, numPartitions: 4 }], waitForLeaders: true });
  } catch (error) {
    console.log(`[forwarder] could not create ${topic} (${String(error)}); relying on auto-creation`);
  } finally {
    await admin.disconnect();
  }
}

/** A UUID made from a number, so two processes building the same log get the same ids. */
export const eventId = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;

/** Appends events `from`..`from + count - 1`, round-robin over `streams` streams, one append each. */
export async function fillLog(store: MemoryEventStore, streams: number, count: number, from = 0) {
  for (let i = from; i < from + count; i++) {
    await store.append(
      `stream-${i % streams}`,
      [{ id: eventId(i), type: 'Ticked', data: { n: i, note: 'an event of a typical size, give or take' } }],
      { metadata: { actor: 'test', requestId: `req-${i}` } },
    );
  }
}

export interface TopicRecord {
  key: string;
  partition: number;
  offset: number;
  headers: { [name: string]: string };
  // biome-ignore lint/suspicious/noExplicitAny: the parsed value, checked by the assertions.
  value: any;
}

/** Every record of the topic, from the beginning to the end it had when called, via a kafkajs consumer. */
export async function readTopic(
  brokers: string[],
  topic: string,
  timeoutMs = 30_000,
): Promise<TopicRecord[]> {
  const kafka = new Kafka({ clientId: 'studio-test-reader', brokers, logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  const ends = new Map<number, number>();
  try {
    for (const p of await admin.fetchTopicOffsets(topic)) {
      if (Number(p.high) > Number(p.low)) ends.set(p.partition, Number(p.high));
    }
  } finally {
    await admin.disconnect();
  }
  const records: TopicRecord[] = [];
  if (ends.size === 0) return records;
  const consumer = kafka.consumer({
    groupId: `studio-test-${randomBytes(6).toString('hex')}`,
    sessionTimeout: 10_000,
    rebalanceTimeout: 5_000,
    heartbeatInterval: 500,
    maxWaitTimeInMs: 100,
  });
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    const pending = new Set(ends.keys());
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(new Error(`read ${records.length} records; partitions ${[...pending]} not at their end`)),
        timeoutMs,
      );
      void consumer
        .run({
          eachMessage: async ({ partition, message }) => {
            const offset = Number(message.offset);
            const end = ends.get(partition);
            if (end === undefined || offset >= end) return;
            records.push({
              key: message.key!.toString(),
              partition,
              offset,
              headers: Object.fromEntries(
                Object.entries(message.headers ?? {}).map(([k, v]) => [k, String(v)]),
              ),
              value: JSON.parse(message.value!.toString()),
            });
            if (offset + 1 >= end) pending.delete(partition);
            if (pending.size === 0) {
              clearTimeout(timer);
              resolve();
            }
          },
        })
        .catch(reject);
    });
  } finally {
    await consumer.disconnect();
  }
  return records;
}

/** How many partitions the topic has. */
export async function partitionCount(brokers: string[], topic: string): Promise<number> {
  const admin = new Kafka({ clientId: 'studio-test-reader', brokers, logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
    return topics[0]!.partitions.length;
  } finally {
    await admin.disconnect();
  }
}

export interface Delivery {
  records: number;
  unique: number;
  duplicates: number;
  /** Gaps, reorderings, missing or unexpected events; empty when the delivery is right. */
  problems: string[];
}

/**
 * Checks that every stream's events all arrived and that, read in order, each key's new revisions
 * come exactly one after another (a re-sent run repeats revisions already seen: counted as
 * duplicates, allowed). `expected` maps each stream id to its number of events.
 */
export function checkDelivery(
  records: readonly { key: string; revision: number }[],
  expected: ReadonlyMap<string, number>,
): Delivery {
  const problems: string[] = [];
  const highest = new Map<string, number>();
  let duplicates = 0;
  for (const { key, revision } of records) {
    const seen = highest.get(key) ?? -1;
    if (revision <= seen) duplicates++;
    else if (revision === seen + 1) highest.set(key, revision);
    else if (problems.length < 20) problems.push(`${key}: revision ${revision} after ${seen}`);
  }
  for (const [key, count] of expected) {
    const got = (highest.get(key) ?? -1) + 1;
    if (got !== count) problems.push(`${key}: ${got} of ${count} events in order`);
  }
  for (const key of highest.keys()) if (!expected.has(key)) problems.push(`${key}: not in the log`);
  return { records: records.length, unique: records.length - duplicates, duplicates, problems };
}

/** How many events each stream of `store` has. */
export async function streamSizes(store: MemoryEventStore): Promise<Map<string, number>> {
  const sizes = new Map<string, number>();
  for (const event of await store.readAll()) sizes.set(event.streamId, event.revision + 1);
  return sizes;
}

/** A CheckpointStore in one JSON file (written atomically), shared by a parent and a child process. */
export class FileCheckpointStore implements CheckpointStore {
  constructor(readonly path: string) {}

  async load<State>(name: string): Promise<Checkpoint<State> | undefined> {
    return (await this.#read())[name] as Checkpoint<State> | undefined;
  }

  async save<State>(name: string, checkpoint: Checkpoint<State>): Promise<void> {
    const copy = structuredClone(checkpoint);
    const all = await this.#read();
    all[name] = copy;
    const tmp = `${this.path}.${process.pid}.tmp`;
    await writeFile(tmp, JSON.stringify(all));
    await rename(tmp, this.path);
  }

  async reset(name: string): Promise<void> {
    const all = await this.#read();
    delete all[name];
    await writeFile(this.path, JSON.stringify(all));
  }

  async #read(): Promise<{ [name: string]: Checkpoint<unknown> }> {
    try {
      return JSON.parse(await readFile(this.path, 'utf8'));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
      throw error;
    }
  }
}
