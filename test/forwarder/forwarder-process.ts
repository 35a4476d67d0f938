/**
 * A forwarder in its own process, for the kill -9 test: it builds the same deterministic log as the
 * test (fillLog), keeps its checkpoint in a file the test reads, and runs until it is killed.
 *   FWD_BROKERS, FWD_TOPIC, FWD_CHECKPOINTS (file), FWD_STREAMS, FWD_EVENTS, FWD_BATCH
 */
import { KafkaForwarder } from '../../services/forwarder/kafka.ts';
import { kafkaProducer } from '../../services/forwarder/producer.ts';
import { MemoryEventStore } from '../../shared/event-store/memory.ts';
import { createLogger } from '../../shared/logger.ts';
import { FileCheckpointStore, fillLog } from './support.ts';

const env = process.env;
const logger = createLogger('warn', process.stderr);
const store = new MemoryEventStore();
await fillLog(store, Number(env.FWD_STREAMS), Number(env.FWD_EVENTS));
const forwarder = new KafkaForwarder({
  events: store,
  checkpoints: new FileCheckpointStore(env.FWD_CHECKPOINTS!),
  producer: () => kafkaProducer({ brokers: env.FWD_BROKERS!.split(','), topic: env.FWD_TOPIC!, logger }),
  logger,
  batchSize: Number(env.FWD_BATCH),
});
setInterval(() => undefined, 1 << 30); // stays up until killed
process.stdout.write('forwarding\n');
await forwarder.run(new AbortController().signal);
