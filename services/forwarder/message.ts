import type { Message } from 'kafkajs';
import type { StoredEvent } from '../../shared/event-store/types.ts';

/** Header names of every record the forwarder produces (values are strings). */
export const HEADER_EVENT_ID = 'event_id';
export const HEADER_TYPE = 'type';
export const HEADER_POSITION = 'position';

/** The JSON value of a record: the stored event, field by field (nothing an adapter adds leaks in). */
export interface ForwardedEvent {
  id: string;
  streamId: string;
  revision: number;
  position: number;
  type: string;
  data: unknown;
  metadata: StoredEvent['metadata'];
  createdAt: string;
}

/**
 * One event as one Kafka record. The key is the stream id, so kafkajs' default (Java-compatible
 * murmur2) partitioner puts every event of a stream in the same partition, in log order.
 */
export function toKafkaMessage(event: StoredEvent): Message {
  const { id, streamId, revision, position, type, data, metadata, createdAt } = event;
  const value: ForwardedEvent = { id, streamId, revision, position, type, data, metadata, createdAt };
  return {
    key: streamId,
    value: JSON.stringify(value),
    headers: { [HEADER_EVENT_ID]: id, [HEADER_TYPE]: type, [HEADER_POSITION]: String(position) },
  };
}
