/**
 * KafkaJS 2.2.4 against a real krill broker (issue 2, compat-tests/). One body, run twice: against
 * the embedded broker (embedded.test.ts) and against the CLI as a child process (cli.test.ts).
 * Reading back goes through krill's own protocol client (client/network-client) until
 * consumer groups exist.
 */
import { CompressionTypes, ConfigResourceTypes, type Admin, type Kafka, type Producer } from 'kafkajs';
import { ErrorCode } from '../../protocol/errors';
import { TimestampType } from '../../protocol/records/record-batch';
import { BrokerConnection, OffsetSpec, connect, decodeRecordSet, fetchAll, listOffset, produce, type FetchedRecord } from '../../client/network-client';
import { startTestBroker, type BrokerKind, type TestBroker } from '../helpers/brokers';
import { connectedAdmin, connectedProducer, defaultPartitionOf, disconnectAll, kafkaFor } from '../helpers/kafkajs';
import { canonicalRead, expectedByPartition, line, makeMessages, type Canonical, type TestMessage } from '../helpers/messages';

const BASE_TS = 1_700_000_000_000;

export function kafkaJsSuite(kind: BrokerKind): void {
  let broker: TestBroker;
  let kafka: Kafka;
  let admin: Admin;
  let producer: Producer;
  let conn: BrokerConnection;

  async function connectAll(): Promise<void> {
    kafka = kafkaFor(broker, `compat-${kind}`);
    admin = await connectedAdmin(kafka);
    producer = await connectedProducer(kafka);
    conn = await connect(broker.host, broker.port, { clientId: `readback-${kind}` });
  }

  async function disconnectClients(): Promise<void> {
    await disconnectAll(admin, producer);
    await conn?.close();
  }

  /** Clean restart (or kill -9) on the same data dir and port, clients reconnected. */
  async function bounce(how: 'restart' | 'kill9'): Promise<void> {
    await disconnectClients();
    if (how === 'restart') await broker.restart();
    else {
      await broker.kill9();
      await broker.start();
    }
    await connectAll();
  }

  async function readPartitions(topic: string, partitions: number): Promise<FetchedRecord[][]> {
    const out: FetchedRecord[][] = [];
    for (let p = 0; p < partitions; p++) out.push((await fetchAll(conn, topic, p)).records);
    return out;
  }

  beforeAll(async () => {
    broker = await startTestBroker(kind, { config: { 'auto.create.topics.enable': false } });
    await connectAll();
  });

  afterAll(async () => {
    await disconnectClients().catch(() => undefined);
    await broker?.close();
  });

  describe('admin', () => {
    test('create, list and delete topics; creating an existing topic is TOPIC_ALREADY_EXISTS', async () => {
      expect(
        await admin.createTopics({
          topics: [
            { topic: 'adm-a', numPartitions: 3 },
            { topic: 'adm-b', numPartitions: 1, configEntries: [{ name: 'retention.ms', value: '3600000' }] },
          ],
        }),
      ).toBe(true);
      expect((await admin.listTopics()).sort()).toEqual(expect.arrayContaining(['adm-a', 'adm-b']));
      // KafkaJS answers false when every error is TOPIC_ALREADY_EXISTS; krill's client shows the code.
      expect(await admin.createTopics({ topics: [{ topic: 'adm-a', numPartitions: 3 }] })).toBe(false);
      const res = await conn.send('CreateTopics', undefined, { topics: [{ name: 'adm-a', numPartitions: 1, replicationFactor: 1 }], timeoutMs: 5000 });
      expect(res.topics[0].errorCode).toBe(ErrorCode.TOPIC_ALREADY_EXISTS);

      await admin.deleteTopics({ topics: ['adm-b'], timeout: 5000 });
      expect(await admin.listTopics()).not.toContain('adm-b');
      expect(await admin.listTopics()).toContain('adm-a');
    });

    test('fetchTopicMetadata: partitions, leader, replicas and ISR on this broker', async () => {
      const md = await admin.fetchTopicMetadata({ topics: ['adm-a'] });
      expect(md.topics).toHaveLength(1);
      const parts = [...md.topics[0].partitions].sort((a, b) => a.partitionId - b.partitionId);
      expect(parts.map((p) => p.partitionId)).toEqual([0, 1, 2]);
      for (const p of parts) {
        expect(p).toMatchObject({ partitionErrorCode: 0, leader: 1, replicas: [1], isr: [1] });
      }
      const cluster = await admin.describeCluster();
      expect(cluster.brokers).toEqual([{ nodeId: 1, host: broker.host, port: broker.port }]);
      expect(cluster.controller).toBe(1);
      expect(typeof cluster.clusterId).toBe('string');
    });

    test('fetchTopicOffsets and fetchTopicOffsetsByTimestamp (record-granular)', async () => {
      await admin.createTopics({ topics: [{ topic: 'adm-offsets', numPartitions: 2 }] });
      // Partition 0: two batches, timestamps out of order inside them; partition 1 stays empty.
      const ts = [BASE_TS + 50, BASE_TS + 10, BASE_TS + 30, BASE_TS + 70, BASE_TS + 60];
      await producer.send({ topic: 'adm-offsets', acks: -1, messages: ts.slice(0, 3).map((t, i) => ({ partition: 0, value: `m${i}`, timestamp: String(t) })) });
      await producer.send({ topic: 'adm-offsets', acks: -1, messages: ts.slice(3).map((t, i) => ({ partition: 0, value: `m${i + 3}`, timestamp: String(t) })) });

      const offsets = (await admin.fetchTopicOffsets('adm-offsets')).sort((a, b) => a.partition - b.partition);
      expect(offsets).toEqual([
        { partition: 0, offset: '5', high: '5', low: '0' },
        { partition: 1, offset: '0', high: '0', low: '0' },
      ]);
      const at = async (t: number) => (await admin.fetchTopicOffsetsByTimestamp('adm-offsets', t)).sort((a, b) => a.partition - b.partition);
      // The first record whose timestamp is >= the target, not the first batch's offset.
      expect(await at(BASE_TS + 20)).toEqual([
        { partition: 0, offset: '0' },
        { partition: 1, offset: '0' },
      ]);
      expect((await at(BASE_TS + 55))[0]).toEqual({ partition: 0, offset: '3' });
      expect((await at(BASE_TS + 65))[0]).toEqual({ partition: 0, offset: '3' });
      // Nothing at or after: KafkaJS reports the high watermark.
      expect((await at(BASE_TS + 1000))[0]).toEqual({ partition: 0, offset: '5' });
      expect((await at(BASE_TS))[0]).toEqual({ partition: 0, offset: '0' });
      // What the broker itself says (KafkaJS turns -1 into the high watermark), and max timestamp.
      expect(await listOffset(conn, 'adm-offsets', 0, BigInt(BASE_TS + 1000))).toMatchObject({ offset: -1n, timestamp: -1n });
      expect(await listOffset(conn, 'adm-offsets', 0, BigInt(BASE_TS + 55))).toMatchObject({ offset: 3n, timestamp: BigInt(BASE_TS + 70) });
      expect(await listOffset(conn, 'adm-offsets', 0, OffsetSpec.MAX_TIMESTAMP)).toMatchObject({ offset: 3n, timestamp: BigInt(BASE_TS + 70) });
    });

    test('describeConfigs and alterConfigs of a topic (AlterConfigs replaces all overrides)', async () => {
      await admin.createTopics({
        topics: [
          {
            topic: 'adm-configs',
            numPartitions: 1,
            configEntries: [
              { name: 'retention.ms', value: '3600000' },
              { name: 'max.message.bytes', value: '20000' },
            ],
          },
        ],
      });
      const describe = async () => {
        const res = await admin.describeConfigs({ includeSynonyms: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: 'adm-configs' }] });
        expect(res.resources).toHaveLength(1);
        expect(res.resources[0].errorCode).toBe(0);
        return new Map(res.resources[0].configEntries.map((e) => [e.configName, e]));
      };
      let entries = await describe();
      expect(entries.get('retention.ms')).toMatchObject({ configValue: '3600000', isDefault: false, configSource: 1 });
      expect(entries.get('max.message.bytes')).toMatchObject({ configValue: '20000', isDefault: false, configSource: 1 });
      // Every topic config is listed, defaults included.
      expect(entries.get('cleanup.policy')).toMatchObject({ configValue: 'delete', isDefault: true, configSource: 5 });
      expect(entries.get('segment.bytes')).toMatchObject({ configValue: '1073741824' });
      expect(entries.size).toBeGreaterThan(20);

      await admin.alterConfigs({
        validateOnly: false,
        resources: [{ type: ConfigResourceTypes.TOPIC, name: 'adm-configs', configEntries: [{ name: 'retention.ms', value: '7200000' }] }],
      });
      entries = await describe();
      expect(entries.get('retention.ms')).toMatchObject({ configValue: '7200000', configSource: 1 });
      expect(entries.get('max.message.bytes')).toMatchObject({ configValue: '1048588', isDefault: true, configSource: 5 });

      // Only some names; and an invalid value is refused.
      const some = await admin.describeConfigs({ includeSynonyms: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: 'adm-configs', configNames: ['retention.ms'] }] });
      expect(some.resources[0].configEntries.map((e) => e.configName)).toEqual(['retention.ms']);
      await expect(
        admin.alterConfigs({ validateOnly: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: 'adm-configs', configEntries: [{ name: 'retention.ms', value: 'soon' }] }] }),
      ).rejects.toMatchObject({ type: 'INVALID_CONFIG' });
    });

    test('createPartitions grows a topic, and the new partitions take records', async () => {
      await admin.createTopics({ topics: [{ topic: 'adm-grow', numPartitions: 1 }] });
      await admin.createPartitions({ topicPartitions: [{ topic: 'adm-grow', count: 3 }] });
      const md = await admin.fetchTopicMetadata({ topics: ['adm-grow'] });
      expect(md.topics[0].partitions.map((p) => p.partitionId).sort()).toEqual([0, 1, 2]);
      await producer.send({ topic: 'adm-grow', acks: -1, messages: [{ partition: 2, value: 'in the new partition' }] });
      expect((await fetchAll(conn, 'adm-grow', 2)).records.map((r) => r.value!.toString())).toEqual(['in the new partition']);
      await expect(admin.createPartitions({ topicPartitions: [{ topic: 'adm-grow', count: 2 }] })).rejects.toMatchObject({ type: 'INVALID_PARTITIONS' });
    });

    test('deleteTopicRecords moves the log start offset', async () => {
      await admin.createTopics({ topics: [{ topic: 'adm-trim', numPartitions: 1 }] });
      await producer.send({ topic: 'adm-trim', acks: -1, messages: Array.from({ length: 10 }, (_, i) => ({ partition: 0, value: `r${i}` })) });
      // KafkaJS looks the leader up in its cached metadata before refreshing it (KafkaJSBrokerNotFound
      // for a topic the admin has not seen yet, against Apache Kafka too): let it see the topic first.
      await admin.fetchTopicMetadata({ topics: ['adm-trim'] });
      await admin.deleteTopicRecords({ topic: 'adm-trim', partitions: [{ partition: 0, offset: '4' }] });
      expect(await admin.fetchTopicOffsets('adm-trim')).toEqual([{ partition: 0, offset: '10', high: '10', low: '4' }]);
      const rest = await fetchAll(conn, 'adm-trim', 0, 4n);
      expect(rest.logStartOffset).toBe(4n);
      expect(rest.records.map((r) => r.value!.toString())).toEqual(['r4', 'r5', 'r6', 'r7', 'r8', 'r9']);
      await expect(fetchAll(conn, 'adm-trim', 0, 0n)).rejects.toMatchObject({ code: ErrorCode.OFFSET_OUT_OF_RANGE });
    });
  });

  describe('errors clients see', () => {
    test('produce to an unknown topic (auto-creation off) -> UNKNOWN_TOPIC_OR_PARTITION', async () => {
      const strict = await connectedProducer(kafka, { retry: { retries: 0 } });
      try {
        const err = await strict.send({ topic: 'no-such-topic', acks: -1, messages: [{ value: 'x' }] }).then(
          () => null,
          (e: unknown) => e as { name?: string; cause?: { type?: string; code?: number } },
        );
        // With retries exhausted KafkaJS wraps the broker's error.
        expect(err?.name).toBe('KafkaJSNumberOfRetriesExceeded');
        expect(err?.cause).toMatchObject({ type: 'UNKNOWN_TOPIC_OR_PARTITION', code: 3 });
      } finally {
        await strict.disconnect();
      }
      expect(await admin.listTopics()).not.toContain('no-such-topic');
      await expect(produce(conn, 'no-such-topic', 0, [{ value: 'x' }])).rejects.toMatchObject({ code: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION });
      await expect(produce(conn, 'adm-a', 7, [{ value: 'x' }])).rejects.toMatchObject({ code: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION });
    });

    test('a fetch at an offset past the end -> OFFSET_OUT_OF_RANGE', async () => {
      const end = (await fetchAll(conn, 'adm-trim', 0, 4n)).highWatermark;
      await expect(fetchAll(conn, 'adm-trim', 0, end + 1n)).rejects.toMatchObject({ code: ErrorCode.OFFSET_OUT_OF_RANGE });
      // At exactly the end it is not an error, just empty.
      expect((await fetchAll(conn, 'adm-trim', 0, end)).records).toEqual([]);
    });
  });

  describe('10,000 keyed messages, 3 partitions, acks -1 / 1 / 0 and GZIP, read back exactly', () => {
    const TOPIC = 'bulk';
    const PARTITIONS = 3;
    const phases: { name: string; acks: -1 | 0 | 1; compression: CompressionTypes }[] = [
      { name: 'acks-all', acks: -1, compression: CompressionTypes.None },
      { name: 'acks-1', acks: 1, compression: CompressionTypes.None },
      { name: 'acks-0', acks: 0, compression: CompressionTypes.None },
      // Last, with acks -1 on the same connection: its answers come after every acks=0 request.
      { name: 'gzip', acks: -1, compression: CompressionTypes.GZIP },
    ];
    const sent: TestMessage[] = [];
    let expected: Canonical[][];

    async function expectExactReadBack(): Promise<void> {
      const read = await readPartitions(TOPIC, PARTITIONS);
      expect(read.reduce((n, p) => n + p.length, 0)).toBe(10_000);
      for (let p = 0; p < PARTITIONS; p++) {
        expect(read[p].every((r, i) => r.offset === BigInt(i) && r.timestampType === TimestampType.CREATE_TIME)).toBe(true);
        expect(read[p].map((r) => line(canonicalRead(r)))).toEqual(expected[p].map(line));
      }
      const offsets = (await admin.fetchTopicOffsets(TOPIC)).sort((a, b) => a.partition - b.partition);
      expect(offsets.map((o) => Number(o.high))).toEqual(expected.map((e) => e.length));
    }

    test('KafkaJS produces them', async () => {
      await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: PARTITIONS }] });
      for (const [i, phase] of phases.entries()) {
        const messages = makeMessages(phase.name, 2_500, BASE_TS + i * 1_000_000);
        for (let off = 0; off < messages.length; off += 500) {
          await producer.send({ topic: TOPIC, acks: phase.acks, compression: phase.compression, messages: messages.slice(off, off + 500) });
        }
        sent.push(...messages);
      }
      expected = expectedByPartition(sent, PARTITIONS, defaultPartitionOf(TOPIC, PARTITIONS));
      expect(expected.every((e) => e.length > 2_500)).toBe(true); // the keys spread over all partitions
    });

    test('krill reads back keys, values, headers, timestamps and per-partition order exactly', async () => {
      await expectExactReadBack();
    });

    test('GZIP batches are stored compressed as sent', async () => {
      const res = await conn.send('Fetch', 11, {
        replicaId: -1, maxWaitMs: 0, minBytes: 0, maxBytes: 64 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
        topics: [{ topic: TOPIC, partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 64 << 20, currentLeaderEpoch: -1, logStartOffset: -1n }] }],
        forgottenTopicsData: [], rackId: '',
      });
      const batches = decodeRecordSet(res.responses[0].partitions[0].records).batches;
      const codecs = new Set(batches.map((b) => b.compressionType));
      expect([...codecs].sort()).toEqual([0, 1]); // none and gzip
    });

    test('after a clean restart on the same data dir, everything reads back again', async () => {
      await bounce('restart');
      await expectExactReadBack();
    });

    if (kind === 'cli') {
      test('after kill -9, every acks=-1 message acknowledged before the kill is there', async () => {
        await admin.createTopics({ topics: [{ topic: 'durable', numPartitions: PARTITIONS }] });
        const acked: TestMessage[] = [];
        const messages = makeMessages('durable', 3_000, BASE_TS + 9_000_000);
        for (let off = 0; off < messages.length; off += 100) {
          await producer.send({ topic: 'durable', acks: -1, messages: messages.slice(off, off + 100) });
          acked.push(...messages.slice(off, off + 100));
        }
        await bounce('kill9');
        const want = expectedByPartition(acked, PARTITIONS, defaultPartitionOf('durable', PARTITIONS));
        const read = await readPartitions('durable', PARTITIONS);
        for (let p = 0; p < PARTITIONS; p++) expect(read[p].map((r) => line(canonicalRead(r)))).toEqual(want[p].map(line));
        // The earlier topic survived the crash too, and the broker takes new writes.
        await expectExactReadBack();
        await producer.send({ topic: 'durable', acks: -1, messages: [{ key: 'after-crash', value: 'ok' }] });
        const total = (await readPartitions('durable', PARTITIONS)).reduce((n, p) => n + p.length, 0);
        expect(total).toBe(3_001);
      });
    }
  });
}
