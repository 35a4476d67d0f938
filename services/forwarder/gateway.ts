import type { ProcessConfig } from '../../shared/config.ts';
import type { GatewayContext } from '../../shared/gateway-context.ts';
import type { Leadership } from '../../shared/leadership.ts';
import { FORWARDER_CHECKPOINT, type ForwarderStatus, KafkaForwarder } from './kafka.ts';
import type { BatchProducer, KafkaProducerOptions } from './producer.ts';

/** The forwarder as the gateway runs it: one per log (runAlone, or runAsLeader on PostgreSQL). */
export interface GatewayForwarder {
  start(): void;
  /** The `forwarder` object of GET /health. */
  status(): Promise<ForwarderStatus & { topic: string; leader: boolean }>;
  stop(): Promise<void>;
}

/** `KAFKA_BROKERS=host:port,host:port` → the list; empty when unset. */
export function parseBrokers(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** The gateway's forwarder when KAFKA_BROKERS is set, otherwise undefined. */
export function gatewayForwarder(config: ProcessConfig, ctx: GatewayContext): GatewayForwarder | undefined {
  const brokers = parseBrokers(config.kafkaBrokers);
  if (brokers.length === 0) return undefined;
  const logger = ctx.logger.child({ component: 'kafka-forwarder' });
  const topic = config.kafkaTopic;
  const forwarder = new KafkaForwarder({
    events: ctx.events,
    checkpoints: ctx.checkpoints,
    producer: () => lazyKafkaProducer({ brokers, topic, clientId: config.kafkaClientId, logger }),
    logger,
  });
  let leadership: Leadership | undefined;
  return {
    start() {
      leadership ??= ctx.singleton(FORWARDER_CHECKPOINT, forwarder);
    },
    async status() {
      return { ...(await forwarder.status()), topic, leader: leadership?.leading ?? false };
    },
    async stop() {
      await leadership?.stop();
    },
  };
}

/** A kafkajs producer whose library is loaded on its first connect: a gateway without Kafka never loads it. */
function lazyKafkaProducer(options: KafkaProducerOptions): BatchProducer {
  let loaded: Promise<BatchProducer> | undefined;
  const producer = () => {
    loaded ??= import('./producer.ts').then(({ kafkaProducer }) => kafkaProducer(options));
    return loaded;
  };
  return {
    connect: async () => (await producer()).connect(),
    send: async (events) => (await producer()).send(events),
    disconnect: async () => {
      if (loaded) await (await loaded).disconnect();
    },
  };
}

/** What GET /health adds: `{ forwarder: {...} }`, or nothing when there is no forwarder. */
export async function forwarderHealth(
  forwarder: GatewayForwarder | undefined,
): Promise<{ forwarder?: Awaited<ReturnType<GatewayForwarder['status']>> }> {
  return forwarder ? { forwarder: await forwarder.status() } : {};
}
