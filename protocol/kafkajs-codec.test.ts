/**
 * Golden bytes from a real client: KafkaJS 2.2.4 encodes requests (header and body, as it puts them
 * on the wire); our header reader and generated decoders must read them to the values given, and our
 * encoders must produce the identical bytes, both from the decoded object and from a hand-built
 * input. Responses go the other way: encoded by us, decoded by KafkaJS's own response decoders.
 */
/* eslint-disable @typescript-eslint/no-require-imports */
import {
  APIS,
  type ApiInfo,
} from './generated';
import { readApiVersionsRequest, writeApiVersionsResponse } from './generated/api-versions';
import { readCreateTopicsRequest, writeCreateTopicsResponse } from './generated/create-topics';
import { readDescribeConfigsRequest, writeDescribeConfigsResponse } from './generated/describe-configs';
import { readFetchRequest, writeFetchResponse } from './generated/fetch';
import { readFindCoordinatorRequest, writeFindCoordinatorResponse } from './generated/find-coordinator';
import { readJoinGroupRequest, writeJoinGroupResponse } from './generated/join-group';
import { readListOffsetsRequest, writeListOffsetsResponse } from './generated/list-offsets';
import { readMetadataRequest, writeMetadataResponse } from './generated/metadata';
import { readOffsetCommitRequest, writeOffsetCommitResponse } from './generated/offset-commit';
import { readProduceRequest, writeProduceResponse } from './generated/produce';
import { readRequestHeader, writeRequestHeader } from './header';
import { Reader } from './primitives/reader';
import { Writer } from './primitives/writer';

const KJS = 'kafkajs/src/protocol';

interface KafkaJsRequest {
  apiKey: number;
  apiVersion: number;
  apiName: string;
  encode(): Promise<{ buffer: Buffer }>;
}

/** The request frame KafkaJS would send: int32 size, header v1, body. */
async function kafkajsFrame(request: KafkaJsRequest, correlationId = 42, clientId = 'kafkajs-golden'): Promise<Buffer> {
  const encodeRequest = require(`${KJS}/request`) as (a: unknown) => Promise<{ buffer: Buffer }>;
  const enc = await encodeRequest({ correlationId, clientId, request });
  return Buffer.from(enc.buffer);
}

function kafkajsRequest(api: string, version: number, args: unknown): KafkaJsRequest {
  const factory = require(`${KJS}/requests/${api}/v${version}/request`) as (a: unknown) => KafkaJsRequest;
  return factory(args);
}

async function kafkajsDecodeResponse(api: string, version: number, body: Buffer): Promise<Record<string, unknown>> {
  const { decode } = require(`${KJS}/requests/${api}/v${version}/response`) as {
    decode(b: Buffer): Promise<Record<string, unknown>>;
  };
  return decode(body);
}

/**
 * Reads a KafkaJS request frame with our header reader and the API's generated decoder, checks the
 * re-encoding (header + body) is byte-identical, and returns the decoded body.
 */
async function roundTrip<T>(
  api: string,
  version: number,
  args: unknown,
  info: ApiInfo<T, unknown>,
): Promise<{ body: T; bodyBytes: Buffer }> {
  const req = kafkajsRequest(api, version, args);
  expect(req.apiKey).toBe(info.apiKey);
  expect(req.apiVersion).toBe(version);
  const frame = await kafkajsFrame(req);
  const r = new Reader(frame);
  expect(r.int32()).toBe(frame.length - 4);
  const h = readRequestHeader(r);
  expect(h).toEqual({ apiKey: info.apiKey, apiVersion: version, correlationId: 42, clientId: 'kafkajs-golden', headerVersion: 1 });
  const bodyStart = r.pos;
  const body = info.readRequest(r, version);
  expect(r.remaining).toBe(0);
  const w = new Writer();
  writeRequestHeader(w, info.apiKey, version, 42, 'kafkajs-golden');
  info.writeRequest(w, version, body as never);
  expect(w.toBuffer().toString('hex')).toBe(frame.subarray(4).toString('hex'));
  return { body, bodyBytes: frame.subarray(bodyStart) };
}

function encode(fn: (w: Writer, v: number, m: never) => void, version: number, m: unknown): Buffer {
  const w = new Writer();
  fn(w, version, m as never);
  return w.toBuffer();
}

describe('KafkaJS requests decode with our codecs and re-encode byte for byte', () => {
  test('ApiVersions v2 (empty body) and v0', async () => {
    const { body, bodyBytes } = await roundTrip('apiVersions', 2, {}, APIS.ApiVersions);
    expect(bodyBytes.length).toBe(0);
    expect(body).toEqual({ clientSoftwareName: '', clientSoftwareVersion: '' });
    expect(readApiVersionsRequest(new Reader(Buffer.alloc(0)), 0)).toEqual(body);
    await roundTrip('apiVersions', 0, {}, APIS.ApiVersions);
  });

  test('Metadata v6: topic names, allowAutoTopicCreation; null topics = all', async () => {
    const { body, bodyBytes } = await roundTrip(
      'metadata',
      6,
      { topics: ['orders', 'payments'], allowAutoTopicCreation: false },
      APIS.Metadata,
    );
    expect(body).toEqual({
      topics: [
        { topicId: 'AAAAAAAAAAAAAAAAAAAAAA', name: 'orders' },
        { topicId: 'AAAAAAAAAAAAAAAAAAAAAA', name: 'payments' },
      ],
      allowAutoTopicCreation: false,
      includeClusterAuthorizedOperations: false,
      includeTopicAuthorizedOperations: false,
    });
    const ours = encode(APIS.Metadata.writeRequest, 6, { topics: [{ name: 'orders' }, { name: 'payments' }], allowAutoTopicCreation: false });
    expect(ours.equals(bodyBytes)).toBe(true);
    // KafkaJS writes an empty topic list as a null array: "all topics".
    const all = await roundTrip('metadata', 6, { topics: [] }, APIS.Metadata);
    expect(all.body.topics).toBeNull();
    expect(all.body.allowAutoTopicCreation).toBe(true);
    expect(readMetadataRequest(new Reader(all.bodyBytes), 6).topics).toBeNull();
  });

  test('Produce v7 with a KafkaJS record batch (records stay raw bytes)', async () => {
    const args = {
      acks: -1,
      timeout: 30000,
      compression: 0,
      topicData: [
        {
          topic: 'orders',
          partitions: [
            {
              partition: 0,
              firstSequence: 0,
              messages: [
                { key: 'k1', value: 'v1', timestamp: 1700000000000, headers: { h: 'x' } },
                { key: null, value: 'v2', timestamp: 1700000000005 },
              ],
            },
          ],
        },
        { topic: 'payments', partitions: [{ partition: 3, messages: [{ value: 'p', timestamp: 1700000000000 }] }] },
      ],
    };
    const { body, bodyBytes } = await roundTrip('produce', 7, args, APIS.Produce);
    expect(body.transactionalId).toBeNull();
    expect(body.acks).toBe(-1);
    expect(body.timeoutMs).toBe(30000);
    expect(body.topicData.map((t) => t.name)).toEqual(['orders', 'payments']);
    const p0 = body.topicData[0].partitionData[0];
    expect(p0.index).toBe(0);
    const batch = p0.records!;
    // A v2 record batch: magic 2 at offset 16, batchLength covers the rest, 2 records.
    expect(batch.readInt8(16)).toBe(2);
    expect(batch.readInt32BE(8)).toBe(batch.length - 12);
    expect(batch.readInt32BE(57)).toBe(2);
    expect(batch.readBigInt64BE(27)).toBe(1700000000000n);
    // Zero copy: the decoded records are a view of the request bytes.
    expect(batch.buffer).toBe(bodyBytes.buffer);
    expect(body.topicData[1].partitionData[0].index).toBe(3);
    expect(readProduceRequest(new Reader(bodyBytes), 7)).toEqual(body);
  });

  test('Produce v3 transactional', async () => {
    const { body } = await roundTrip(
      'produce',
      3,
      {
        acks: 1,
        timeout: 100,
        transactionalId: 'tx-1',
        producerId: 7,
        producerEpoch: 1,
        topicData: [{ topic: 't', partitions: [{ partition: 0, firstSequence: 5, messages: [{ value: 'a', timestamp: 1 }] }] }],
      },
      APIS.Produce,
    );
    expect(body.transactionalId).toBe('tx-1');
    const batch = body.topicData[0].partitionData[0].records!;
    expect(batch.readBigInt64BE(43)).toBe(7n); // producerId
    expect(batch.readInt32BE(53)).toBe(5); // baseSequence
  });

  test('Fetch v11: rack id, session, isolation level, forgotten topics', async () => {
    const args = {
      replicaId: -1,
      maxWaitTime: 500,
      minBytes: 1,
      maxBytes: 10485760,
      isolationLevel: 1,
      sessionId: 0,
      sessionEpoch: -1,
      rackId: 'rack-a',
      topics: [
        {
          topic: 'orders',
          partitions: [
            { partition: 0, currentLeaderEpoch: 3, fetchOffset: '123456789012', logStartOffset: '-1', maxBytes: 1048576 },
            { partition: 1, fetchOffset: '0', maxBytes: 1048576 },
          ],
        },
      ],
      forgottenTopics: [{ topic: 'old', partitions: [4, 5] }],
    };
    const { body, bodyBytes } = await roundTrip('fetch', 11, args, APIS.Fetch);
    expect(body).toMatchObject({
      replicaId: -1,
      maxWaitMs: 500,
      minBytes: 1,
      maxBytes: 10485760,
      isolationLevel: 1,
      sessionId: 0,
      sessionEpoch: -1,
      rackId: 'rack-a',
      clusterId: null,
      forgottenTopicsData: [{ topic: 'old', partitions: [4, 5] }],
    });
    expect(body.topics[0].topic).toBe('orders');
    expect(body.topics[0].partitions).toEqual([
      {
        partition: 0,
        currentLeaderEpoch: 3,
        fetchOffset: 123456789012n,
        lastFetchedEpoch: -1,
        logStartOffset: -1n,
        partitionMaxBytes: 1048576,
        replicaDirectoryId: 'AAAAAAAAAAAAAAAAAAAAAA',
      },
      {
        partition: 1,
        currentLeaderEpoch: -1,
        fetchOffset: 0n,
        lastFetchedEpoch: -1,
        logStartOffset: -1n,
        partitionMaxBytes: 1048576,
        replicaDirectoryId: 'AAAAAAAAAAAAAAAAAAAAAA',
      },
    ]);
    const ours = encode(APIS.Fetch.writeRequest, 11, {
      maxWaitMs: 500,
      minBytes: 1,
      maxBytes: 10485760,
      isolationLevel: 1,
      rackId: 'rack-a',
      topics: [
        {
          topic: 'orders',
          partitions: [
            { partition: 0, currentLeaderEpoch: 3, fetchOffset: 123456789012n, partitionMaxBytes: 1048576 },
            { partition: 1, fetchOffset: 0n, partitionMaxBytes: 1048576 },
          ],
        },
      ],
      forgottenTopicsData: [{ topic: 'old', partitions: [4, 5] }],
    });
    expect(ours.toString('hex')).toBe(bodyBytes.toString('hex'));
    expect(readFetchRequest(new Reader(bodyBytes), 11)).toEqual(body);
  });

  test('Fetch v4', async () => {
    const { body } = await roundTrip(
      'fetch',
      4,
      { replicaId: -1, maxWaitTime: 100, minBytes: 1, maxBytes: 1000, topics: [{ topic: 't', partitions: [{ partition: 2, fetchOffset: '7', maxBytes: 99 }] }] },
      APIS.Fetch,
    );
    expect(body.isolationLevel).toBe(1);
    expect(body.topics[0].partitions[0]).toMatchObject({ partition: 2, fetchOffset: 7n, partitionMaxBytes: 99 });
  });

  test('ListOffsets v3', async () => {
    const { body, bodyBytes } = await roundTrip(
      'listOffsets',
      3,
      {
        replicaId: -1,
        isolationLevel: 1,
        topics: [{ topic: 'orders', partitions: [{ partition: 0, timestamp: -1 }, { partition: 1, timestamp: '1700000000000' }] }],
      },
      APIS.ListOffsets,
    );
    expect(body).toEqual({
      replicaId: -1,
      isolationLevel: 1,
      topics: [
        {
          name: 'orders',
          partitions: [
            { partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n, maxNumOffsets: 1 },
            { partitionIndex: 1, currentLeaderEpoch: -1, timestamp: 1700000000000n, maxNumOffsets: 1 },
          ],
        },
      ],
      timeoutMs: 0,
    });
    expect(readListOffsetsRequest(new Reader(bodyBytes), 3)).toEqual(body);
  });

  test('CreateTopics v3: assignments and configs', async () => {
    const { body, bodyBytes } = await roundTrip(
      'createTopics',
      3,
      {
        topics: [
          { topic: 'a', numPartitions: 3, replicationFactor: 1, configEntries: [{ name: 'cleanup.policy', value: 'compact' }] },
          { topic: 'b', replicaAssignment: [{ partition: 0, replicas: [1, 2] }] },
        ],
        validateOnly: true,
        timeout: 5000,
      },
      APIS.CreateTopics,
    );
    expect(body).toEqual({
      topics: [
        { name: 'a', numPartitions: 3, replicationFactor: 1, assignments: [], configs: [{ name: 'cleanup.policy', value: 'compact' }] },
        { name: 'b', numPartitions: -1, replicationFactor: -1, assignments: [{ partitionIndex: 0, brokerIds: [1, 2] }], configs: [] },
      ],
      timeoutMs: 5000,
      validateOnly: true,
    });
    expect(readCreateTopicsRequest(new Reader(bodyBytes), 3)).toEqual(body);
  });

  test('JoinGroup v5: group instance id, protocols with metadata', async () => {
    const metadata = Buffer.from([0, 1, 0, 0, 0, 1, 0, 1, 0x74, 0, 0, 0, 0]);
    const { body, bodyBytes } = await roundTrip(
      'joinGroup',
      5,
      {
        groupId: 'g',
        sessionTimeout: 30000,
        rebalanceTimeout: 60000,
        memberId: '',
        groupInstanceId: null,
        protocolType: 'consumer',
        groupProtocols: [{ name: 'RoundRobinAssigner', metadata }],
      },
      APIS.JoinGroup,
    );
    expect(body).toEqual({
      groupId: 'g',
      sessionTimeoutMs: 30000,
      rebalanceTimeoutMs: 60000,
      memberId: '',
      groupInstanceId: null,
      protocolType: 'consumer',
      protocols: [{ name: 'RoundRobinAssigner', metadata }],
      reason: null,
    });
    expect(readJoinGroupRequest(new Reader(bodyBytes), 5)).toEqual(body);
  });

  test('OffsetCommit v5 (no retention time field)', async () => {
    const { body, bodyBytes } = await roundTrip(
      'offsetCommit',
      5,
      {
        groupId: 'g',
        groupGenerationId: 4,
        memberId: 'm-1',
        topics: [{ topic: 't', partitions: [{ partition: 0, offset: '15' }, { partition: 1, offset: '9', metadata: 'md' }] }],
      },
      APIS.OffsetCommit,
    );
    expect(body).toEqual({
      groupId: 'g',
      generationIdOrMemberEpoch: 4,
      memberId: 'm-1',
      groupInstanceId: null,
      retentionTimeMs: -1n,
      topics: [
        {
          name: 't',
          partitions: [
            { partitionIndex: 0, committedOffset: 15n, committedLeaderEpoch: -1, commitTimestamp: -1n, committedMetadata: null },
            { partitionIndex: 1, committedOffset: 9n, committedLeaderEpoch: -1, commitTimestamp: -1n, committedMetadata: 'md' },
          ],
        },
      ],
    });
    expect(readOffsetCommitRequest(new Reader(bodyBytes), 5)).toEqual(body);
  });

  test('FindCoordinator v2 (group and transaction keys)', async () => {
    const { body, bodyBytes } = await roundTrip('findCoordinator', 2, { coordinatorKey: 'my-group', coordinatorType: 0 }, APIS.FindCoordinator);
    expect(body).toEqual({ key: 'my-group', keyType: 0, coordinatorKeys: [] });
    expect(readFindCoordinatorRequest(new Reader(bodyBytes), 2)).toEqual(body);
    const tx = await roundTrip('findCoordinator', 2, { coordinatorKey: 'tx', coordinatorType: 1 }, APIS.FindCoordinator);
    expect(tx.body.keyType).toBe(1);
  });

  test('DescribeConfigs v2: null and explicit config names', async () => {
    const { body, bodyBytes } = await roundTrip(
      'describeConfigs',
      2,
      {
        resources: [
          { type: 2, name: 'orders', configNames: ['retention.ms'] },
          { type: 4, name: '1', configNames: [] },
        ],
        includeSynonyms: true,
      },
      APIS.DescribeConfigs,
    );
    expect(body).toEqual({
      resources: [
        { resourceType: 2, resourceName: 'orders', configurationKeys: ['retention.ms'] },
        { resourceType: 4, resourceName: '1', configurationKeys: null },
      ],
      includeSynonyms: true,
      includeDocumentation: false,
    });
    expect(readDescribeConfigsRequest(new Reader(bodyBytes), 2)).toEqual(body);
  });
});

describe('our responses decode with KafkaJS', () => {
  test('ApiVersions v2', async () => {
    const body = encode(writeApiVersionsResponse, 2, {
      errorCode: 0,
      apiKeys: [
        { apiKey: 0, minVersion: 0, maxVersion: 11 },
        { apiKey: 18, minVersion: 0, maxVersion: 4 },
      ],
      throttleTimeMs: 7,
    });
    const d = await kafkajsDecodeResponse('apiVersions', 2, body);
    expect(d).toMatchObject({
      errorCode: 0,
      apiVersions: [
        { apiKey: 0, minVersion: 0, maxVersion: 11 },
        { apiKey: 18, minVersion: 0, maxVersion: 4 },
      ],
      clientSideThrottleTime: 7,
    });
  });

  test('Metadata v6', async () => {
    const body = encode(writeMetadataResponse, 6, {
      throttleTimeMs: 0,
      brokers: [{ nodeId: 1, host: '127.0.0.1', port: 9092, rack: null }],
      clusterId: 'krill-cluster',
      controllerId: 1,
      topics: [
        {
          errorCode: 0,
          name: 'orders',
          isInternal: false,
          partitions: [{ errorCode: 0, partitionIndex: 0, leaderId: 1, replicaNodes: [1], isrNodes: [1], offlineReplicas: [] }],
        },
      ],
    });
    const d = await kafkajsDecodeResponse('metadata', 6, body);
    expect(d).toMatchObject({
      brokers: [{ nodeId: 1, host: '127.0.0.1', port: 9092, rack: null }],
      clusterId: 'krill-cluster',
      controllerId: 1,
      topicMetadata: [
        {
          topicErrorCode: 0,
          topic: 'orders',
          isInternal: false,
          partitionMetadata: [{ partitionErrorCode: 0, partitionId: 0, leader: 1, replicas: [1], isr: [1], offlineReplicas: [] }],
        },
      ],
    });
  });

  test('Produce v7', async () => {
    const body = encode(writeProduceResponse, 7, {
      responses: [{ name: 'orders', partitionResponses: [{ index: 0, errorCode: 0, baseOffset: 41n, logStartOffset: 0n }] }],
      throttleTimeMs: 0,
    });
    const d = await kafkajsDecodeResponse('produce', 7, body);
    expect(d).toMatchObject({
      topics: [{ topicName: 'orders', partitions: [{ partition: 0, errorCode: 0, baseOffset: '41', logAppendTime: '-1', logStartOffset: '0' }] }],
    });
  });

  test('Fetch v11 with a record batch built by KafkaJS', async () => {
    const { RecordBatch } = require(`${KJS}/recordBatch/v0`) as { RecordBatch(a: unknown): Promise<{ buffer: Buffer }> };
    const Record = require(`${KJS}/recordBatch/record/v0`) as (a: unknown) => unknown;
    const batch = await RecordBatch({
      compression: 0,
      firstOffset: { toString: () => '10' },
      firstTimestamp: 1700000000000,
      maxTimestamp: 1700000000000,
      lastOffsetDelta: 1,
      records: [
        Record({ offsetDelta: 0, timestampDelta: 0, key: 'k', value: 'hello' }),
        Record({ offsetDelta: 1, timestampDelta: 0, key: null, value: 'world' }),
      ],
    });
    const records = Buffer.from(batch.buffer);
    const body = encode(writeFetchResponse, 11, {
      throttleTimeMs: 0,
      errorCode: 0,
      sessionId: 0,
      responses: [
        {
          topic: 'orders',
          partitions: [
            { partitionIndex: 0, errorCode: 0, highWatermark: 12n, lastStableOffset: 12n, logStartOffset: 0n, records },
            { partitionIndex: 1, errorCode: 0, highWatermark: 0n, lastStableOffset: 0n, logStartOffset: 0n },
          ],
        },
      ],
    });
    const d = (await kafkajsDecodeResponse('fetch', 11, body)) as {
      errorCode: number;
      responses: { topicName: string; partitions: { partition: number; highWatermark: string; preferredReadReplica: number; messages: { key: Buffer | null; value: Buffer; offset: string }[] }[] }[];
    };
    expect(d.errorCode).toBe(0);
    expect(d.responses[0].topicName).toBe('orders');
    const [p0, p1] = d.responses[0].partitions;
    expect(p0.highWatermark).toBe('12');
    expect(p0.preferredReadReplica).toBe(-1);
    expect(p0.messages.map((m) => [m.key?.toString() ?? null, m.value.toString(), m.offset])).toEqual([
      ['k', 'hello', '10'],
      [null, 'world', '11'],
    ]);
    // An absent records field is written as an empty record set, never null.
    expect(p1.messages).toEqual([]);
  });

  test('ListOffsets v3', async () => {
    const body = encode(writeListOffsetsResponse, 3, {
      topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, errorCode: 0, timestamp: -1n, offset: 99n }] }],
    });
    const d = await kafkajsDecodeResponse('listOffsets', 3, body);
    expect(d).toMatchObject({ responses: [{ topic: 'orders', partitions: [{ partition: 0, errorCode: 0, timestamp: '-1', offset: '99' }] }] });
  });

  test('CreateTopics v3, JoinGroup v5, OffsetCommit v5, FindCoordinator v2, DescribeConfigs v2', async () => {
    expect(
      await kafkajsDecodeResponse(
        'createTopics',
        3,
        encode(writeCreateTopicsResponse, 3, { topics: [{ name: 'a', errorCode: 36, errorMessage: 'exists' }] }),
      ),
    ).toMatchObject({ topicErrors: [{ topic: 'a', errorCode: 36, errorMessage: 'exists' }] });

    const meta = Buffer.from('assignment-metadata');
    expect(
      await kafkajsDecodeResponse(
        'joinGroup',
        5,
        encode(writeJoinGroupResponse, 5, {
          generationId: 3,
          protocolName: 'RoundRobinAssigner',
          leader: 'm-1',
          memberId: 'm-1',
          members: [{ memberId: 'm-1', groupInstanceId: null, metadata: meta }],
        }),
      ),
    ).toMatchObject({
      errorCode: 0,
      generationId: 3,
      groupProtocol: 'RoundRobinAssigner',
      leaderId: 'm-1',
      memberId: 'm-1',
      members: [{ memberId: 'm-1', groupInstanceId: null, memberMetadata: meta }],
    });

    expect(
      await kafkajsDecodeResponse(
        'offsetCommit',
        5,
        encode(writeOffsetCommitResponse, 5, { topics: [{ name: 't', partitions: [{ partitionIndex: 0, errorCode: 0 }] }] }),
      ),
    ).toMatchObject({ responses: [{ topic: 't', partitions: [{ partition: 0, errorCode: 0 }] }] });

    expect(
      await kafkajsDecodeResponse(
        'findCoordinator',
        2,
        encode(writeFindCoordinatorResponse, 2, { errorCode: 0, errorMessage: null, nodeId: 1, host: 'localhost', port: 9092 }),
      ),
    ).toMatchObject({ errorCode: 0, errorMessage: null, coordinator: { nodeId: 1, host: 'localhost', port: 9092 } });

    expect(
      await kafkajsDecodeResponse(
        'describeConfigs',
        2,
        encode(writeDescribeConfigsResponse, 2, {
          results: [
            {
              errorCode: 0,
              resourceType: 2,
              resourceName: 'orders',
              configs: [
                {
                  name: 'retention.ms',
                  value: '604800000',
                  readOnly: false,
                  configSource: 5,
                  isSensitive: false,
                  synonyms: [{ name: 'log.retention.ms', value: null, source: 5 }],
                },
              ],
            },
          ],
        }),
      ),
    ).toMatchObject({
      resources: [
        {
          errorCode: 0,
          resourceType: 2,
          resourceName: 'orders',
          configEntries: [
            {
              configName: 'retention.ms',
              configValue: '604800000',
              readOnly: false,
              configSource: 5,
              isSensitive: false,
              configSynonyms: [{ configName: 'log.retention.ms', configValue: null, configSource: 5 }],
            },
          ],
        },
      ],
    });
  });
});
