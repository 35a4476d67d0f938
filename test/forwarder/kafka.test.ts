/**
 * The Kafka forwarder against librdkafka's mock cluster (started by Debian's kcat; `.ci/run`
 * installs it) and, when KAFKA_BROKERS is set, the same suite against that broker. Without kcat the
 * mock suite is reported as not run (with CI=true it fails instead).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Partitioners } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseBrokers } from '../../services/forwarder/gateway.ts';
import {
  FORWARDER_CHECKPOINT,
  KafkaForwarder,
  type KafkaForwarderOptions,
} from '../../services/forwarder/kafka.ts';
import { kafkaProducer } from '../../services/forwarder/producer.ts';
import { startGateway } from '../../services/gateway/gateway.ts';
import { loadConfig } from '../../shared/config.ts';
import { MemoryEventStore } from '../../shared/event-store/memory.ts';
import { createLogger } from '../../shared/logger.ts';
import {
  type Checkpoint,
  type CheckpointStore,
  MemoryCheckpointStore,
} from '../../shared/projections/checkpoints.ts';
import { waitUntil } from '../../shared/testing/wait.ts';
import { untilSealed } from '../audit/until-sealed.ts';
import {
  type Cluster,
  checkDelivery,
  createTopic,
  FileCheckpointStore,
  fillLog,
  freshTopic,
  KCAT,
  partitionCount,
  readTopic,
  startMockCluster,
  streamSizes,
  type TopicRecord,
} from './support.ts';

const CI = process.env.CI === 'true';
const REAL = parseBrokers(process.env.KAFKA_BROKERS);
const root = join(import.meta.dirname, '..', '..');
const silent = createLogger('silent');

interface Target {
  name: string;
  /** Why the suite does not run here; undefined when it runs. */
  notRun: string | undefined;
  start(): Promise<Cluster>;
}

const TARGETS: Target[] = [
  {
    name: 'librdkafka mock cluster (kcat)',
    // With CI=true it runs regardless and fails when kcat is missing.
    notRun: KCAT || CI ? undefined : 'kcat is not installed (apt-get install kcat; see .ci/run)',
    start: startMockCluster,
  },
  {
    name: 'the broker at KAFKA_BROKERS',
    notRun: REAL.length > 0 ? undefined : 'KAFKA_BROKERS is not set',
    start: async () => ({ brokers: REAL, mock: false, stop: async () => undefined }),
  },
];

function forwarder(
  cluster: Cluster,
  topic: string,
  options: Partial<KafkaForwarderOptions> & Pick<KafkaForwarderOptions, 'events'>,
) {
  return new KafkaForwarder({
    checkpoints: new MemoryCheckpointStore(),
    producer: () => kafkaProducer({ brokers: cluster.brokers, topic, logger: silent }),
    logger: silent,
    retry: { initialMs: 50, maxMs: 500 },
    ...options,
  });
}

const keyed = (records: TopicRecord[]) => records.map((r) => ({ key: r.key, revision: r.value.revision }));

for (const target of TARGETS) {
  describe(`kafka forwarder → ${target.name}`, { timeout: 90_000 }, () => {
    if (target.notRun !== undefined) {
      // Reported as not run (skipped, with the reason in its name), never as passed.
      it.skipIf(true)(`not run: ${target.notRun}`, () => undefined);
      return;
    }
    let cluster: Cluster;
    beforeAll(async () => {
      cluster = await target.start();
    });
    afterAll(async () => {
      await cluster?.stop();
    });

    it('every event arrives once, in order per stream key, with its key, headers and JSON value', async () => {
      const topic = freshTopic('studio-all');
      await createTopic(cluster, topic);
      const events = new MemoryEventStore();
      await fillLog(events, 8, 1_000);
      const checkpoints = new MemoryCheckpointStore();
      const f = forwarder(cluster, topic, { events, checkpoints, batchSize: 100 });
      const controller = new AbortController();
      const running = f.run(controller.signal);
      await fillLog(events, 8, 300, 1_000); // these arrive while it forwards
      await waitUntil(async () => (await f.status()).lag === 0, 'the forwarder caught up');
      const status = await f.status();
      controller.abort();
      await running;

      const head = await events.headPosition();
      expect(status).toMatchObject({ state: 'running', position: head, lag: 0, last_error: null });
      expect((await checkpoints.load(FORWARDER_CHECKPOINT))?.position).toBe(head);

      const records = await readTopic(cluster.brokers, topic);
      const delivery = checkDelivery(keyed(records), await streamSizes(events));
      expect(delivery.problems).toEqual([]);
      expect(delivery).toMatchObject({ records: 1_300, duplicates: 0 });
      // Each stream in the one partition kafkajs' default (Java-compatible murmur2) partitioner picks.
      const partitions = await partitionCount(cluster.brokers, topic);
      const partitioner = Partitioners.DefaultPartitioner();
      const partitionMetadata = Array.from({ length: partitions }, (_, partitionId) => ({
        partitionId,
        leader: 0,
        partitionErrorCode: 0,
        replicas: [0],
        isr: [0],
      }));
      for (const r of records) {
        const expected = partitioner({ topic, partitionMetadata, message: { key: r.key, value: null } });
        expect(r.partition, r.key).toBe(expected);
      }
      expect(new Set(records.map((r) => r.partition)).size).toBeGreaterThan(1);

      const [first] = await events.readAll({ limit: 1 });
      const record = records.find((r) => r.value.id === first!.id)!;
      expect(record.key).toBe(first!.streamId);
      expect(record.headers).toEqual({
        event_id: first!.id,
        type: 'Ticked',
        position: String(first!.position),
      });
      expect(record.value).toEqual(JSON.parse(JSON.stringify(first)));
    });

    it('while the broker is unreachable it retries, then delivers everything in order', async () => {
      const topic = freshTopic('studio-down');
      await createTopic(cluster, topic);
      const events = new MemoryEventStore();
      await fillLog(events, 4, 200);
      const port = await freePort();
      const checkpoints = new MemoryCheckpointStore();
      const f = new KafkaForwarder({
        events,
        checkpoints,
        producer: () => kafkaProducer({ brokers: [`127.0.0.1:${port}`], topic, logger: silent }),
        logger: silent,
        retry: { initialMs: 50, maxMs: 300 },
        batchSize: 50,
      });
      const controller = new AbortController();
      const running = f.run(controller.signal);
      let relay: Awaited<ReturnType<typeof tcpRelay>> | undefined;
      try {
        await waitUntil(async () => (await f.status()).last_error !== null, 'a failed attempt');
        await sleep(500);
        const down = await f.status();
        expect(down).toMatchObject({ state: 'connecting', position: 0, lag: 200 });
        expect(await checkpoints.load(FORWARDER_CHECKPOINT)).toBeUndefined();

        // The broker comes up (a TCP relay to it on the port the forwarder keeps trying).
        relay = await tcpRelay(port, cluster.brokers[0]!);
        await fillLog(events, 4, 40, 200);
        await waitUntil(async () => (await f.status()).lag === 0, 'the forwarder caught up', 60_000);
      } finally {
        controller.abort();
        await running;
        await relay?.close();
      }
      const delivery = checkDelivery(
        keyed(await readTopic(cluster.brokers, topic)),
        await streamSizes(events),
      );
      expect(delivery.problems).toEqual([]);
      expect(delivery.unique).toBe(240);
    });

    it('a crash after the ack, before the checkpoint: the restart misses nothing (duplicates counted)', async () => {
      const topic = freshTopic('studio-crash');
      await createTopic(cluster, topic);
      const events = new MemoryEventStore();
      await fillLog(events, 5, 1_000);
      const stored = new MemoryCheckpointStore();
      // The first process dies when it is about to save its third checkpoint: the broker has
      // acknowledged that batch, the checkpoint still says the second one.
      const crash = new AbortController();
      let saves = 0;
      const dying: CheckpointStore = {
        load: (name) => stored.load(name),
        reset: (name) => stored.reset(name),
        async save<State>(name: string, checkpoint: Checkpoint<State>) {
          if (++saves >= 3) {
            crash.abort();
            throw new Error('the process died');
          }
          await stored.save(name, checkpoint);
        },
      };
      await forwarder(cluster, topic, { events, checkpoints: dying, batchSize: 100 }).run(crash.signal);
      const resumeFrom = (await stored.load(FORWARDER_CHECKPOINT))!.position;
      expect(resumeFrom).toBe(200);

      const second = forwarder(cluster, topic, { events, checkpoints: stored, batchSize: 100 });
      const controller = new AbortController();
      const running = second.run(controller.signal);
      await fillLog(events, 5, 100, 1_000);
      await waitUntil(async () => (await second.status()).lag === 0, 'the second forwarder caught up');
      controller.abort();
      await running;

      const delivery = checkDelivery(
        keyed(await readTopic(cluster.brokers, topic)),
        await streamSizes(events),
      );
      report(target, 'crash between ack and checkpoint', 1_100, delivery.duplicates);
      expect(delivery.problems).toEqual([]);
      expect(delivery.unique).toBe(1_100);
      expect(delivery.duplicates).toBe(100); // exactly the batch acknowledged but not checkpointed
    });

    it('kill -9 of the process running it: the restart misses nothing (duplicates counted)', async () => {
      const topic = freshTopic('studio-kill');
      await createTopic(cluster, topic);
      const dir = await mkdtemp(join(tmpdir(), 'studio-forwarder-'));
      const file = join(dir, 'checkpoints.json');
      const STREAMS = 10;
      const EVENTS = 20_000;
      const BATCH = 200;
      let child: ChildProcess | undefined;
      try {
        child = spawn(process.execPath, ['--import', 'tsx', 'test/forwarder/forwarder-process.ts'], {
          cwd: root,
          stdio: ['ignore', 'ignore', 'pipe'],
          env: {
            ...process.env,
            FWD_BROKERS: cluster.brokers.join(','),
            FWD_TOPIC: topic,
            FWD_CHECKPOINTS: file,
            FWD_STREAMS: String(STREAMS),
            FWD_EVENTS: String(EVENTS),
            FWD_BATCH: String(BATCH),
          },
        });
        let stderr = '';
        child.stderr!.on('data', (chunk) => {
          stderr += chunk;
        });
        const exited = new Promise((resolve) => child!.once('exit', resolve));
        const position = async () => {
          if (child!.exitCode !== null) throw new Error(`the forwarder process exited: ${stderr}`);
          try {
            return JSON.parse(await readFile(file, 'utf8'))[FORWARDER_CHECKPOINT]?.position ?? 0;
          } catch {
            return 0;
          }
        };
        // Kill it in the middle of the log, without warning.
        await waitUntil(
          async () => (await position()) >= EVENTS / 4,
          'the child forwarded a quarter',
          60_000,
        );
        child.kill('SIGKILL');
        await exited;
        const killedAt = await position().catch(() => undefined);
        const resumeFrom = (await new FileCheckpointStore(file).load(FORWARDER_CHECKPOINT))!.position;
        expect(resumeFrom).toBeLessThan(EVENTS);

        const events = new MemoryEventStore();
        await fillLog(events, STREAMS, EVENTS); // the same log (ids, streams, order)
        const second = forwarder(cluster, topic, {
          events,
          checkpoints: new FileCheckpointStore(file),
          batchSize: BATCH,
        });
        const controller = new AbortController();
        const running = second.run(controller.signal);
        await waitUntil(
          async () => (await second.status()).lag === 0,
          'the restarted forwarder caught up',
          60_000,
        );
        controller.abort();
        await running;

        const delivery = checkDelivery(
          keyed(await readTopic(cluster.brokers, topic)),
          await streamSizes(events),
        );
        report(target, `kill -9 at checkpoint ${killedAt ?? resumeFrom}`, EVENTS, delivery.duplicates);
        expect(delivery.problems).toEqual([]);
        expect(delivery.unique).toBe(EVENTS);
        // At most the batches in flight when it died: one at a time, a few more if kafkajs retried.
        if (cluster.mock) expect(delivery.duplicates).toBeLessThanOrEqual(BATCH);
      } finally {
        if (child && child.exitCode === null) child.kill('SIGKILL');
        await rm(dir, { recursive: true, force: true });
      }
    });

    it('the gateway runs it when KAFKA_BROKERS is set and shows it in GET /health', async () => {
      const topic = freshTopic('studio-gateway');
      await createTopic(cluster, topic);
      const dataDir = await mkdtemp(join(tmpdir(), 'studio-forwarder-gw-'));
      const adminKey = `adm_${'k'.repeat(40)}`;
      const gateway = await startGateway({
        config: loadConfig({
          STUDIO_EVENT_STORE: 'memory',
          STUDIO_DATA_DIR: dataDir,
          ADMIN_SECRET_KEY: adminKey,
          STUDIO_MASTER_KEY: 'c'.repeat(64),
          STUDIO_GATEWAY_PORT: '0',
          KAFKA_BROKERS: cluster.brokers.join(','),
          KAFKA_TOPIC: topic,
          LOG_LEVEL: 'silent',
        }),
        processEnv: {},
      });
      try {
        for (const name of ['acme', 'globex']) {
          const res = await fetch(`${gateway.url}/v1/studios/create`, {
            method: 'POST',
            headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
            body: JSON.stringify({ name, studio_id: name }),
          });
          expect(res.status).toBe(201);
        }
        // Once the sealer has sealed them, the log stays as it is (a seal is not sealed again).
        await untilSealed(gateway.ctx.events, await gateway.ctx.events.headPosition());
        const head = await gateway.ctx.events.headPosition();
        // biome-ignore lint/suspicious/noExplicitAny: the parsed health document.
        let health: any;
        await waitUntil(async () => {
          health = await (await fetch(`${gateway.url}/health`)).json();
          return health.forwarder?.position === head;
        }, 'GET /health shows the forwarder caught up');
        expect(health.forwarder).toEqual({
          state: 'running',
          position: head,
          lag: 0,
          forwarded: head,
          last_error: null,
          topic,
          leader: true,
        });
        const records = await readTopic(cluster.brokers, topic);
        const log = await gateway.ctx.events.readAll();
        expect(records.map((r) => r.value.id).sort()).toEqual(log.map((e) => e.id).sort());
      } finally {
        await gateway.close();
        await rm(dataDir, { recursive: true, force: true });
      }
    });
  });
}

describe('kafka forwarder in the gateway without KAFKA_BROKERS', () => {
  it('is not started and GET /health has no forwarder', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'studio-forwarder-off-'));
    const gateway = await startGateway({
      config: loadConfig({
        STUDIO_EVENT_STORE: 'memory',
        STUDIO_DATA_DIR: dataDir,
        ADMIN_SECRET_KEY: `adm_${'k'.repeat(40)}`,
        STUDIO_MASTER_KEY: 'c'.repeat(64),
        STUDIO_GATEWAY_PORT: '0',
        LOG_LEVEL: 'silent',
      }),
      processEnv: {},
    });
    try {
      const health = (await (await fetch(`${gateway.url}/health`)).json()) as { status: string };
      expect(health.status).toBe('ok');
      expect(health).not.toHaveProperty('forwarder');
    } finally {
      await gateway.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

/** Prints the duplicate count into the test output (duplicates are allowed: at least once). */
function report(target: Target, what: string, events: number, duplicates: number) {
  console.log(
    `[forwarder] ${target.name}: ${what}: ${events} events, ${duplicates} duplicates after the restart`,
  );
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Listens on `port` and relays every connection to `target` (host:port). */
async function tcpRelay(port: number, target: string): Promise<{ close(): Promise<void> }> {
  const [host, targetPort] = [target.slice(0, target.lastIndexOf(':')), Number(target.split(':').pop())];
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = tcpConnect(targetPort, host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
      s.on('close', () => sockets.delete(s));
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
