/**
 * KafkaJS 2.2.4 clients pointed at a test broker: quiet, with bounded timeouts and few retries so
 * that a broker bug fails a test quickly instead of being retried into the jest timeout.
 */
import { Kafka, logLevel, Partitioners, type Admin, type Producer, type ProducerConfig } from 'kafkajs';
import type { TestBroker } from './brokers';

// KafkaJS prints a notice about its v2 default partitioner unless told not to.
process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';

export function kafkaFor(broker: TestBroker, clientId = 'krill-compat'): Kafka {
  return new Kafka({
    clientId,
    brokers: [broker.bootstrap],
    logLevel: logLevel.NOTHING,
    connectionTimeout: 3_000,
    requestTimeout: 15_000,
    retry: { retries: 3, initialRetryTime: 100, maxRetryTime: 1_000 },
  });
}

export async function connectedAdmin(kafka: Kafka): Promise<Admin> {
  const admin = kafka.admin({ retry: { retries: 3, initialRetryTime: 100, maxRetryTime: 1_000 } });
  await admin.connect();
  return admin;
}

export async function connectedProducer(kafka: Kafka, config: ProducerConfig = {}): Promise<Producer> {
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner, allowAutoTopicCreation: false, ...config });
  await producer.connect();
  return producer;
}

/** The partition KafkaJS' default partitioner picks for a keyed message among `partitions`. */
export function defaultPartitionOf(topic: string, partitions: number): (m: { key: string }) => number {
  const partitioner = Partitioners.DefaultPartitioner();
  const partitionMetadata = Array.from({ length: partitions }, (_, i) => ({ partitionId: i, leader: 1, replicas: [1], isr: [1], partitionErrorCode: 0, offlineReplicas: [] }));
  return (m) => partitioner({ topic, partitionMetadata, message: { key: m.key, value: null } });
}

/** Disconnects KafkaJS clients, ignoring errors (the broker may be gone already). */
export async function disconnectAll(...clients: ({ disconnect(): Promise<void> } | undefined)[]): Promise<void> {
  await Promise.all(clients.map((c) => c?.disconnect().catch(() => undefined)));
}
