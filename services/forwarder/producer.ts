import { Kafka, type logCreator, logLevel, Partitioners } from 'kafkajs';
import type { StoredEvent } from '../../shared/event-store/types.ts';
import type { Logger } from '../../shared/logger.ts';
import { toKafkaMessage } from './message.ts';

/** What the forwarder needs of a Kafka producer (tests substitute a flaky one). */
export interface BatchProducer {
  connect(): Promise<void>;
  /** Resolves only once the broker acknowledged every record (`acks: -1`: all in-sync replicas). */
  send(events: readonly StoredEvent[]): Promise<void>;
  disconnect(): Promise<void>;
}

export interface KafkaProducerOptions {
  brokers: string[];
  topic: string;
  clientId?: string;
  logger: Logger;
}

/**
 * A kafkajs producer for one topic. Not idempotent (librdkafka's mock cluster and some managed
 * brokers refuse it); order per key still holds because the forwarder has one batch in flight at a
 * time and a failed batch is sent again, whole, before anything after it.
 */
export function kafkaProducer(options: KafkaProducerOptions): BatchProducer {
  const kafka = new Kafka({
    clientId: options.clientId ?? 'studio',
    brokers: options.brokers,
    connectionTimeout: 3_000,
    requestTimeout: 30_000,
    // Short inner retries: the forwarder retries the whole batch itself, with its own backoff.
    retry: { retries: 2, initialRetryTime: 100, maxRetryTime: 1_000 },
    logLevel: logLevel.WARN,
    logCreator: toPino(options.logger),
  });
  const producer = kafka.producer({
    idempotent: false,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: true,
    createPartitioner: Partitioners.DefaultPartitioner,
  });
  return {
    connect: () => producer.connect(),
    async send(events) {
      await producer.send({
        topic: options.topic,
        acks: -1,
        timeout: 30_000,
        messages: events.map(toKafkaMessage),
      });
    },
    disconnect: () => producer.disconnect(),
  };
}

/** kafkajs' own log lines, at debug: the forwarder logs what matters (failures, lag) itself. */
function toPino(logger: Logger): logCreator {
  return () =>
    ({ namespace, label, log }) => {
      const { message, timestamp: _t, ...extra } = log;
      logger.debug({ kafkajs: namespace, level_name: label, ...extra }, message);
    };
}
