/**
 * librdkafka (node-rdkafka, librdkafka 2.12 built from source by npm ci) against an embedded krill
 * broker: the C client negotiates its own versions (ApiVersions v3 first, flexible Metadata/Fetch
 * where advertised), uses its own partitioner and compression, and reads with Fetch sessions. A
 * producer with acks=all writes keyed messages with headers across partitions in each codec the
 * build supports; a consumer with a manual assignment (no group commits) reads every one back.
 */
import { startBroker, type RunningBroker } from '../../broker';
// eslint-disable-next-line @typescript-eslint/no-var-requires
const Kafka = require('node-rdkafka');

let broker: RunningBroker;

beforeAll(async () => {
  broker = await startBroker({ logLevel: 'warn', config: { 'num.partitions': 3 } });
});

afterAll(async () => {
  await broker?.close();
});

interface Delivered {
  topic: string;
  partition: number;
  offset: number;
  key: string;
}

function produceAll(topic: string, codec: string, count: number): Promise<Delivered[]> {
  return new Promise((resolve, reject) => {
    const producer = new Kafka.Producer({
      'metadata.broker.list': broker.bootstrapServers.join(','),
      'client.id': `rdkafka-${codec}`,
      dr_cb: true,
      acks: -1,
      'compression.codec': codec,
      'linger.ms': 5,
      'allow.auto.create.topics': true,
    });
    const delivered: Delivered[] = [];
    const timer = setTimeout(() => {
      producer.disconnect();
      reject(new Error(`timed out with ${delivered.length}/${count} delivered`));
    }, 30_000);
    producer.on('delivery-report', (err: Error | null, report: any) => {
      if (err) {
        clearTimeout(timer);
        producer.disconnect();
        reject(err);
        return;
      }
      delivered.push({ topic: report.topic, partition: report.partition, offset: report.offset, key: String(report.key) });
      if (delivered.length === count) {
        clearTimeout(timer);
        producer.disconnect(() => resolve(delivered));
      }
    });
    producer.on('event.error', (err: Error) => {
      clearTimeout(timer);
      reject(err);
    });
    producer.setPollInterval(5);
    producer.on('ready', () => {
      for (let i = 0; i < count; i++) {
        producer.produce(topic, null, Buffer.from(`value-${codec}-${i}`), `key-${i}`, 1_700_000_000_000 + i, null, [{ h: `hv-${i}` }]);
      }
    });
    producer.connect();
  });
}

function consumeAll(topic: string, partitions: number, expected: number): Promise<any[]> {
  return new Promise((resolve, reject) => {
    const consumer = new Kafka.KafkaConsumer(
      {
        'group.id': `rdkafka-reader-${topic}`,
        'metadata.broker.list': broker.bootstrapServers.join(','),
        'enable.auto.commit': false,
        'enable.partition.eof': false,
      },
      { 'auto.offset.reset': 'earliest' },
    );
    const got: any[] = [];
    let done = false;
    const finish = (err?: Error) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      consumer.disconnect(() => (err ? reject(err) : resolve(got)));
    };
    const timer = setTimeout(() => finish(new Error(`timed out with ${got.length}/${expected} consumed`)), 30_000);
    consumer.on('ready', () => {
      consumer.assign(Array.from({ length: partitions }, (_, partition) => ({ topic, partition, offset: 0 })));
      const loop = () => {
        if (done) return;
        consumer.consume(500, (err: Error | null, messages: any[]) => {
          if (err) return finish(err);
          got.push(...messages);
          if (got.length >= expected) return finish();
          setImmediate(loop);
        });
      };
      loop();
    });
    consumer.connect();
  });
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
