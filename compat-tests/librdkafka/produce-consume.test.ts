/**
 * librdkafka (node-rdkafka, librdkafka 2.12 built from source by npm ci) against an embedded krill
 * broker: the C client negotiates its own versions (ApiVersions v3 first, flexible Metadata/Fetch
 * where advertised), uses its own partitioner and compression, and reads with Fetch sessions. A
 * producer with acks=all writes keyed messages with headers across partitions in each codec the
 * build supports; a consumer with a manual assignment (no group commits) reads every one back.
 */
import { startBroker, type RunningBroker } from '../../broker';
import { rdkafkaConsume, rdkafkaProduce, type RdDelivery, type RdMessage } from '../helpers/rdkafka';
// eslint-disable-next-line @typescript-eslint/no-var-requires
const Kafka = require('node-rdkafka');

let broker: RunningBroker;

beforeAll(async () => {
  broker = await startBroker({ logLevel: 'warn', config: { 'num.partitions': 3 } });
});

afterAll(async () => {
  await broker?.close();
});

const brokerList = () => broker.bootstrapServers.join(',');

function produceAll(topic: string, codec: string, count: number): Promise<RdDelivery[]> {
  const config = { 'metadata.broker.list': brokerList(), 'client.id': `rdkafka-${codec}`, acks: -1, 'compression.codec': codec, 'linger.ms': 5, 'allow.auto.create.topics': true };
  return rdkafkaProduce(config, topic, count, (i) => ({ partition: null, value: Buffer.from(`value-${codec}-${i}`), key: `key-${i}`, timestamp: 1_700_000_000_000 + i, headers: [{ h: `hv-${i}` }] }));
}

function consumeAll(topic: string, partitions: number, expected: number): Promise<RdMessage[]> {
  return rdkafkaConsume({ 'group.id': `rdkafka-reader-${topic}`, 'metadata.broker.list': brokerList(), 'enable.partition.eof': false }, topic, partitions, expected);
}

describe('librdkafka (node-rdkafka) producer and consumer', () => {
  const codecs: string[] = Kafka.features.includes('zstd') ? ['none', 'gzip', 'snappy', 'lz4', 'zstd'] : ['none', 'gzip', 'snappy', 'lz4'];

  test.each(codecs)('acks=all produce and read back with compression %s', async (codec) => {
    const topic = `rdk-${codec}`;
    const count = 300;
    const delivered = await produceAll(topic, codec, count);
    // Offsets per partition are contiguous from 0, each handed out once.
    const byPartition = new Map<number, number[]>();
    for (const d of delivered) byPartition.set(d.partition, [...(byPartition.get(d.partition) ?? []), d.offset]);
    for (const offsets of byPartition.values()) {
      expect([...offsets].sort((a, b) => a - b)).toEqual(offsets.map((_, i) => i));
    }

    const messages = await consumeAll(topic, 3, count);
    expect(messages).toHaveLength(count);
    const seen = new Map<string, any>();
    for (const m of messages) seen.set(String(m.key), m);
    for (let i = 0; i < count; i++) {
      const m = seen.get(`key-${i}`);
      expect(m).toBeDefined();
      expect(m.value.toString()).toBe(`value-${codec}-${i}`);
      expect(m.timestamp).toBe(1_700_000_000_000 + i);
      expect(m.headers).toEqual([{ h: Buffer.from(`hv-${i}`) }]);
      const d = delivered.find((x) => x.key === `key-${i}`)!;
      expect([m.partition, m.offset]).toEqual([d.partition, d.offset]);
    }
  });
});
