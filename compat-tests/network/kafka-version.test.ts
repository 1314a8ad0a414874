/**
 * --kafka-version / krill.kafka.version / startBroker's kafkaVersion: a broker emulating an Apache
 * Kafka release advertises, for every release line in protocol/kafka-release-deltas.ts (generated
 * 2.8-3.9, derived 4.0 and 4.1), exactly
 * that release's ranges intersected with krill's handlers (asked with ApiVersions v0 and v3 over
 * the wire), with landmarks of each release checked by hand; versions and APIs outside them are
 * refused like any unsupported version (the connection closes; ApiVersions answers v0 with
 * UNSUPPORTED_VERSION); a 3-broker cluster passes the option to every broker; librdkafka 2.12
 * produces and consumes against an emulated 2.8; KafkaJS 2.2.4 (whose newest versions are all above
 * KIP-896's minimums) produces, consumes in a group and administers against an emulated 4.0, which
 * refuses the removed versions (Fetch v3, ListOffsets v0); the CLI flag and a bad release name.
 */
import { startBroker, type RunningBroker } from '../../broker';
import { startCluster } from '../../broker/cluster';
import { parseArgs } from '../../broker/cli';
import { HANDLERS } from '../../broker/handlers';
import { Logger } from '../../common/logger';
import { ApiKey } from '../../protocol/generated';
import { ErrorCode } from '../../protocol/errors';
import { Reader } from '../../protocol/primitives/reader';
import { readApiVersionsResponse } from '../../protocol/generated/api-versions';
import { KAFKA_RELEASES } from '../../protocol/kafka-release-deltas';
import { connect } from '../../client/network-client';
import { RawSocket, requestFrame } from '../helpers/raw-socket';
import { rdkafkaConsumeValues, rdkafkaProduce } from '../helpers/rdkafka';
import { Kafka, logLevel, Partitioners } from 'kafkajs';

jest.setTimeout(90_000);

const quiet = () => new Logger('krill', 'error');
type Ranges = Record<number, [number, number]>;

/** What the release's table and krill's handlers have in common, computed from the two tables. */
function expectedRanges(release: string): Ranges {
  const out: Ranges = {};
  const theirs = new Map(KAFKA_RELEASES[release].apis.map(([k, , lo, hi]) => [k, [lo, hi]]));
  for (const h of HANDLERS) {
    const r = theirs.get(h.apiKey);
    if (!r) continue;
    const lo = Math.max(r[0], h.minVersion);
    const hi = Math.min(r[1], h.maxVersion);
    if (lo <= hi) out[h.apiKey] = [lo, hi];
  }
  return out;
}

async function advertised(host: string, port: number, version: number): Promise<Ranges> {
  const r = await RawSocket.connect(host, port);
  try {
    await r.write(requestFrame(ApiKey.ApiVersions, version, 1, { clientSoftwareName: 'kv-test', clientSoftwareVersion: '1' }));
    const frame = await r.nextFrame();
    const reader = new Reader(frame);
    reader.int32(); // correlation id (ApiVersions answers with response header v0)
    const res = readApiVersionsResponse(reader, version);
    expect(res.errorCode).toBe(ErrorCode.NONE);
    return Object.fromEntries(res.apiKeys.map((k) => [k.apiKey, [k.minVersion, k.maxVersion]]));
  } finally {
    r.destroy();
  }
}

/** Hand-checked landmarks of each release (KIP numbers in the comments), as [api, min, max] or absent. */
const LANDMARKS: Record<string, [number, [number, number] | null][]> = {
  '2.8': [[ApiKey.Produce, [3, 9]], [ApiKey.Fetch, [4, 12]], [ApiKey.Metadata, [0, 11]], [ApiKey.ApiVersions, [0, 3]], [ApiKey.DescribeProducers, [0, 0]], [ApiKey.DescribeTransactions, null]],
  '3.0': [[ApiKey.ListOffsets, [0, 7]], [ApiKey.DescribeTransactions, [0, 0]], [ApiKey.ListTransactions, [0, 0]]], // KIP-734, KIP-664
  '3.1': [[ApiKey.Fetch, [4, 13]], [ApiKey.Metadata, [0, 12]]], // KIP-516 topic ids
  '3.3': [[ApiKey.DescribeTopicPartitions, null], [ApiKey.ElectLeaders, [0, 2]]],
  '3.5': [[ApiKey.Fetch, [4, 15]], [ApiKey.ListOffsets, [0, 8]]], // KIP-903
  '3.7': [[ApiKey.Fetch, [4, 16]], [ApiKey.Produce, [3, 10]], [ApiKey.DescribeTopicPartitions, null]], // KIP-951
  '3.8': [[ApiKey.Produce, [3, 11]], [ApiKey.DescribeTopicPartitions, [0, 0]]], // KIP-890, KIP-966
  '3.9': [[ApiKey.Fetch, [4, 17]], [ApiKey.ListOffsets, [0, 9]], [ApiKey.ApiVersions, [0, 4]], [ApiKey.UpdateFeatures, [0, 1]]], // KIP-853, KIP-1005
  // KIP-896 minimums; KIP-890 part 2 (Produce v12, EndTxn v5, TxnOffsetCommit v5), KIP-1075, KIP-1102, KIP-1022.
  '4.0': [[ApiKey.Produce, [3, 12]], [ApiKey.EndTxn, [0, 5]], [ApiKey.TxnOffsetCommit, [0, 5]], [ApiKey.Fetch, [4, 17]], [ApiKey.ListOffsets, [1, 10]], [ApiKey.Metadata, [0, 13]], [ApiKey.JoinGroup, [2, 9]], [ApiKey.OffsetFetch, [1, 9]], [ApiKey.DescribeLogDirs, [1, 4]], [ApiKey.UpdateFeatures, [0, 2]]],
  // KAFKA-19444 (JoinGroup v0-1 back); krill's Produce stops at 12 (v13 is 4.1's, topic ids).
  '4.1': [[ApiKey.Produce, [3, 12]], [ApiKey.JoinGroup, [0, 9]], [ApiKey.ListOffsets, [1, 10]], [ApiKey.AlterPartitionReassignments, [0, 0]]], // KAFKA-19444
};

describe('each release line', () => {
  test.each(Object.keys(KAFKA_RELEASES))('%s: ApiVersions v0 and v3 list exactly the common ranges', async (release) => {
    const broker = await startBroker({ kafkaVersion: release, logger: quiet() });
    try {
      const want = expectedRanges(release);
      expect(await advertised(broker.host, broker.port, 0)).toEqual(want);
      expect(await advertised(broker.host, broker.port, 3)).toEqual(want);
      for (const [api, range] of LANDMARKS[release] ?? []) expect([api, want[api] ?? null]).toEqual([api, range]);
    } finally {
      await broker.close();
    }
  });
});

describe('an emulated 2.8', () => {
  let broker: RunningBroker;
  beforeAll(async () => {
    broker = await startBroker({ kafkaVersion: '2.8', logger: quiet(), config: { 'num.partitions': 1 } });
  });
  afterAll(async () => {
    await broker?.close();
  });

  test('a version past the release, or an API it lacks, closes the connection; ApiVersions v4 gets UNSUPPORTED_VERSION in a v0 body', async () => {
    for (const [api, version, body] of [
      [ApiKey.Fetch, 13, { replicaId: -1, maxWaitMs: 0, minBytes: 0, maxBytes: 1024, topics: [], forgottenTopicsData: [], rackId: '' }],
      [ApiKey.DescribeTopicPartitions, 0, { topics: [], responsePartitionLimit: 10, cursor: null }],
      [ApiKey.UpdateFeatures, 1, { timeoutMs: 1000, featureUpdates: [], validateOnly: true }],
    ] as const) {
      const r = await RawSocket.connect(broker.host, broker.port);
      try {
        await r.write(requestFrame(api, version, 7, body));
        await r.waitForClose();
      } finally {
        r.destroy();
      }
    }
    const r = await RawSocket.connect(broker.host, broker.port);
    try {
      await r.write(requestFrame(ApiKey.ApiVersions, 4, 9, { clientSoftwareName: 'kv-test', clientSoftwareVersion: '1' }));
      const reader = new Reader(await r.nextFrame());
      expect(reader.int32()).toBe(9);
      const res = readApiVersionsResponse(reader, 0);
      expect(res.errorCode).toBe(ErrorCode.UNSUPPORTED_VERSION);
      expect(res.apiKeys.find((k) => k.apiKey === ApiKey.ApiVersions)).toMatchObject({ minVersion: 0, maxVersion: 3 });
    } finally {
      r.destroy();
    }
  });

  test("krill's client negotiates the release's versions; librdkafka 2.12 produces and consumes", async () => {
    const conn = await connect(broker.host, broker.port, { clientId: 'kv-test' });
    try {
      expect(conn.versionFor(ApiKey.Produce)).toBe(9);
      expect(conn.versionFor(ApiKey.Fetch)).toBe(12);
    } finally {
      await conn.close();
    }
    const config = { 'bootstrap.servers': `${broker.host}:${broker.port}`, 'client.id': 'kv-rdkafka' };
    const delivered = await rdkafkaProduce(config, 'kv28', 20, (i) => ({ partition: 0, key: `k${i}`, value: Buffer.from(`v${i}`) }));
    expect(delivered).toHaveLength(20);
    const values = await rdkafkaConsumeValues({ ...config, 'group.id': 'kv28-reader' }, 'kv28', 1, 20);
    expect(values).toEqual(Array.from({ length: 20 }, (_, i) => `v${i}`));
  });
});

describe('an emulated 4.0', () => {
  let broker: RunningBroker;
  beforeAll(async () => {
    broker = await startBroker({ kafkaVersion: '4.0', logger: quiet(), config: { 'num.partitions': 2 } });
  });
  afterAll(async () => {
    await broker?.close();
  });

  test('the versions KIP-896 removed close the connection (Fetch v3, ListOffsets v0, JoinGroup v1)', async () => {
    for (const [api, version, body] of [
      [ApiKey.Fetch, 3, { replicaId: -1, maxWaitMs: 0, minBytes: 0, maxBytes: 1024, topics: [] }],
      [ApiKey.ListOffsets, 0, { replicaId: -1, topics: [] }],
      [ApiKey.JoinGroup, 1, { groupId: 'g', sessionTimeoutMs: 10_000, rebalanceTimeoutMs: 10_000, memberId: '', protocolType: 'consumer', protocols: [] }],
    ] as const) {
      const r = await RawSocket.connect(broker.host, broker.port);
      try {
        await r.write(requestFrame(api, version, 7, body));
        await r.waitForClose();
      } finally {
        r.destroy();
      }
    }
  });

  test('KafkaJS 2.2.4 (Produce v7, Fetch v11, JoinGroup v5, ListOffsets v3...) creates, produces and consumes in a group', async () => {
    // KafkaJS takes the newest version both sides have; its newest are all at or above 4.0's minimums.
    const kafka = new Kafka({ clientId: 'kv40', brokers: broker.bootstrapServers, logLevel: logLevel.NOTHING, retry: { retries: 3, initialRetryTime: 100 } });
    const rec = broker.control.record({ clientId: 'kv40' });
    const admin = kafka.admin();
    const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
    const consumer = kafka.consumer({ groupId: 'kv40-g', sessionTimeout: 10_000, heartbeatInterval: 500 });
    try {
      await admin.connect();
      await admin.createTopics({ topics: [{ topic: 'kv40', numPartitions: 2 }], waitForLeaders: true });
      await producer.connect();
      await producer.send({ topic: 'kv40', messages: Array.from({ length: 20 }, (_, i) => ({ key: `k${i}`, value: `v${i}` })) });
      const seen = new Set<string>();
      let resolveAll!: () => void;
      const all = new Promise<void>((r) => (resolveAll = r));
      await consumer.connect();
      await consumer.subscribe({ topic: 'kv40', fromBeginning: true });
      await consumer.run({
        eachMessage: async ({ message }) => {
          seen.add(message.value!.toString());
          if (seen.size === 20) resolveAll();
        },
      });
      await Promise.race([all, new Promise((_, rej) => setTimeout(() => rej(new Error(`consumed ${seen.size}/20`)), 30_000).unref())]);
      expect(seen).toEqual(new Set(Array.from({ length: 20 }, (_, i) => `v${i}`)));
      const offsets = await admin.fetchOffsets({ groupId: 'kv40-g', topics: ['kv40'] });
      expect(offsets[0].partitions).toHaveLength(2);
    } finally {
      rec.stop();
      await consumer.disconnect();
      await producer.disconnect();
      await admin.disconnect();
    }
    const used = new Map<string, number>();
    for (const r of rec.requests) used.set(r.apiName, Math.max(used.get(r.apiName) ?? -1, r.apiVersion));
    expect(used.get('Produce')).toBe(7);
    expect(used.get('Fetch')).toBe(11);
    expect(used.get('JoinGroup')).toBe(5);
  });
});

test('startCluster passes it to every broker', async () => {
  const cluster = await startCluster({ brokers: 3, kafkaVersion: '3.3', logLevel: 'error', config: { 'broker.heartbeat.interval.ms': '100' } });
  try {
    for (const b of cluster.bootstrapServers) {
      const [host, port] = b.split(':');
      expect(await advertised(host, Number(port), 3)).toEqual(expectedRanges('3.3'));
    }
  } finally {
    await cluster.close();
  }
});

test('the CLI flag and the config key; an unknown release is refused', async () => {
  expect(parseArgs(['--kafka-version', '3.6']).overrides).toEqual(['krill.kafka.version=3.6']);
  expect(parseArgs(['--kafka-version', '4.1']).overrides).toEqual(['krill.kafka.version=4.1']);
  expect(() => parseArgs(['--kafka-version', '4.2'])).toThrow(/invalid --kafka-version 4.2 \(one of 2.8, 3.0, .*3.9, 4.0, 4.1\)/);
  await expect(startBroker({ kafkaVersion: '1.0', logger: quiet() })).rejects.toThrow(/krill.kafka.version/);
  const viaConfig = await startBroker({ config: { 'krill.kafka.version': '3.1' }, logger: quiet() });
  try {
    expect(await advertised(viaConfig.host, viaConfig.port, 3)).toEqual(expectedRanges('3.1'));
  } finally {
    await viaConfig.close();
  }
});
