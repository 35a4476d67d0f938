/**
 * Kafka forwarder throughput: events per second forwarded from the log to librdkafka's mock
 * cluster (started by Debian's kcat), with acks=-1 and one batch in flight, for several batch sizes.
 *   node --import tsx bench/forwarder/index.ts     (BENCH_QUICK=1 for a short run)
 *   BENCH_FORWARDER_EVENTS=N   events in the log (default 50,000; quick 10,000)
 *   BENCH_REPS=N               runs per batch size (default 3; quick 1)
 */
import { cpus } from 'node:os';
import { FORWARDER_CHECKPOINT, KafkaForwarder } from '../../services/forwarder/kafka.ts';
import { toKafkaMessage } from '../../services/forwarder/message.ts';
import { type BatchProducer, kafkaProducer } from '../../services/forwarder/producer.ts';
import { MemoryEventStore } from '../../shared/event-store/memory.ts';
import { createLogger } from '../../shared/logger.ts';
import { MemoryCheckpointStore } from '../../shared/projections/checkpoints.ts';
import { type Cluster, freshTopic, KCAT, startMockCluster } from '../../test/forwarder/support.ts';
import { positiveFromEnv, switchFromEnv } from '../lib/env.ts';
import { round3, summarize } from '../lib/stats.ts';

const QUICK = switchFromEnv('BENCH_QUICK');
const EVENTS = positiveFromEnv('BENCH_FORWARDER_EVENTS', { integer: true }) ?? (QUICK ? 10_000 : 50_000);
const REPS = positiveFromEnv('BENCH_REPS', { integer: true }) ?? (QUICK ? 1 : 3);
const STREAMS = 200;
const BATCH_SIZES = [100, 500, 1_000, 5_000];

const log = (message: string) => process.stderr.write(`[bench:forwarder] ${message}\n`);
const silent = createLogger('silent');

/** A log shaped like Studio's: small JSON events over many streams, with request metadata. */
async function buildLog(count: number): Promise<MemoryEventStore> {
  const store = new MemoryEventStore();
  for (let i = 0; i < count; i++) {
    await store.append(
      `session-${i % STREAMS}`,
      [
        {
          type: 'MessageAppended',
          data: {
            role: i % 2 ? 'assistant' : 'user',
            text: `message ${i} `.repeat(8),
            tokens: 40 + (i % 17),
          },
        },
      ],
      { metadata: { actor: `token:${i % 7}`, requestId: `req-${i}`, correlationId: `corr-${i % 500}` } },
    );
  }
  return store;
}

interface Run {
  ms: number;
  ackMs: number[];
}

/** Forwards the whole log to a fresh topic; times it from start until the last checkpoint. */
async function forwardAll(cluster: Cluster, store: MemoryEventStore, batchSize: number): Promise<Run> {
  const topic = freshTopic('bench-forwarder');
  const head = await store.headPosition();
  const ackMs: number[] = [];
  const checkpoints = new MemoryCheckpointStore();
  let reachedHead!: () => void;
  const done = new Promise<void>((resolve) => {
    reachedHead = resolve;
  });
  const timed = {
    load: checkpoints.load.bind(checkpoints),
    reset: checkpoints.reset.bind(checkpoints),
    async save<State>(name: string, checkpoint: { schemaVersion: number; position: number; state?: State }) {
      await checkpoints.save(name, checkpoint);
      if (checkpoint.position >= head) reachedHead();
    },
  };
  const producer = (): BatchProducer => {
    const inner = kafkaProducer({ brokers: cluster.brokers, topic, logger: silent });
    return {
      ...inner,
      async send(events) {
        const started = performance.now();
        await inner.send(events);
        ackMs.push(performance.now() - started);
      },
    };
  };
  const forwarder = new KafkaForwarder({
    events: store,
    checkpoints: timed,
    producer,
    logger: silent,
    batchSize,
  });
  const controller = new AbortController();
  const started = performance.now();
  const running = forwarder.run(controller.signal);
  await done;
  const ms = performance.now() - started;
  controller.abort();
  await running;
  if ((await checkpoints.load(FORWARDER_CHECKPOINT))?.position !== head)
    throw new Error('did not reach the head');
  return { ms, ackMs };
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
};

export async function runForwarderBench(): Promise<string> {
  const out: string[] = ['## Kafka forwarder', ''];
  if (!KCAT) return `${out.join('\n')}not run: kcat is not installed (apt-get install kcat)\n`;
  log(`building a log of ${EVENTS.toLocaleString('en-US')} events`);
  const store = await buildLog(EVENTS);
  const [sample] = await store.readAll({ limit: 1 });
  const valueBytes = Buffer.byteLength(String(toKafkaMessage(sample!).value));
  const cluster = await startMockCluster();
  const rows: string[] = [];
  try {
    await forwardAll(cluster, await buildLog(2_000), 500); // warm-up (JIT, connections)
    for (const batchSize of BATCH_SIZES) {
      const runs: Run[] = [];
      for (let rep = 0; rep < REPS; rep++) {
        log(`batch ${batchSize}, run ${rep + 1}/${REPS}`);
        runs.push(await forwardAll(cluster, store, batchSize));
      }
      const rates = summarize(runs.map((r) => (EVENTS / r.ms) * 1000))!;
      const acks = runs.flatMap((r) => r.ackMs);
      const range = REPS > 1 ? ` (${round3(rates.min)}–${round3(rates.max)})` : '';
      rows.push(
        `| ${batchSize.toLocaleString('en-US')} | ${round3(rates.median)}${range} | ${round3(summarize(runs.map((r) => r.ms))!.median / 1000)} s | ${round3(percentile(acks, 50))} | ${round3(percentile(acks, 99))} |`,
      );
    }
  } finally {
    await cluster.stop();
  }
  out.push(
    `${EVENTS.toLocaleString('en-US')} events over ${STREAMS} streams (record value ≈ ${valueBytes} bytes of JSON, ` +
      "key = stream id, 3 headers), memory event store, forwarded to librdkafka's mock cluster " +
      '(kcat, 1 broker, 4 partitions) with kafkajs, `acks: -1`, one batch in flight, checkpoint after every ack. ' +
      `Time from start to the last checkpoint; median of ${REPS} run${REPS > 1 ? 's' : ''} (min–max). ` +
      `${cpus().length} × ${cpus()[0]?.model.trim() ?? 'cpu'}, Node ${process.version}.`,
    '',
    '| batch size | events/s | time | ack p50 ms | ack p99 ms |',
    '|---|---|---|---|---|',
    ...rows,
    '',
  );
  return out.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  runForwarderBench().then(
    (table) => process.stdout.write(`${table}\n`),
    (error) => {
      process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
