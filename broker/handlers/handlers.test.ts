/**
 * Every handler at every version it advertises: the request is encoded with the generated codec,
 * run through the real dispatcher of a running broker, and the response must encode (a field set at
 * a version that lacks it would fail here) and decode with the expected results.
 */
import { startBroker, type RunningBroker } from '..';
import { ErrorCode } from '../../protocol/errors';
import { DispatchClient, advertisedVersions as versions } from '../testing/dispatch-client';
import { buildRecordBatch } from '../../protocol/records/memory-records-builder';
import { splitBatches } from '../../protocol/records/record-batch';
import { readRecords } from '../../protocol/records/record';
import { HANDLERS } from './';

let broker: RunningBroker;
const client = new DispatchClient(() => broker.server, 'handlers-test');
const call = (apiKey: number, version: number, body: object): Promise<any> => client.call(apiKey, version, body);




beforeAll(async () => {
  broker = await startBroker({ logLevel: 'error', config: { 'num.partitions': 2 } });
});

afterAll(async () => {
  await broker?.close();
});

describe('handlers at every advertised version', () => {
  test('ApiVersions lists every handler and nothing else', async () => {
    for (const v of versions(18)) {
      const res = await call(18, v, { clientSoftwareName: 'krill-test', clientSoftwareVersion: '1.0' });
      expect(res.errorCode).toBe(ErrorCode.NONE);
      expect(res.apiKeys.map((k: any) => k.apiKey).sort((a: number, b: number) => a - b)).toEqual(
        HANDLERS.map((h) => h.apiKey).sort((a, b) => a - b),
      );
    }
    const bad = await call(18, 3, { clientSoftwareName: '-bad-', clientSoftwareVersion: '1' });
    expect(bad.errorCode).toBe(ErrorCode.INVALID_REQUEST);
  });

  test('CreateTopics, then Metadata, DescribeConfigs and CreatePartitions', async () => {
    for (const v of versions(19)) {
      const name = `ct-${v}`;
      const res = await call(19, v, {
        topics: [
          {
            name,
            numPartitions: 2,
            replicationFactor: 1,
            configs: v >= 0 ? [{ name: 'retention.ms', value: '3600000' }] : [],
          },
          { name: 'bad/name', numPartitions: 1, replicationFactor: 1 },
        ],
        timeoutMs: 1000,
      });
      expect(res.topics.map((t: any) => [t.name, t.errorCode])).toEqual([
        [name, ErrorCode.NONE],
        ['bad/name', ErrorCode.INVALID_TOPIC_EXCEPTION],
      ]);
      if (v >= 5) {
        expect(res.topics[0].numPartitions).toBe(2);
        expect(res.topics[0].configs.find((c: any) => c.name === 'retention.ms').value).toBe('3600000');
      }
      if (v >= 7) expect(res.topics[0].topicId).toHaveLength(22);
      const again = await call(19, v, { topics: [{ name, numPartitions: 1, replicationFactor: 1 }], timeoutMs: 1000 });
      expect(again.topics[0].errorCode).toBe(ErrorCode.TOPIC_ALREADY_EXISTS);
    }
    for (const v of versions(3)) {
      const res = await call(3, v, {
        topics: [{ name: 'ct-0', topicId: 'AAAAAAAAAAAAAAAAAAAAAA' }, { name: `missing-${v}`, topicId: 'AAAAAAAAAAAAAAAAAAAAAA' }],
        allowAutoTopicCreation: v < 4,
        includeTopicAuthorizedOperations: v >= 8,
        includeClusterAuthorizedOperations: v >= 8 && v <= 10,
      });
      expect(res.brokers).toEqual([expect.objectContaining({ nodeId: broker.nodeId, host: broker.host, port: broker.port })]);
      const [t, missing] = res.topics;
      expect(t.errorCode).toBe(ErrorCode.NONE);
      expect(t.partitions).toHaveLength(2);
      expect(t.partitions[0]).toMatchObject({ leaderId: broker.nodeId, replicaNodes: [broker.nodeId], isrNodes: [broker.nodeId] });
      // v0-3 always auto-create; auto.create.topics.enable is on by default.
      expect(missing.errorCode).toBe(v < 4 ? ErrorCode.NONE : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
      if (v >= 2) expect(res.clusterId).toBe(broker.clusterId);
      if (v >= 10) expect(t.topicId).toHaveLength(22);
    }
    for (const v of versions(32)) {
      const res = await call(32, v, {
        resources: [
          { resourceType: 2, resourceName: 'ct-1', configurationKeys: ['retention.ms', 'cleanup.policy'] },
          { resourceType: 2, resourceName: 'nope', configurationKeys: null },
          { resourceType: 4, resourceName: String(broker.nodeId), configurationKeys: ['log.retention.hours'] },
          { resourceType: 4, resourceName: '999', configurationKeys: null },
        ],
        includeSynonyms: v >= 1,
        includeDocumentation: v >= 3,
      });
      const [topic, missing, self, other] = res.results;
      expect(topic.errorCode).toBe(ErrorCode.NONE);
      const retention = topic.configs.find((c: any) => c.name === 'retention.ms');
      expect(retention.value).toBe('3600000');
      if (v >= 1) expect(retention.configSource).toBe(1); // DYNAMIC_TOPIC_CONFIG
      expect(missing.errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
      expect(self.configs.map((c: any) => [c.name, c.value])).toEqual([['log.retention.hours', '168']]);
      expect(other.errorCode).toBe(ErrorCode.INVALID_REQUEST);
    }
    for (const v of versions(37)) {
      const res = await call(37, v, {
        topics: [
          { name: 'ct-2', count: 3 + v, assignments: null },
          { name: 'ct-3', count: 1, assignments: null },
        ],
        timeoutMs: 1000,
        validateOnly: false,
      });
      expect(res.results.map((r: any) => r.errorCode)).toEqual([ErrorCode.NONE, ErrorCode.INVALID_PARTITIONS]);
    }
  });

  test('Produce, then Fetch and ListOffsets read it back', async () => {
    await call(19, 7, { topics: [{ name: 'pf', numPartitions: 1, replicationFactor: 1 }], timeoutMs: 1000 });
    let expected = 0n;
    for (const v of versions(0)) {
      const batch = buildRecordBatch([{ key: `k${v}`, value: `v${v}`, timestamp: 1000 + v }]);
      const res = await call(0, v, {
        acks: -1,
        timeoutMs: 1000,
        topicData: [
          { name: 'pf', partitionData: [{ index: 0, records: batch }, { index: 7, records: batch }] },
          { name: 'no-such-topic', partitionData: [{ index: 0, records: batch }] },
        ],
      });
      const [pf, none] = res.responses;
      expect(pf.partitionResponses.map((p: any) => [p.index, p.errorCode])).toEqual([
        [0, ErrorCode.NONE],
        [7, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
      ]);
      expect(pf.partitionResponses[0].baseOffset).toBe(expected);
      expect(none.partitionResponses[0].errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
      expected++;
      // acks=0: no response at all, but the records are written.
      expect(await call(0, v, { acks: 0, timeoutMs: 1000, topicData: [{ name: 'pf', partitionData: [{ index: 0, records: batch }] }] })).toBeNull();
      expected++;
      // Two batches in one partition's record set: INVALID_RECORD, nothing written.
      const two = Buffer.concat([batch, batch]);
      const bad = await call(0, v, { acks: 1, timeoutMs: 1000, topicData: [{ name: 'pf', partitionData: [{ index: 0, records: two }] }] });
      expect(bad.responses[0].partitionResponses[0].errorCode).toBe(ErrorCode.INVALID_RECORD);
    }
    const topicId = broker.server.metadata.topic('pf')!.topicId;
    for (const v of versions(1)) {
      const res = await call(1, v, {
        replicaId: -1,
        maxWaitMs: 0,
        minBytes: 0,
        maxBytes: 1 << 20,
        isolationLevel: 0,
        sessionEpoch: -1,
        topics: [{ topic: 'pf', topicId, partitions: [{ partition: 0, fetchOffset: 1n, partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1, logStartOffset: -1n }] }],
      });
      expect(res.errorCode).toBe(ErrorCode.NONE);
      const p = res.responses[0].partitions[0];
      expect(p.errorCode).toBe(ErrorCode.NONE);
      expect(p.highWatermark).toBe(expected);
      const offsets = splitBatches(p.records).flatMap((b) => readRecords(b).map((r) => r.offset));
      // Offset 1 is the start of its batch; every record from it on comes back, in order.
      expect(offsets).toEqual(Array.from({ length: Number(expected) - 1 }, (_, i) => BigInt(i + 1)));
      const past = await call(1, v, {
        replicaId: -1,
        maxWaitMs: 0,
        minBytes: 0,
        maxBytes: 1 << 20,
        sessionEpoch: -1,
        topics: [{ topic: 'pf', topicId, partitions: [{ partition: 0, fetchOffset: expected + 5n, partitionMaxBytes: 1 << 20 }] }],
      });
      expect(past.responses[0].partitions[0].errorCode).toBe(ErrorCode.OFFSET_OUT_OF_RANGE);
    }
    for (const v of versions(2)) {
      const res = await call(2, v, {
        replicaId: -1,
        topics: [
          {
            name: 'pf',
            partitions: [
              { partitionIndex: 0, timestamp: -2n, maxNumOffsets: 1, currentLeaderEpoch: -1 },
              { partitionIndex: 3, timestamp: -1n, maxNumOffsets: 1, currentLeaderEpoch: -1 },
            ],
          },
        ],
      });
      const [earliest, unknown] = res.topics[0].partitions;
      expect(unknown.errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
      if (v === 0) expect(earliest.oldStyleOffsets).toEqual([0n]);
      else expect(earliest.offset).toBe(0n);
      const latest = await call(2, v, {
        replicaId: -1,
        topics: [{ name: 'pf', partitions: [{ partitionIndex: 0, timestamp: -1n, maxNumOffsets: 1, currentLeaderEpoch: -1 }] }],
      });
      const l = latest.topics[0].partitions[0];
      expect(v === 0 ? l.oldStyleOffsets[0] : l.offset).toBe(expected);
    }
  });

  test('DeleteRecords, AlterConfigs, IncrementalAlterConfigs, DeleteTopics, DescribeCluster', async () => {
    await call(19, 7, { topics: [{ name: 'misc', numPartitions: 1, replicationFactor: 1 }], timeoutMs: 1000 });
    const batch = buildRecordBatch([{ value: 'a' }, { value: 'b' }, { value: 'c' }]);
    await call(0, 9, { acks: 1, timeoutMs: 1000, topicData: [{ name: 'misc', partitionData: [{ index: 0, records: batch }] }] });
    for (const v of versions(21)) {
      const res = await call(21, v, {
        topics: [{ name: 'misc', partitions: [{ partitionIndex: 0, offset: 1n }, { partitionIndex: 9, offset: 1n }] }],
        timeoutMs: 1000,
      });
      expect(res.topics[0].partitions.map((p: any) => [p.errorCode, p.lowWatermark])).toEqual([
        [ErrorCode.NONE, 1n],
        [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1n],
      ]);
    }
    const beyond = await call(21, 2, { topics: [{ name: 'misc', partitions: [{ partitionIndex: 0, offset: 99n }] }], timeoutMs: 1000 });
    expect(beyond.topics[0].partitions[0].errorCode).toBe(ErrorCode.OFFSET_OUT_OF_RANGE);

    for (const v of versions(33)) {
      const res = await call(33, v, {
        resources: [
          { resourceType: 2, resourceName: 'misc', configs: [{ name: 'retention.ms', value: String(1000 + v) }] },
          { resourceType: 2, resourceName: 'misc2', configs: [] },
        ],
        validateOnly: false,
      });
      expect(res.responses.map((r: any) => r.errorCode)).toEqual([ErrorCode.NONE, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]);
      expect(broker.server.metadata.topicConfig('misc').get('retention.ms')).toBe(String(1000 + v));
    }
    for (const v of versions(44)) {
      const res = await call(44, v, {
        resources: [{ resourceType: 2, resourceName: 'misc', configs: [{ name: 'retention.ms', configOperation: 0, value: 'x' }] }],
        validateOnly: false,
      });
      expect(res.responses[0].errorCode).toBe(ErrorCode.INVALID_CONFIG);
      const ok = await call(44, v, {
        resources: [{ resourceType: 2, resourceName: 'misc', configs: [{ name: 'cleanup.policy', configOperation: 2, value: 'compact' }] }],
        validateOnly: false,
      });
      expect(ok.responses[0].errorCode).toBe(ErrorCode.NONE);
    }
    expect(broker.server.metadata.topicConfig('misc').get('cleanup.policy')).toBe('delete,compact');

    for (const v of versions(60)) {
      const res = await call(60, v, { includeClusterAuthorizedOperations: false, endpointType: 1 });
      expect(res.clusterId).toBe(broker.clusterId);
      expect(res.brokers).toEqual([expect.objectContaining({ brokerId: broker.nodeId, port: broker.port })]);
    }
    for (const v of versions(20)) {
      const name = `del-${v}`;
      await call(19, 7, { topics: [{ name, numPartitions: 1, replicationFactor: 1 }], timeoutMs: 1000 });
      const body =
        v >= 6
          ? { topics: [{ name, topicId: 'AAAAAAAAAAAAAAAAAAAAAA' }, { name: null, topicId: 'AAAAAAAAAAAAAAAAAAAAAQ' }], timeoutMs: 1000 }
          : { topicNames: [name, 'never-existed'], timeoutMs: 1000 };
      const res = await call(20, v, body);
      expect(res.responses.map((r: any) => r.errorCode)).toEqual(
        v >= 6 ? [ErrorCode.NONE, ErrorCode.UNKNOWN_TOPIC_ID] : [ErrorCode.NONE, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
      );
      expect(broker.server.metadata.topic(name)).toBeUndefined();
    }
  });
});
