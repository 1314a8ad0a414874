/**
 * Authorization of every broker API through the real dispatcher of a running broker whose
 * authorizer is a scripted allow table (broker/security/testing/scripted-authorizer.ts; everything
 * not allowed is denied): for each API the operations KafkaApis checks, the answer when they are
 * allowed, and Kafka's error (per partition, per topic, per group or top level) at every advertised
 * version when they are not; the filtered answers (Metadata, DescribeTopicPartitions, ListGroups, ListTransactions,
 * OffsetFetch, DescribeTransactions) and the authorized-operations bit fields.
 */
import { startBroker, type RunningBroker } from '..';
import { ErrorCode } from '../../protocol/errors';
import { ZERO_UUID } from '../../protocol/primitives/uuid';
import { Writer } from '../../protocol/primitives/writer';
import { buildRecordBatch } from '../../protocol/records/memory-records-builder';
import { writeConsumerProtocolSubscription } from '../../protocol/generated/message-data/consumer-protocol-subscription';
import { AclOperation, ResourceType } from '../../metadata/authorizer/authorizer';
import { advertisedVersions as versions } from '../testing/dispatch-client';
import { CLUSTER_NAME, scriptedAuthorization } from '../testing/scripted-authorization';
import { AUTHORIZED_OPERATIONS_OMITTED, to32BitField } from '../security/authorize';
import { ApiKey } from '../../protocol/generated';

const { READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE } = AclOperation;
const { TOPIC, GROUP, CLUSTER, TRANSACTIONAL_ID } = ResourceType;
const {
  NONE,
  TOPIC_AUTHORIZATION_FAILED: TAF,
  GROUP_AUTHORIZATION_FAILED: GAF,
  CLUSTER_AUTHORIZATION_FAILED: CAF,
  TRANSACTIONAL_ID_AUTHORIZATION_FAILED: TIAF,
  UNKNOWN_TOPIC_OR_PARTITION,
} = ErrorCode;

const API = ApiKey;

let broker: RunningBroker;
const { authz, call, allowingEverything } = scriptedAuthorization(() => broker.server, 'authz-test');
beforeEach(() => authz.reset());

/** [topic, partition, error] of a Produce / DeleteRecords / ListOffsets-like response. */
const partitionCodes = (topics: any[], partitionsOf: (t: any) => any[], index: (p: any) => number, name: (t: any) => string = (t) => t.name) =>
  topics.flatMap((t) => partitionsOf(t).map((p) => [name(t), index(p), p.errorCode ?? p.partitionErrorCode]));

function subscription(...topics: string[]): Buffer {
  const w = new Writer();
  w.int16(0);
  writeConsumerProtocolSubscription(w, 0, { topics, userData: null });
  return w.toBuffer();
}

async function topicIdOf(name: string): Promise<string> {
  return broker.server.metadata.topic(name)!.topicId;
}

async function produce(topic: string, partition: number, value: string): Promise<void> {
  const r = await call(API.Produce, 9, { acks: -1, timeoutMs: 1000, topicData: [{ name: topic, partitionData: [{ index: partition, records: buildRecordBatch([{ value }]) }] }] });
  expect(r.responses[0].partitionResponses[0].errorCode).toBe(NONE);
}

beforeAll(async () => {
  broker = await startBroker({
    logLevel: 'error',
    authorizer: authz,
    config: {
      'num.partitions': 2,
      'offsets.topic.num.partitions': 2,
      'transaction.state.log.num.partitions': 2,
      'group.initial.rebalance.delay.ms': 0,
      'group.min.session.timeout.ms': 100,
    },
  });
  await allowingEverything(async () => {
    const created = await call(API.CreateTopics, 7, {
      topics: ['open', 'secret', 'deletable', 'grow'].map((name) => ({ name, numPartitions: 2, replicationFactor: 1 })),
      timeoutMs: 1000,
    });
    expect(created.topics.map((t: any) => t.errorCode)).toEqual([NONE, NONE, NONE, NONE]);
    await produce('open', 0, 'o');
    await produce('secret', 0, 's');
    // The coordinators' topics exist from the first lookups on.
    expect((await call(API.FindCoordinator, 4, { keyType: 0, coordinatorKeys: ['setup'] })).coordinators[0].errorCode).toBe(NONE);
    expect((await call(API.FindCoordinator, 4, { keyType: 1, coordinatorKeys: ['setup'] })).coordinators[0].errorCode).toBe(NONE);
    // A simple group with offsets on both topics.
    const commit = await call(API.OffsetCommit, 8, {
      groupId: 'g-offsets',
      generationIdOrMemberEpoch: -1,
      topics: [
        { name: 'open', partitions: [{ partitionIndex: 0, committedOffset: 1n, committedMetadata: 'o' }] },
        { name: 'secret', partitions: [{ partitionIndex: 0, committedOffset: 1n, committedMetadata: 's' }] },
      ],
    });
    expect(commit.topics.map((t: any) => t.partitions[0].errorCode)).toEqual([NONE, NONE]);
  });
});

afterAll(async () => {
  await broker?.close();
});

describe('Produce, Fetch, ListOffsets, OffsetForLeaderEpoch', () => {
  test('Produce: WRITE on each topic; a denied topic is TOPIC_AUTHORIZATION_FAILED per partition, before existence', async () => {
    authz.allow(WRITE, TOPIC, 'open');
    const batch = buildRecordBatch([{ value: 'x' }]);
    for (const v of versions(API.Produce)) {
      const res = await call(API.Produce, v, {
        acks: -1,
        timeoutMs: 1000,
        topicData: [
          { name: 'open', partitionData: [{ index: 0, records: batch }] },
          { name: 'secret', partitionData: [{ index: 0, records: batch }, { index: 99, records: batch }] },
          { name: 'nowhere', partitionData: [{ index: 0, records: batch }] },
        ],
      });
      expect(partitionCodes(res.responses, (t) => t.partitionResponses, (p) => p.index)).toEqual([
        ['open', 0, NONE],
        ['secret', 0, TAF],
        ['secret', 99, TAF],
        ['nowhere', 0, TAF],
      ]);
      expect(res.responses[1].partitionResponses[0]).toMatchObject({ baseOffset: -1n, logStartOffset: -1n });
    }
    // The authorizer was asked once per topic, with how often the request named it.
    const writes = authz.asked.filter((a) => a.operation === WRITE).slice(0, 3);
    expect(writes.map((a) => [a.resourceName, a.resourceReferenceCount])).toEqual([
      ['open', 1],
      ['secret', 1],
      ['nowhere', 1],
    ]);
    // acks=0 with a denied partition: no response, the connection is closed.
    await expect(call(API.Produce, 9, { acks: 0, timeoutMs: 1000, topicData: [{ name: 'secret', partitionData: [{ index: 0, records: batch }] }] })).rejects.toThrow(
      /connection closed: .*TOPIC_AUTHORIZATION_FAILED/,
    );
  });

  test('Produce of transactional batches needs WRITE on the transactional id, else every partition is TRANSACTIONAL_ID_AUTHORIZATION_FAILED', async () => {
    authz.allow(WRITE, TOPIC, 'open').allow(WRITE, TOPIC, 'secret').allow(WRITE, TRANSACTIONAL_ID, 'tx-ok');
    const init = await call(API.InitProducerId, 4, { transactionalId: 'tx-ok', transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
    expect(init.errorCode).toBe(NONE);
    const txnBatch = (seq: number) =>
      buildRecordBatch([{ value: 't' }], { producerId: init.producerId, producerEpoch: init.producerEpoch, baseSequence: seq, isTransactional: true });
    for (const v of versions(API.Produce)) {
      for (const transactionalId of ['tx-denied', null]) {
        const res = await call(API.Produce, v, {
          transactionalId,
          acks: -1,
          timeoutMs: 1000,
          topicData: [
            { name: 'open', partitionData: [{ index: 0, records: txnBatch(0) }, { index: 1, records: buildRecordBatch([{ value: 'plain' }]) }] },
            { name: 'nowhere', partitionData: [{ index: 3, records: txnBatch(0) }] },
          ],
        });
        expect(partitionCodes(res.responses, (t) => t.partitionResponses, (p) => p.index)).toEqual([
          ['open', 0, TIAF],
          ['open', 1, TIAF],
          ['nowhere', 3, TIAF],
        ]);
      }
    }
    await expect(
      call(API.Produce, 9, { transactionalId: 'tx-denied', acks: 0, timeoutMs: 1000, topicData: [{ name: 'open', partitionData: [{ index: 0, records: txnBatch(0) }] }] }),
    ).rejects.toThrow(/connection closed: .*TRANSACTIONAL_ID_AUTHORIZATION_FAILED/);
    // Allowed: the transaction's partition is written, an unwritable topic is refused alone.
    const add = await call(API.AddPartitionsToTxn, 3, {
      v3AndBelowTransactionalId: 'tx-ok',
      v3AndBelowProducerId: init.producerId,
      v3AndBelowProducerEpoch: init.producerEpoch,
      v3AndBelowTopics: [{ name: 'open', partitions: [0] }],
    });
    expect(add.resultsByTopicV3AndBelow[0].resultsByPartition[0].partitionErrorCode).toBe(NONE);
    authz.revoke(WRITE, TOPIC, 'secret');
    const ok = await call(API.Produce, 9, {
      transactionalId: 'tx-ok',
      acks: -1,
      timeoutMs: 1000,
      topicData: [
        { name: 'open', partitionData: [{ index: 0, records: txnBatch(0) }] },
        { name: 'secret', partitionData: [{ index: 0, records: txnBatch(0) }] },
      ],
    });
    expect(partitionCodes(ok.responses, (t) => t.partitionResponses, (p) => p.index)).toEqual([
      ['open', 0, NONE],
      ['secret', 0, TAF],
    ]);
    expect((await call(API.EndTxn, 3, { transactionalId: 'tx-ok', producerId: init.producerId, producerEpoch: init.producerEpoch, committed: false })).errorCode).toBe(NONE);
  });

  test('Fetch: consumers need READ on each topic; followers CLUSTER_ACTION on the cluster', async () => {
    authz.allow(READ, TOPIC, 'open');
    const openId = await topicIdOf('open');
    const secretId = await topicIdOf('secret');
    const part = (partition: number) => ({ partition, fetchOffset: 0n, partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1, logStartOffset: -1n });
    for (const v of versions(API.Fetch)) {
      const topics = [
        { topic: 'open', topicId: v >= 13 ? openId : ZERO_UUID, partitions: [part(0)] },
        { topic: 'secret', topicId: v >= 13 ? secretId : ZERO_UUID, partitions: [part(0), part(1)] },
        ...(v >= 13 ? [{ topic: '', topicId: 'AAAAAAAAAAAAAAAAAAAAAQ', partitions: [part(0)] }] : [{ topic: 'nowhere', partitions: [part(0)] }]),
      ];
      const body = { maxWaitMs: 0, minBytes: 0, maxBytes: 1 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1, topics };
      const res = await call(API.Fetch, v, { ...body, replicaId: v >= 15 ? undefined : -1 });
      expect(res.errorCode).toBe(NONE);
      const byKey = res.responses.flatMap((t: any) => t.partitions.map((p: any) => [v >= 13 ? t.topicId : t.topic, p.partitionIndex, p.errorCode]));
      expect(byKey).toEqual([
        [v >= 13 ? openId : 'open', 0, NONE],
        [v >= 13 ? secretId : 'secret', 0, TAF],
        [v >= 13 ? secretId : 'secret', 1, TAF],
        // Unknown ids come first as UNKNOWN_TOPIC_ID; an unknown name is not described: TAF.
        [v >= 13 ? 'AAAAAAAAAAAAAAAAAAAAAQ' : 'nowhere', 0, v >= 13 ? ErrorCode.UNKNOWN_TOPIC_ID : TAF],
      ]);
      const open = res.responses[0].partitions[0];
      expect(open.records.length).toBeGreaterThan(0);
      const denied = res.responses[1].partitions[0];
      expect(denied).toMatchObject({ highWatermark: -1n, logStartOffset: -1n });
      expect(denied.records.length).toBe(0);

      // A follower without CLUSTER_ACTION: every partition TOPIC_AUTHORIZATION_FAILED, nothing read.
      const follower = v >= 15 ? { replicaState: { replicaId: 1, replicaEpoch: -1n } } : { replicaId: 1 };
      const f = await call(API.Fetch, v, { ...body, ...follower });
      expect(f.responses.flatMap((t: any) => t.partitions.map((p: any) => p.errorCode))).toEqual([TAF, TAF, TAF, TAF]);
    }
    // With CLUSTER_ACTION the follower fetch goes on (this single broker has no replica 1).
    authz.allow(CLUSTER_ACTION, CLUSTER, CLUSTER_NAME);
    const f = await call(API.Fetch, 12, {
      replicaId: 1,
      maxWaitMs: 0,
      minBytes: 0,
      maxBytes: 1 << 20,
      isolationLevel: 0,
      sessionId: 0,
      sessionEpoch: -1,
      topics: [{ topic: 'secret', partitions: [part(0)] }],
    });
    expect(f.responses[0].partitions[0].errorCode).not.toBe(TAF);
  });

  test('ListOffsets: DESCRIBE on each topic, denied topics after the others with TOPIC_AUTHORIZATION_FAILED', async () => {
    authz.allow(DESCRIBE, TOPIC, 'open');
    for (const v of versions(API.ListOffsets)) {
      const res = await call(API.ListOffsets, v, {
        replicaId: -1,
        isolationLevel: 0,
        topics: [
          { name: 'secret', partitions: [{ partitionIndex: 0, timestamp: -1n, maxNumOffsets: 1 }] },
          { name: 'open', partitions: [{ partitionIndex: 0, timestamp: -1n, maxNumOffsets: 1 }] },
        ],
      });
      expect(partitionCodes(res.topics, (t) => t.partitions, (p) => p.partitionIndex)).toEqual([
        ['open', 0, NONE],
        ['secret', 0, TAF],
      ]);
      if (v >= 1) expect(res.topics[1].partitions[0]).toMatchObject({ timestamp: -1n, offset: -1n });
      else expect(res.topics[1].partitions[0].oldStyleOffsets).toEqual([]);
    }
  });

  test('OffsetForLeaderEpoch: CLUSTER_ACTION allows every topic, else DESCRIBE per topic', async () => {
    authz.allow(DESCRIBE, TOPIC, 'open');
    for (const v of versions(API.OffsetForLeaderEpoch)) {
      const body = {
        replicaId: -1,
        topics: ['secret', 'open'].map((topic) => ({ topic, partitions: [{ partition: 0, currentLeaderEpoch: -1, leaderEpoch: 0 }] })),
      };
      const res = await call(API.OffsetForLeaderEpoch, v, body);
      expect(partitionCodes(res.topics, (t) => t.partitions, (p) => p.partition, (t) => t.topic)).toEqual([
        ['open', 0, NONE],
        ['secret', 0, TAF],
      ]);
      expect(res.topics[1].partitions[0].endOffset).toBe(-1n);
      authz.allow(CLUSTER_ACTION, CLUSTER, CLUSTER_NAME);
      const all = await call(API.OffsetForLeaderEpoch, v, body);
      expect(partitionCodes(all.topics, (t) => t.partitions, (p) => p.partition, (t) => t.topic)).toEqual([
        ['secret', 0, NONE],
        ['open', 0, NONE],
      ]);
      authz.revoke(CLUSTER_ACTION, CLUSTER, CLUSTER_NAME);
    }
    // The cluster check does not log its denial.
    expect(authz.asked.find((a) => a.operation === CLUSTER_ACTION)).toMatchObject({ logIfDenied: false });
  });
});

describe('Metadata', () => {
  test('all topics: the undescribable ones are left out, without logging the denials', async () => {
    authz.allow(DESCRIBE, TOPIC, 'open');
    for (const v of versions(API.Metadata)) {
      const res = await call(API.Metadata, v, { topics: v === 0 ? [] : null, allowAutoTopicCreation: v < 4 });
      expect(res.topics.map((t: any) => t.name)).toEqual(['open']);
    }
    expect(authz.asked.filter((a) => a.operation === DESCRIBE).every((a) => a.logIfDenied === false)).toBe(true);
  });

  test('named topics: TOPIC_AUTHORIZATION_FAILED without disclosing existence; by id with the id and no name', async () => {
    authz.allow(DESCRIBE, TOPIC, 'open');
    const secretId = await topicIdOf('secret');
    for (const v of versions(API.Metadata)) {
      const res = await call(API.Metadata, v, {
        topics: [{ name: 'secret' }, { name: 'nowhere' }, { name: 'open' }],
        allowAutoTopicCreation: v < 4,
      });
      expect(res.topics.map((t: any) => [t.name, t.errorCode, t.isInternal])).toEqual([
        ['open', NONE, false],
        ['secret', TAF, false],
        ['nowhere', TAF, false],
      ]);
      if (v >= 10) expect(res.topics[1].topicId).toBe(ZERO_UUID);
      expect(res.topics[1].partitions).toEqual([]);
      if (v >= 12) {
        const byId = await call(API.Metadata, v, { topics: [{ name: null, topicId: secretId }, { name: null, topicId: 'AAAAAAAAAAAAAAAAAAAAAQ' }] });
        expect(byId.topics.map((t: any) => [t.name, t.topicId, t.errorCode])).toEqual([
          [null, 'AAAAAAAAAAAAAAAAAAAAAQ', ErrorCode.UNKNOWN_TOPIC_ID],
          [null, secretId, TAF],
        ]);
      }
    }
    // A DESCRIBE denial of a named topic is logged.
    expect(authz.asked.find((a) => a.resourceName === 'secret')).toMatchObject({ operation: DESCRIBE, logIfDenied: true });
  });

  test('auto creation needs CREATE on the cluster or on the topic', async () => {
    const md = (name: string, v = 9) => call(API.Metadata, v, { topics: [{ name }], allowAutoTopicCreation: true });
    // A single broker has the new topic's metadata by the time it answers.
    authz.allow(DESCRIBE, TOPIC);
    // DESCRIBE alone: not created, TOPIC_AUTHORIZATION_FAILED with a zero id.
    for (const v of [0, 4, 9, 12]) {
      const denied = await md(`auto-denied-${v}`, v);
      expect(denied.topics[0]).toMatchObject({ name: `auto-denied-${v}`, errorCode: TAF, partitions: [] });
      expect(broker.server.metadata.topic(`auto-denied-${v}`)).toBeUndefined();
    }
    expect(authz.asked.find((a) => a.operation === CREATE && a.resourceType === CLUSTER)).toMatchObject({ logIfDenied: false });
    // CREATE on the topic: created.
    authz.allow(CREATE, TOPIC, 'auto-by-topic');
    expect((await md('auto-by-topic')).topics[0]).toMatchObject({ name: 'auto-by-topic', errorCode: NONE });
    expect(broker.server.metadata.topic('auto-by-topic')).toBeDefined();
    // CREATE on the cluster: any.
    authz.allow(CREATE, CLUSTER, CLUSTER_NAME);
    expect((await md('auto-by-cluster')).topics[0]).toMatchObject({ name: 'auto-by-cluster', errorCode: NONE });
    expect(broker.server.metadata.topic('auto-by-cluster')).toBeDefined();
    // Without DESCRIBE the CREATE permission is not even looked at.
    authz.reset().allow(CREATE, CLUSTER, CLUSTER_NAME);
    expect((await md('auto-undescribed')).topics[0].errorCode).toBe(TAF);
    expect(broker.server.metadata.topic('auto-undescribed')).toBeUndefined();
  });

  test('topic and cluster authorized operations', async () => {
    authz.allow(DESCRIBE, TOPIC, 'open').allow(READ, TOPIC, 'open').allow(ALTER_CONFIGS, TOPIC, 'open');
    for (const v of versions(API.Metadata).filter((x) => x >= 8)) {
      const res = await call(API.Metadata, v, {
        topics: [{ name: 'open' }, { name: 'secret' }],
        allowAutoTopicCreation: false,
        includeTopicAuthorizedOperations: true,
        includeClusterAuthorizedOperations: v <= 10,
      });
      expect(res.topics.map((t: any) => [t.name, t.topicAuthorizedOperations])).toEqual([
        ['open', to32BitField([READ, DESCRIBE, ALTER_CONFIGS])],
        ['secret', AUTHORIZED_OPERATIONS_OMITTED],
      ]);
      // No DESCRIBE on the cluster: 0 (v8-10 only carry it).
      expect(res.clusterAuthorizedOperations).toBe(v <= 10 ? 0 : AUTHORIZED_OPERATIONS_OMITTED);
      const notAsked = await call(API.Metadata, v, { topics: [{ name: 'open' }], allowAutoTopicCreation: false });
      expect(notAsked.topics[0].topicAuthorizedOperations).toBe(AUTHORIZED_OPERATIONS_OMITTED);
    }
    authz.allow(DESCRIBE, CLUSTER, CLUSTER_NAME).allow(IDEMPOTENT_WRITE, CLUSTER, CLUSTER_NAME);
    const res = await call(API.Metadata, 10, { topics: [], allowAutoTopicCreation: false, includeClusterAuthorizedOperations: true });
    expect(res.clusterAuthorizedOperations).toBe(to32BitField([DESCRIBE, IDEMPOTENT_WRITE]));
  });
});

describe('DescribeTopicPartitions', () => {
  test('DESCRIBE on each topic: all topics leave the others out; listed ones are TOPIC_AUTHORIZATION_FAILED with a zero id, last', async () => {
    authz.allow(DESCRIBE, TOPIC, 'open').allow(READ, TOPIC, 'open');
    const all = await call(API.DescribeTopicPartitions, 0, { topics: [], responsePartitionLimit: 2000, cursor: null });
    expect(all.topics.map((t: any) => [t.name, t.errorCode])).toEqual([['open', NONE]]);
    expect(all.topics[0].topicAuthorizedOperations).toBe(to32BitField([READ, DESCRIBE]));
    const listed = await call(API.DescribeTopicPartitions, 0, { topics: [{ name: 'secret' }, { name: 'nowhere' }, { name: 'open' }], responsePartitionLimit: 2000, cursor: null });
    expect(listed.topics.map((t: any) => [t.name, t.errorCode, t.topicId, t.partitions.length])).toEqual([
      ['open', NONE, await topicIdOf('open'), 2],
      ['nowhere', TAF, ZERO_UUID, 0],
      ['secret', TAF, ZERO_UUID, 0],
    ]);
    expect(listed.topics[1].topicAuthorizedOperations).toBe(AUTHORIZED_OPERATIONS_OMITTED);
    expect(authz.asked.find((a) => a.resourceName === 'secret')).toMatchObject({ operation: DESCRIBE, resourceType: TOPIC, logIfDenied: true });
  });
});

describe('topic administration', () => {
  test('CreateTopics: CREATE on the cluster or the topic; configs only with DESCRIBE_CONFIGS', async () => {
    for (const v of versions(API.CreateTopics)) {
      authz.allow(CREATE, TOPIC, `ct-a-${v}`);
      const res = await call(API.CreateTopics, v, {
        topics: [
          { name: `ct-b-${v}`, numPartitions: 1, replicationFactor: 1 },
          { name: `ct-a-${v}`, numPartitions: 1, replicationFactor: 1 },
        ],
        timeoutMs: 1000,
      });
      expect(res.topics.map((t: any) => [t.name, t.errorCode, v >= 1 ? t.errorMessage : null])).toEqual([
        [`ct-b-${v}`, TAF, v >= 1 ? 'Authorization failed.' : null],
        [`ct-a-${v}`, NONE, null],
      ]);
      expect(broker.server.metadata.topic(`ct-a-${v}`)).toBeDefined();
      if (v >= 5) {
        // Created without DESCRIBE_CONFIGS: no configs, no counts.
        expect(res.topics[1]).toMatchObject({ numPartitions: -1, replicationFactor: -1, configs: [], topicConfigErrorCode: TAF });
        expect(res.topics[0].topicConfigErrorCode).toBe(NONE);
      }
      if (v >= 7) expect(res.topics[1].topicId).toHaveLength(22);
    }
    expect(broker.server.metadata.topic('ct-b-0')).toBeUndefined();
    authz.allow(CREATE, TOPIC, 'ct-visible').allow(DESCRIBE_CONFIGS, TOPIC, 'ct-visible');
    const visible = await call(API.CreateTopics, 7, { topics: [{ name: 'ct-visible', numPartitions: 1, replicationFactor: 1 }], timeoutMs: 1000, validateOnly: true });
    expect(visible.topics[0]).toMatchObject({ errorCode: NONE, numPartitions: 1, replicationFactor: 1, topicConfigErrorCode: NONE });
    expect(visible.topics[0].configs.length).toBeGreaterThan(0);
    // CREATE on the cluster: every topic; the topic-level checks are then not asked.
    authz.reset().allow(CREATE, CLUSTER, CLUSTER_NAME);
    const any = await call(API.CreateTopics, 7, { topics: [{ name: 'ct-c', numPartitions: 1, replicationFactor: 1 }], timeoutMs: 1000 });
    expect(any.topics[0]).toMatchObject({ name: 'ct-c', errorCode: NONE, topicConfigErrorCode: TAF });
    expect(authz.askedLines()).toEqual(['CREATE CLUSTER kafka-cluster', 'DESCRIBE_CONFIGS TOPIC ct-c']);
    expect(authz.asked.map((a) => a.logIfDenied)).toEqual([false, false]);
    // Duplicates and __cluster_metadata are answered before authorization.
    const dup = await call(API.CreateTopics, 7, {
      topics: [
        { name: 'dup', numPartitions: 1, replicationFactor: 1 },
        { name: 'dup', numPartitions: 1, replicationFactor: 1 },
        { name: '__cluster_metadata', numPartitions: 1, replicationFactor: 1 },
      ],
      timeoutMs: 1000,
    });
    expect(dup.topics.map((t: any) => t.errorCode)).toEqual([ErrorCode.INVALID_REQUEST, ErrorCode.INVALID_REQUEST]);
  });

  test('DeleteTopics: DESCRIBE and DELETE per topic (or DELETE on the cluster); ids are not secret', async () => {
    for (const v of versions(API.DeleteTopics)) {
      authz.reset().allow(DESCRIBE, TOPIC, 'open');
      const names = ['secret', 'open', 'nowhere'];
      const res = await call(API.DeleteTopics, v, v >= 6 ? { topics: names.map((name) => ({ name, topicId: ZERO_UUID })), timeoutMs: 1000 } : { topicNames: names, timeoutMs: 1000 });
      expect(res.responses.map((r: any) => [r.name, r.errorCode])).toEqual([
        ['secret', TAF],
        ['open', TAF],
        ['nowhere', TAF],
      ]);
      if (v >= 5) expect(res.responses[0].errorMessage).toBe('Topic authorization failed.');
      authz.allow(DESCRIBE, TOPIC, 'nowhere');
      const unknown = await call(API.DeleteTopics, v, v >= 6 ? { topics: [{ name: 'nowhere', topicId: ZERO_UUID }], timeoutMs: 1000 } : { topicNames: ['nowhere'], timeoutMs: 1000 });
      expect(unknown.responses[0].errorCode).toBe(UNKNOWN_TOPIC_OR_PARTITION);
      if (v >= 6) {
        const secretId = await topicIdOf('secret');
        const openId = await topicIdOf('open');
        const byId = await call(API.DeleteTopics, v, {
          topics: [secretId, openId, 'AAAAAAAAAAAAAAAAAAAAAQ'].map((topicId) => ({ name: null, topicId })),
          timeoutMs: 1000,
        });
        expect(byId.responses.map((r: any) => [r.name, r.topicId, r.errorCode])).toEqual([
          [null, secretId, TAF], // not describable: no name
          ['open', openId, TAF], // describable, not deletable
          [null, 'AAAAAAAAAAAAAAAAAAAAAQ', ErrorCode.UNKNOWN_TOPIC_ID],
        ]);
      }
    }
    expect(broker.server.metadata.topic('secret')).toBeDefined();
    // DELETE (with DESCRIBE) on the topic, or DELETE on the cluster, deletes.
    authz.reset().allow(DESCRIBE, TOPIC, 'deletable').allow(DELETE, TOPIC, 'deletable');
    const ok = await call(API.DeleteTopics, 6, { topics: [{ name: 'deletable', topicId: ZERO_UUID }], timeoutMs: 1000 });
    expect(ok.responses[0]).toMatchObject({ name: 'deletable', errorCode: NONE });
    authz.reset().allow(DELETE, CLUSTER, CLUSTER_NAME);
    const gone = await call(API.DeleteTopics, 6, { topics: [{ name: 'auto-by-cluster', topicId: ZERO_UUID }], timeoutMs: 1000 });
    expect(gone.responses[0]).toMatchObject({ errorCode: NONE });
    expect(authz.askedLines()).toEqual(['DELETE CLUSTER kafka-cluster']);
  });

  test('CreatePartitions: ALTER on each topic', async () => {
    authz.allow(ALTER, TOPIC, 'grow');
    for (const v of versions(API.CreatePartitions)) {
      const res = await call(API.CreatePartitions, v, {
        topics: [
          { name: 'open', count: 5, assignments: null },
          { name: 'grow', count: 3 + v, assignments: null },
        ],
        timeoutMs: 1000,
        validateOnly: false,
      });
      expect(res.results.map((r: any) => [r.name, r.errorCode, r.errorMessage])).toEqual([
        ['open', TAF, null],
        ['grow', NONE, null],
      ]);
    }
    expect(broker.server.metadata.topic('open')!.partitions.size).toBe(2);
  });

  test('DeleteRecords: DELETE on each topic', async () => {
    authz.allow(DELETE, TOPIC, 'open');
    for (const v of versions(API.DeleteRecords)) {
      const res = await call(API.DeleteRecords, v, {
        topics: [
          { name: 'secret', partitions: [{ partitionIndex: 0, offset: 1n }, { partitionIndex: 42, offset: 0n }] },
          { name: 'open', partitions: [{ partitionIndex: 1, offset: 0n }] },
        ],
        timeoutMs: 1000,
      });
      expect(partitionCodes(res.topics, (t) => t.partitions, (p) => p.partitionIndex)).toEqual([
        ['secret', 0, TAF],
        ['secret', 42, TAF],
        ['open', 1, NONE],
      ]);
      expect(res.topics[0].partitions[0].lowWatermark).toBe(-1n);
    }
  });

  test('ElectLeaders: ALTER on the cluster', async () => {
    for (const v of versions(API.ElectLeaders)) {
      const res = await call(API.ElectLeaders, v, { electionType: 0, topicPartitions: [{ topic: 'open', partitions: [0, 1] }], timeoutMs: 1000 });
      if (v >= 1) expect(res.errorCode).toBe(CAF);
      expect(res.replicaElectionResults[0].partitionResult.map((p: any) => [p.partitionId, p.errorCode])).toEqual([
        [0, CAF],
        [1, CAF],
      ]);
      expect(res.replicaElectionResults[0].partitionResult[0].errorMessage).toMatch(/is not authorized\.$/);
      const all = await call(API.ElectLeaders, v, { electionType: 0, topicPartitions: null, timeoutMs: 1000 });
      expect(all.replicaElectionResults).toEqual([]);
    }
    authz.allow(ALTER, CLUSTER, CLUSTER_NAME);
    const ok = await call(API.ElectLeaders, 2, { electionType: 0, topicPartitions: [{ topic: 'open', partitions: [0] }], timeoutMs: 1000 });
    expect(ok.errorCode).toBe(NONE);
    expect(ok.replicaElectionResults[0].partitionResult[0].errorCode).toBe(ErrorCode.ELECTION_NOT_NEEDED);
  });
});

describe('partition reassignments', () => {
  test('AlterPartitionReassignments: ALTER on the cluster, else CLUSTER_AUTHORIZATION_FAILED at the top and on every partition', async () => {
    const res = await call(API.AlterPartitionReassignments, 0, { timeoutMs: 1000, topics: [{ name: 'open', partitions: [{ partitionIndex: 0, replicas: null }, { partitionIndex: 1, replicas: [broker.nodeId] }] }] });
    expect(res.errorCode).toBe(CAF);
    expect(res.errorMessage).toMatch(/is not authorized\.$/);
    expect(res.responses[0].partitions.map((p: any) => [p.partitionIndex, p.errorCode])).toEqual([
      [0, CAF],
      [1, CAF],
    ]);
    authz.allow(ALTER, CLUSTER, CLUSTER_NAME);
    const ok = await call(API.AlterPartitionReassignments, 0, { timeoutMs: 1000, topics: [{ name: 'open', partitions: [{ partitionIndex: 0, replicas: null }] }] });
    expect(ok.errorCode).toBe(NONE);
    expect(ok.responses[0].partitions[0].errorCode).toBe(ErrorCode.NO_REASSIGNMENT_IN_PROGRESS);
  });

  test('ListPartitionReassignments: DESCRIBE on the cluster, else CLUSTER_AUTHORIZATION_FAILED at the top', async () => {
    const res = await call(API.ListPartitionReassignments, 0, { timeoutMs: 1000, topics: null });
    expect(res.errorCode).toBe(CAF);
    expect(res.errorMessage).toMatch(/is not authorized\.$/);
    authz.allow(DESCRIBE, CLUSTER, CLUSTER_NAME);
    const ok = await call(API.ListPartitionReassignments, 0, { timeoutMs: 1000, topics: null });
    expect(ok).toMatchObject({ errorCode: NONE, errorMessage: null, topics: [] });
  });
});

describe('configs, cluster and quotas', () => {
  test('DescribeConfigs: DESCRIBE_CONFIGS on the topic or the cluster; denied resources after the others', async () => {
    authz.allow(DESCRIBE_CONFIGS, TOPIC, 'open');
    for (const v of versions(API.DescribeConfigs)) {
      const res = await call(API.DescribeConfigs, v, {
        resources: [
          { resourceType: 4, resourceName: String(broker.nodeId), configurationKeys: null },
          { resourceType: 2, resourceName: 'secret', configurationKeys: null },
          { resourceType: 2, resourceName: 'open', configurationKeys: ['retention.ms'] },
          { resourceType: 8, resourceName: String(broker.nodeId), configurationKeys: null },
        ],
        includeSynonyms: false,
      });
      expect(res.results.map((r: any) => [r.resourceType, r.resourceName, r.errorCode, r.errorMessage])).toEqual([
        [2, 'open', NONE, null],
        [4, String(broker.nodeId), CAF, 'Cluster authorization failed.'],
        [2, 'secret', TAF, 'Topic authorization failed.'],
        [8, String(broker.nodeId), CAF, 'Cluster authorization failed.'],
      ]);
      expect(res.results[1].configs).toEqual([]);
    }
    authz.allow(DESCRIBE_CONFIGS, CLUSTER, CLUSTER_NAME);
    const broker4 = await call(API.DescribeConfigs, 4, { resources: [{ resourceType: 4, resourceName: String(broker.nodeId), configurationKeys: ['log.retention.hours'] }] });
    expect(broker4.results[0]).toMatchObject({ errorCode: NONE });
  });

  test('AlterConfigs and IncrementalAlterConfigs: ALTER_CONFIGS on the topic or the cluster', async () => {
    authz.allow(ALTER_CONFIGS, TOPIC, 'open');
    for (const v of versions(API.AlterConfigs)) {
      const res = await call(API.AlterConfigs, v, {
        resources: [
          { resourceType: 2, resourceName: 'secret', configs: [{ name: 'retention.ms', value: '1000' }] },
          { resourceType: 2, resourceName: 'open', configs: [{ name: 'retention.ms', value: '7200000' }] },
          { resourceType: 4, resourceName: '', configs: [{ name: 'log.retention.hours', value: '1' }] },
        ],
        validateOnly: false,
      });
      expect(res.responses.map((r: any) => [r.resourceName, r.errorCode, r.errorMessage])).toEqual([
        ['secret', TAF, 'Topic authorization failed.'],
        ['open', NONE, null],
        ['', CAF, 'Cluster authorization failed.'],
      ]);
    }
    for (const v of versions(API.IncrementalAlterConfigs)) {
      const res = await call(API.IncrementalAlterConfigs, v, {
        resources: [
          { resourceType: 2, resourceName: 'secret', configs: [{ name: 'retention.ms', configOperation: 0, value: '1000' }] },
          { resourceType: 2, resourceName: 'open', configs: [{ name: 'retention.ms', configOperation: 0, value: '3600000' }] },
          { resourceType: 8, resourceName: String(broker.nodeId), configs: [{ name: 'root', configOperation: 0, value: 'DEBUG' }] },
        ],
        validateOnly: false,
      });
      expect(res.responses.map((r: any) => [r.resourceName, r.errorCode, r.errorMessage])).toEqual([
        ['secret', TAF, 'Topic authorization failed.'],
        ['open', NONE, null],
        [String(broker.nodeId), CAF, null],
      ]);
    }
    expect(broker.server.metadata.topicConfig('secret').get('retention.ms')).toBeUndefined();
    expect(broker.server.metadata.topicConfig('open').get('retention.ms')).toBe('3600000');
  });

  test('DescribeLogDirs: DESCRIBE on the cluster, else no results (and CLUSTER_AUTHORIZATION_FAILED from v3)', async () => {
    for (const v of versions(API.DescribeLogDirs)) {
      const denied = await call(API.DescribeLogDirs, v, { topics: null });
      expect(denied.results).toEqual([]);
      expect(denied.errorCode).toBe(v >= 3 ? CAF : NONE);
    }
    expect(authz.asked.find((a) => a.resourceType === CLUSTER)).toMatchObject({ operation: DESCRIBE });
    authz.allow(DESCRIBE, CLUSTER, CLUSTER_NAME);
    for (const v of versions(API.DescribeLogDirs)) {
      const allowed = await call(API.DescribeLogDirs, v, { topics: [{ topic: 'secret', partitions: [0] }] });
      expect(allowed.errorCode).toBe(NONE);
      expect(allowed.results.flatMap((r: any) => r.topics.map((t: any) => t.name))).toEqual(['secret']);
    }
  });

  test('AlterReplicaLogDirs: ALTER on the cluster, else CLUSTER_AUTHORIZATION_FAILED for every partition and nothing moves', async () => {
    const dir = broker.server.logManager.getLog('open', 0)!.parentDir;
    const body = { dirs: [{ path: dir, topics: [{ name: 'open', partitions: [0, 1] }, { name: 'secret', partitions: [0] }] }] };
    for (const v of versions(API.AlterReplicaLogDirs)) {
      const denied = await call(API.AlterReplicaLogDirs, v, body);
      expect(partitionCodes(denied.results, (t) => t.partitions, (p) => p.partitionIndex, (t) => t.topicName)).toEqual([
        ['open', 0, CAF],
        ['open', 1, CAF],
        ['secret', 0, CAF],
      ]);
    }
    expect(authz.asked.find((a) => a.resourceType === CLUSTER)).toMatchObject({ operation: ALTER });
    authz.allow(ALTER, CLUSTER, CLUSTER_NAME);
    // Allowed: the logs are already in that (the only) directory, so nothing to move.
    const allowed = await call(API.AlterReplicaLogDirs, 2, body);
    expect(partitionCodes(allowed.results, (t) => t.partitions, (p) => p.partitionIndex, (t) => t.topicName)).toEqual([
      ['open', 0, NONE],
      ['open', 1, NONE],
      ['secret', 0, NONE],
    ]);
    expect(broker.server.logManager.allFutureLogs()).toEqual([]);
  });

  test('UpdateFeatures: ALTER on the cluster, else CLUSTER_AUTHORIZATION_FAILED and nothing changes', async () => {
    // transaction.version stays at 2 (a fresh cluster's) whatever is allowed (v0 cannot ask for validate_only).
    const update = (v: number) => ({ timeoutMs: 1000, featureUpdates: [{ feature: 'transaction.version', maxVersionLevel: 2, upgradeType: 1 }], validateOnly: v >= 1 });
    for (const v of versions(API.UpdateFeatures)) {
      const denied = await call(API.UpdateFeatures, v, update(v));
      expect(denied).toMatchObject({ errorCode: CAF, errorMessage: 'Cluster authorization failed.', results: [] });
    }
    expect(authz.asked.find((a) => a.resourceType === CLUSTER)).toMatchObject({ operation: ALTER });
    authz.allow(ALTER, CLUSTER, CLUSTER_NAME);
    for (const v of versions(API.UpdateFeatures)) expect((await call(API.UpdateFeatures, v, update(v))).errorCode).toBe(NONE);
  });

  test('DescribeCluster: nothing required; cluster_authorized_operations 0 without DESCRIBE on the cluster', async () => {
    for (const v of versions(API.DescribeCluster)) {
      const res = await call(API.DescribeCluster, v, { includeClusterAuthorizedOperations: true, endpointType: 1 });
      expect(res).toMatchObject({ errorCode: NONE, clusterAuthorizedOperations: 0 });
      expect(res.brokers).toHaveLength(1);
      const notAsked = await call(API.DescribeCluster, v, { includeClusterAuthorizedOperations: false, endpointType: 1 });
      expect(notAsked.clusterAuthorizedOperations).toBe(AUTHORIZED_OPERATIONS_OMITTED);
    }
    authz.allow(DESCRIBE, CLUSTER, CLUSTER_NAME).allow(ALTER, CLUSTER, CLUSTER_NAME).allow(CLUSTER_ACTION, CLUSTER, CLUSTER_NAME);
    const res = await call(API.DescribeCluster, 1, { includeClusterAuthorizedOperations: true, endpointType: 1 });
    expect(res.clusterAuthorizedOperations).toBe(to32BitField([DESCRIBE, ALTER, CLUSTER_ACTION]));
  });

  test('DescribeClientQuotas needs DESCRIBE_CONFIGS, AlterClientQuotas ALTER_CONFIGS on the cluster', async () => {
    const entity = [{ entityType: 'user', entityName: 'alice' }];
    for (const v of versions(API.DescribeClientQuotas)) {
      const res = await call(API.DescribeClientQuotas, v, { components: [], strict: false });
      expect(res).toMatchObject({ errorCode: CAF, errorMessage: null, entries: null });
    }
    for (const v of versions(API.AlterClientQuotas)) {
      const res = await call(API.AlterClientQuotas, v, { entries: [{ entity, ops: [{ key: 'producer_byte_rate', value: 1000, remove: false }] }], validateOnly: false });
      expect(res.entries).toEqual([{ errorCode: CAF, errorMessage: 'Cluster authorization failed.', entity }]);
    }
    expect(broker.server.metadata.clientQuotas()).toEqual([]);
    authz.allow(ALTER_CONFIGS, CLUSTER, CLUSTER_NAME).allow(DESCRIBE_CONFIGS, CLUSTER, CLUSTER_NAME);
    const ok = await call(API.AlterClientQuotas, 1, { entries: [{ entity, ops: [{ key: 'producer_byte_rate', value: 1000, remove: false }] }], validateOnly: true });
    expect(ok.entries[0].errorCode).toBe(NONE);
    expect((await call(API.DescribeClientQuotas, 1, { components: [], strict: false })).errorCode).toBe(NONE);
  });

  test('client telemetry: ListClientMetricsResources DESCRIBE_CONFIGS on the cluster; CLIENT_METRICS configs ALTER/DESCRIBE_CONFIGS on the cluster; Get/PushTelemetry nothing', async () => {
    const sub = { resourceType: 16, resourceName: 'authz-sub' };
    for (const v of versions(API.IncrementalAlterConfigs)) {
      const res = await call(API.IncrementalAlterConfigs, v, { resources: [{ ...sub, configs: [{ name: 'metrics', configOperation: 0, value: '*' }] }], validateOnly: false });
      expect(res.responses.map((r: any) => [r.resourceName, r.errorCode, r.errorMessage])).toEqual([['authz-sub', CAF, 'Cluster authorization failed.']]);
    }
    for (const v of versions(API.AlterConfigs)) {
      const res = await call(API.AlterConfigs, v, { resources: [{ ...sub, configs: [{ name: 'metrics', value: '*' }] }], validateOnly: false });
      expect(res.responses[0]).toMatchObject({ errorCode: CAF });
    }
    expect(broker.server.metadata.clientMetricsConfigs().size).toBe(0);
    for (const v of versions(API.DescribeConfigs)) {
      const res = await call(API.DescribeConfigs, v, { resources: [{ ...sub, configurationKeys: null }], includeSynonyms: false });
      expect(res.results[0]).toMatchObject({ errorCode: CAF, configs: [] });
    }
    for (const v of versions(API.ListClientMetricsResources)) {
      expect(await call(API.ListClientMetricsResources, v, {})).toMatchObject({ errorCode: CAF, clientMetricsResources: [] });
    }
    expect(authz.asked.every((a) => a.resourceType === CLUSTER)).toBe(true);
    authz.reset();
    for (const v of versions(API.GetTelemetrySubscriptions)) {
      expect((await call(API.GetTelemetrySubscriptions, v, { clientInstanceId: ZERO_UUID })).errorCode).toBe(NONE);
    }
    for (const v of versions(API.PushTelemetry)) {
      // Allowed, and refused only for what it says: a client instance id never handed out.
      const res = await call(API.PushTelemetry, v, { clientInstanceId: 'AAAAAAAAAAAAAAAAAAAAAg', subscriptionId: 1, terminating: false, compressionType: 0, metrics: Buffer.alloc(0) });
      expect(res.errorCode).toBe(ErrorCode.UNKNOWN_SUBSCRIPTION_ID);
    }
    expect(authz.asked).toEqual([]);
    authz.allow(ALTER_CONFIGS, CLUSTER, CLUSTER_NAME).allow(DESCRIBE_CONFIGS, CLUSTER, CLUSTER_NAME);
    expect((await call(API.IncrementalAlterConfigs, 1, { resources: [{ ...sub, configs: [{ name: 'metrics', configOperation: 0, value: '*' }] }], validateOnly: false })).responses[0].errorCode).toBe(NONE);
    expect(await call(API.ListClientMetricsResources, 0, {})).toMatchObject({ errorCode: NONE, clientMetricsResources: [{ name: 'authz-sub' }] });
    const described = await call(API.DescribeConfigs, 4, { resources: [{ ...sub, configurationKeys: null }] });
    expect(described.results[0].configs.map((c: any) => [c.name, c.value])).toEqual([['metrics', '*']]);
  });

  test('ApiVersions needs nothing', async () => {
    for (const v of versions(API.ApiVersions)) {
      const res = await call(API.ApiVersions, v, { clientSoftwareName: 'krill-test', clientSoftwareVersion: '1.0' });
      expect(res.errorCode).toBe(NONE);
    }
    expect(authz.asked).toEqual([]);
  });
});

describe('groups', () => {
  const protocols = [{ name: 'range', metadata: subscription('open') }];

  test('FindCoordinator: DESCRIBE on the group or the transactional id', async () => {
    authz.allow(DESCRIBE, GROUP, 'g-ok').allow(DESCRIBE, TRANSACTIONAL_ID, 't-ok');
    for (const v of versions(API.FindCoordinator)) {
      if (v < 4) {
        const denied = await call(API.FindCoordinator, v, { key: 'g-no', keyType: 0 });
        expect(denied).toMatchObject({ errorCode: GAF, nodeId: -1, host: '', port: -1 });
        if (v >= 1) expect(denied.errorMessage).toBe('Group authorization failed.');
        expect((await call(API.FindCoordinator, v, { key: 'g-ok', keyType: 0 })).errorCode).toBe(NONE);
        if (v >= 1) {
          const t = await call(API.FindCoordinator, v, { key: 't-no', keyType: 1 });
          expect(t).toMatchObject({ errorCode: TIAF, errorMessage: 'Transactional Id authorization failed.', nodeId: -1 });
          expect((await call(API.FindCoordinator, v, { key: 't-ok', keyType: 1 })).errorCode).toBe(NONE);
        }
      } else {
        const g = await call(API.FindCoordinator, v, { keyType: 0, coordinatorKeys: ['g-ok', 'g-no'] });
        expect(g.coordinators.map((c: any) => [c.key, c.errorCode, c.errorMessage, c.nodeId, c.host, c.port])).toEqual([
          ['g-ok', NONE, null, broker.nodeId, broker.host, broker.port],
          ['g-no', GAF, null, -1, '', -1],
        ]);
        const t = await call(API.FindCoordinator, v, { keyType: 1, coordinatorKeys: ['t-no', 't-ok'] });
        expect(t.coordinators.map((c: any) => [c.key, c.errorCode])).toEqual([
          ['t-no', TIAF],
          ['t-ok', NONE],
        ]);
      }
    }
    // A share key (v6) needs CLUSTER_ACTION first.
    const share = await call(API.FindCoordinator, 6, { keyType: 2, coordinatorKeys: ['s1', 's2'] });
    expect(share.coordinators.map((c: any) => [c.key, c.errorCode, c.errorMessage])).toEqual([
      ['s1', CAF, 'Cluster authorization failed.'],
      ['s2', CAF, 'Cluster authorization failed.'],
    ]);
    authz.allow(CLUSTER_ACTION, CLUSTER, CLUSTER_NAME);
    expect((await call(API.FindCoordinator, 6, { keyType: 2, coordinatorKeys: ['s1'] })).coordinators[0].errorCode).toBe(ErrorCode.INVALID_REQUEST);
  });

  test('JoinGroup, SyncGroup, Heartbeat, LeaveGroup: READ on the group', async () => {
    for (const v of versions(API.JoinGroup)) {
      const join = await call(API.JoinGroup, v, { groupId: 'g-member', sessionTimeoutMs: 10_000, rebalanceTimeoutMs: 10_000, memberId: '', protocolType: 'consumer', protocols });
      expect(join).toMatchObject({ errorCode: GAF, generationId: -1, leader: '', memberId: '', members: [] });
      expect(join.protocolName).toBe(v >= 7 ? null : '');
    }
    for (const v of versions(API.SyncGroup)) {
      const sync = await call(API.SyncGroup, v, { groupId: 'g-member', generationId: 1, memberId: 'm', protocolType: 'consumer', protocolName: 'range', assignments: [] });
      expect(sync.errorCode).toBe(GAF);
      expect(Buffer.from(sync.assignment)).toEqual(Buffer.alloc(0));
    }
    for (const v of versions(API.Heartbeat)) {
      expect((await call(API.Heartbeat, v, { groupId: 'g-member', generationId: 1, memberId: 'm' })).errorCode).toBe(GAF);
    }
    for (const v of versions(API.LeaveGroup)) {
      const leave = await call(API.LeaveGroup, v, v >= 3 ? { groupId: 'g-member', members: [{ memberId: 'm' }] } : { groupId: 'g-member', memberId: 'm' });
      expect(leave.errorCode).toBe(GAF);
      if (v >= 3) expect(leave.members).toEqual([]);
    }
    // Nothing was created by the refused requests.
    authz.allowEverything();
    const d = await call(API.DescribeGroups, 5, { groups: ['g-member'] });
    expect(d.groups[0].groupState).toBe('Dead');
    // With READ on the group, a member joins and syncs.
    authz.reset().allow(READ, GROUP, 'g-member');
    const first = await call(API.JoinGroup, 5, { groupId: 'g-member', sessionTimeoutMs: 10_000, rebalanceTimeoutMs: 10_000, memberId: '', protocolType: 'consumer', protocols });
    expect(first.errorCode).toBe(ErrorCode.MEMBER_ID_REQUIRED);
    const join = await call(API.JoinGroup, 5, { groupId: 'g-member', sessionTimeoutMs: 10_000, rebalanceTimeoutMs: 10_000, memberId: first.memberId, protocolType: 'consumer', protocols });
    expect(join.errorCode).toBe(NONE);
    const sync = await call(API.SyncGroup, 5, { groupId: 'g-member', generationId: join.generationId, memberId: join.memberId, protocolType: 'consumer', protocolName: 'range', assignments: [{ memberId: join.memberId, assignment: Buffer.from('a') }] });
    expect(sync.errorCode).toBe(NONE);
    expect((await call(API.Heartbeat, 4, { groupId: 'g-member', generationId: join.generationId, memberId: join.memberId })).errorCode).toBe(NONE);
    expect((await call(API.LeaveGroup, 5, { groupId: 'g-member', members: [{ memberId: join.memberId }] })).members[0].errorCode).toBe(NONE);
  });

  test('OffsetCommit: READ on the group, then READ on each topic', async () => {
    for (const v of versions(API.OffsetCommit)) {
      const body = {
        groupId: 'g-commit',
        generationIdOrMemberEpoch: -1,
        memberId: '',
        retentionTimeMs: -1n,
        topics: [
          { name: 'open', partitions: [{ partitionIndex: 0, committedOffset: 1n, committedMetadata: '' }] },
          { name: 'secret', partitions: [{ partitionIndex: 0, committedOffset: 1n, committedMetadata: '' }, { partitionIndex: 9, committedOffset: 1n, committedMetadata: '' }] },
        ],
      };
      authz.reset().allow(READ, TOPIC, 'open');
      const noGroup = await call(API.OffsetCommit, v, body);
      expect(partitionCodes(noGroup.topics, (t) => t.partitions, (p) => p.partitionIndex)).toEqual([
        ['open', 0, GAF],
        ['secret', 0, GAF],
        ['secret', 9, GAF],
      ]);
      authz.allow(READ, GROUP, 'g-commit');
      const res = await call(API.OffsetCommit, v, body);
      expect(partitionCodes(res.topics, (t) => t.partitions, (p) => p.partitionIndex)).toEqual([
        ['open', 0, NONE],
        ['secret', 0, TAF],
        ['secret', 9, TAF],
      ]);
    }
  });

  test('OffsetFetch: DESCRIBE on the group, then on each topic; all-topics answers leave undescribable topics out', async () => {
    const asked = [
      { name: 'secret', partitionIndexes: [0] },
      { name: 'open', partitionIndexes: [0] },
    ];
    for (const v of versions(API.OffsetFetch)) {
      authz.reset().allow(DESCRIBE, TOPIC, 'open');
      const body = (topics: typeof asked | null) => (v >= 8 ? { groups: [{ groupId: 'g-offsets', topics }], requireStable: false } : { groupId: 'g-offsets', topics, requireStable: false });
      const groupOf = (res: any) => (v >= 8 ? res.groups[0] : res);
      // No DESCRIBE on the group: v0-1 on every partition asked, v2-7 top level, v8+ per group.
      const denied = groupOf(await call(API.OffsetFetch, v, body(asked)));
      if (v < 2) {
        expect(partitionCodes(denied.topics, (t) => t.partitions, (p) => p.partitionIndex)).toEqual([
          ['secret', 0, GAF],
          ['open', 0, GAF],
        ]);
      } else {
        expect([denied.errorCode, denied.topics]).toEqual([GAF, []]);
      }
      authz.allow(DESCRIBE, GROUP, 'g-offsets');
      const res = groupOf(await call(API.OffsetFetch, v, body(asked)));
      expect(res.topics.map((t: any) => [t.name, t.partitions[0].committedOffset, t.partitions[0].errorCode])).toEqual([
        ['open', 1n, NONE],
        ['secret', -1n, TAF],
      ]);
      if (v >= 2) {
        const all = groupOf(await call(API.OffsetFetch, v, body(null)));
        expect(all.topics.map((t: any) => t.name)).toEqual(['open']);
      }
    }
  });

  test('DescribeGroups: DESCRIBE on each group, unauthorized ones first; authorized operations', async () => {
    authz.allow(DESCRIBE, GROUP, 'g-offsets').allow(READ, GROUP, 'g-offsets').allow(DELETE, GROUP, 'g-offsets');
    for (const v of versions(API.DescribeGroups)) {
      const res = await call(API.DescribeGroups, v, { groups: ['g-offsets', 'g-hidden'], includeAuthorizedOperations: v >= 3 });
      expect(res.groups.map((g: any) => [g.groupId, g.errorCode, g.groupState, g.protocolType, g.protocolData])).toEqual([
        ['g-hidden', GAF, '', '', ''],
        ['g-offsets', NONE, 'Empty', '', ''],
      ]);
      if (v >= 3) {
        expect(res.groups.map((g: any) => g.authorizedOperations)).toEqual([AUTHORIZED_OPERATIONS_OMITTED, to32BitField([READ, DESCRIBE, DELETE])]);
      }
    }
  });

  test('ListGroups: DESCRIBE on the cluster lists everything, else only describable groups', async () => {
    authz.allow(DESCRIBE, GROUP, 'g-offsets');
    for (const v of versions(API.ListGroups)) {
      const res = await call(API.ListGroups, v, { statesFilter: [], typesFilter: [] });
      expect(res.errorCode).toBe(NONE);
      expect(res.groups.map((g: any) => g.groupId)).toEqual(['g-offsets']);
    }
    expect(authz.asked.every((a) => a.logIfDenied === false)).toBe(true);
    authz.allow(DESCRIBE, CLUSTER, CLUSTER_NAME);
    const all = await call(API.ListGroups, 5, { statesFilter: [], typesFilter: [] });
    expect(all.groups.map((g: any) => g.groupId)).toEqual(expect.arrayContaining(['g-offsets', 'g-commit']));
  });

  test('DeleteGroups: DELETE on each group; OffsetDelete: DELETE on the group and READ on each topic', async () => {
    authz.allowEverything();
    for (const g of ['g-del-a', 'g-del-b']) {
      await call(API.OffsetCommit, 8, { groupId: g, generationIdOrMemberEpoch: -1, topics: [{ name: 'open', partitions: [{ partitionIndex: 0, committedOffset: 1n, committedMetadata: '' }] }] });
    }
    for (const v of versions(API.OffsetDelete)) {
      authz.reset().allow(READ, TOPIC, 'open');
      const body = {
        groupId: 'g-del-a',
        topics: [
          { name: 'open', partitions: [{ partitionIndex: 0 }] },
          { name: 'secret', partitions: [{ partitionIndex: 0 }] },
        ],
      };
      expect(await call(API.OffsetDelete, v, body)).toMatchObject({ errorCode: GAF, topics: [] });
      authz.allow(DELETE, GROUP, 'g-del-a');
      const res = await call(API.OffsetDelete, v, body);
      expect(res.errorCode).toBe(NONE);
      expect(partitionCodes(res.topics, (t) => t.partitions, (p) => p.partitionIndex)).toEqual([
        ['open', 0, NONE],
        ['secret', 0, TAF],
      ]);
    }
    for (const v of versions(API.DeleteGroups)) {
      authz.reset().allow(DELETE, GROUP, 'g-del-b');
      const res = await call(API.DeleteGroups, v, { groupsNames: ['g-offsets', 'g-del-b', 'g-offsets'] });
      expect(res.results.map((r: any) => [r.groupId, r.errorCode])).toEqual([
        ['g-del-b', v === 0 ? NONE : ErrorCode.GROUP_ID_NOT_FOUND],
        ['g-offsets', GAF],
      ]);
    }
  });
});

describe('transactions', () => {
  async function initTxn(id: string): Promise<{ producerId: bigint; producerEpoch: number }> {
    authz.allow(WRITE, TRANSACTIONAL_ID, id);
    const r = await call(API.InitProducerId, 4, { transactionalId: id, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
    expect(r.errorCode).toBe(NONE);
    return { producerId: r.producerId, producerEpoch: r.producerEpoch };
  }

  test('InitProducerId: WRITE on the transactional id; idempotent: IDEMPOTENT_WRITE on the cluster or WRITE on any topic', async () => {
    for (const v of versions(API.InitProducerId)) {
      authz.reset();
      const base = { transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 };
      expect(await call(API.InitProducerId, v, { ...base, transactionalId: 'txn-denied' })).toMatchObject({ errorCode: TIAF, producerId: -1n, producerEpoch: -1 });
      expect(await call(API.InitProducerId, v, { ...base, transactionalId: null })).toMatchObject({ errorCode: CAF, producerId: -1n, producerEpoch: -1 });
      authz.allow(IDEMPOTENT_WRITE, CLUSTER, CLUSTER_NAME);
      expect((await call(API.InitProducerId, v, { ...base, transactionalId: null })).errorCode).toBe(NONE);
      authz.reset().allow(WRITE, TOPIC, 'open');
      expect((await call(API.InitProducerId, v, { ...base, transactionalId: null })).errorCode).toBe(NONE);
    }
    // The cluster check logs only an allowed decision; WRITE on any topic goes to authorizeByResourceType.
    expect(authz.asked.find((a) => a.operation === IDEMPOTENT_WRITE)).toMatchObject({ logIfAllowed: true, logIfDenied: false });
    expect(authz.askedByResourceType).toContainEqual({ operation: WRITE, resourceType: TOPIC });
  });

  test('AddPartitionsToTxn: v0-3 WRITE on the transactional id and each topic (never an internal topic); v4+ CLUSTER_ACTION', async () => {
    const p = await initTxn('apt-auth');
    for (const v of versions(API.AddPartitionsToTxn).filter((x) => x < 4)) {
      authz.reset();
      const body = {
        v3AndBelowTransactionalId: 'apt-auth',
        v3AndBelowProducerId: p.producerId,
        v3AndBelowProducerEpoch: p.producerEpoch,
        v3AndBelowTopics: [
          { name: 'open', partitions: [0] },
          { name: 'secret', partitions: [0] },
          { name: 'nowhere', partitions: [0] },
          { name: '__consumer_offsets', partitions: [0] },
        ],
      };
      const noTxn = await call(API.AddPartitionsToTxn, v, body);
      expect(noTxn.resultsByTopicV3AndBelow.flatMap((t: any) => t.resultsByPartition.map((r: any) => r.partitionErrorCode))).toEqual([TIAF, TIAF, TIAF, TIAF]);
      authz.allow(WRITE, TRANSACTIONAL_ID, 'apt-auth').allow(WRITE, TOPIC, 'open').allow(WRITE, TOPIC, 'nowhere').allow(WRITE, TOPIC, '__consumer_offsets');
      const res = await call(API.AddPartitionsToTxn, v, body);
      expect(partitionCodes(res.resultsByTopicV3AndBelow, (t) => t.resultsByPartition, (r) => r.partitionIndex)).toEqual([
        ['open', 0, ErrorCode.OPERATION_NOT_ATTEMPTED],
        ['secret', 0, TAF],
        ['nowhere', 0, UNKNOWN_TOPIC_OR_PARTITION],
        ['__consumer_offsets', 0, TAF],
      ]);
      // The internal topic was not even asked about.
      expect(authz.asked.filter((a) => a.resourceType === TOPIC).map((a) => a.resourceName)).toEqual(['open', 'secret', 'nowhere']);
    }
    for (const v of versions(API.AddPartitionsToTxn).filter((x) => x >= 4)) {
      authz.reset().allow(WRITE, TRANSACTIONAL_ID, 'apt-auth').allow(WRITE, TOPIC);
      const body = { transactions: [{ transactionalId: 'apt-auth', producerId: p.producerId, producerEpoch: p.producerEpoch, verifyOnly: true, topics: [{ name: 'open', partitions: [0] }] }] };
      expect(await call(API.AddPartitionsToTxn, v, body)).toMatchObject({ errorCode: CAF, resultsByTransaction: [] });
      authz.allow(CLUSTER_ACTION, CLUSTER, CLUSTER_NAME);
      const ok = await call(API.AddPartitionsToTxn, v, body);
      expect(ok.errorCode).toBe(NONE);
      expect(ok.resultsByTransaction[0].topicResults[0].resultsByPartition[0].partitionErrorCode).toBe(ErrorCode.TRANSACTION_ABORTABLE);
    }
  });

  test('AddOffsetsToTxn (WRITE on the id, READ on the group), EndTxn (WRITE), TxnOffsetCommit (WRITE, READ group, READ topics)', async () => {
    const p = await initTxn('txn-offsets');
    for (const v of versions(API.AddOffsetsToTxn)) {
      authz.reset();
      const body = { transactionalId: 'txn-offsets', producerId: p.producerId, producerEpoch: p.producerEpoch, groupId: 'g-txn' };
      expect((await call(API.AddOffsetsToTxn, v, body)).errorCode).toBe(TIAF);
      authz.allow(WRITE, TRANSACTIONAL_ID, 'txn-offsets');
      expect((await call(API.AddOffsetsToTxn, v, body)).errorCode).toBe(GAF);
    }
    authz.allow(READ, GROUP, 'g-txn');
    expect((await call(API.AddOffsetsToTxn, 3, { transactionalId: 'txn-offsets', producerId: p.producerId, producerEpoch: p.producerEpoch, groupId: 'g-txn' })).errorCode).toBe(NONE);
    for (const v of versions(API.TxnOffsetCommit)) {
      const body = {
        transactionalId: 'txn-offsets',
        groupId: 'g-txn',
        producerId: p.producerId,
        producerEpoch: p.producerEpoch,
        generationId: -1,
        memberId: '',
        groupInstanceId: null,
        topics: [
          { name: 'open', partitions: [{ partitionIndex: 0, committedOffset: 1n, committedLeaderEpoch: -1, committedMetadata: '' }] },
          { name: 'secret', partitions: [{ partitionIndex: 0, committedOffset: 1n, committedLeaderEpoch: -1, committedMetadata: '' }] },
        ],
      };
      authz.reset();
      const codes = async () => partitionCodes((await call(API.TxnOffsetCommit, v, body)).topics, (t) => t.partitions, (x) => x.partitionIndex);
      expect(await codes()).toEqual([
        ['open', 0, TIAF],
        ['secret', 0, TIAF],
      ]);
      authz.allow(WRITE, TRANSACTIONAL_ID, 'txn-offsets');
      expect(await codes()).toEqual([
        ['open', 0, GAF],
        ['secret', 0, GAF],
      ]);
      authz.allow(READ, GROUP, 'g-txn').allow(READ, TOPIC, 'open');
      expect(await codes()).toEqual([
        ['open', 0, NONE],
        ['secret', 0, TAF],
      ]);
    }
    for (const v of versions(API.EndTxn)) {
      authz.reset();
      expect((await call(API.EndTxn, v, { transactionalId: 'txn-offsets', producerId: p.producerId, producerEpoch: p.producerEpoch, committed: true })).errorCode).toBe(TIAF);
    }
    authz.allow(WRITE, TRANSACTIONAL_ID, 'txn-offsets');
    expect((await call(API.EndTxn, 3, { transactionalId: 'txn-offsets', producerId: p.producerId, producerEpoch: p.producerEpoch, committed: true })).errorCode).toBe(NONE);
  });

  test('WriteTxnMarkers: ALTER or CLUSTER_ACTION on the cluster', async () => {
    const body = {
      markers: [{ producerId: 999_999n, producerEpoch: 0, transactionResult: false, topics: [{ name: 'open', partitionIndexes: [0, 1, 0] }], coordinatorEpoch: 0 }],
    };
    for (const v of versions(API.WriteTxnMarkers)) {
      authz.reset();
      const res = await call(API.WriteTxnMarkers, v, body);
      expect(res.markers.map((m: any) => [m.producerId, partitionCodes(m.topics, (t) => t.partitions, (p) => p.partitionIndex)])).toEqual([
        [
          999_999n,
          [
            ['open', 0, CAF],
            ['open', 1, CAF],
          ],
        ],
      ]);
    }
    expect(authz.asked.find((a) => a.operation === ALTER)).toMatchObject({ logIfDenied: false });
    for (const op of [ALTER, CLUSTER_ACTION] as const) {
      authz.reset().allow(op, CLUSTER, CLUSTER_NAME);
      const res = await call(API.WriteTxnMarkers, 1, body);
      expect(res.markers[0].topics[0].partitions.map((p: any) => p.errorCode)).toEqual([NONE, NONE]);
    }
  });

  test('DescribeProducers (READ on the topic), DescribeTransactions (DESCRIBE on the id, topics filtered), ListTransactions (filtered)', async () => {
    authz.allow(READ, TOPIC, 'open');
    for (const v of versions(API.DescribeProducers)) {
      const res = await call(API.DescribeProducers, v, { topics: [{ name: 'secret', partitionIndexes: [0, 1] }, { name: 'open', partitionIndexes: [0] }] });
      expect(res.topics.map((t: any) => t.partitions.map((p: any) => [t.name, p.partitionIndex, p.errorCode, p.errorMessage]))).toEqual([
        [
          ['secret', 0, TAF, 'Topic authorization failed.'],
          ['secret', 1, TAF, 'Topic authorization failed.'],
        ],
        [['open', 0, NONE, null]],
      ]);
    }
    // An open transaction on open-1 and secret-1.
    authz.allowEverything();
    const init = await call(API.InitProducerId, 4, { transactionalId: 'txn-listed', transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
    const add = await call(API.AddPartitionsToTxn, 3, {
      v3AndBelowTransactionalId: 'txn-listed',
      v3AndBelowProducerId: init.producerId,
      v3AndBelowProducerEpoch: init.producerEpoch,
      v3AndBelowTopics: [
        { name: 'open', partitions: [1] },
        { name: 'secret', partitions: [1] },
      ],
    });
    expect(add.resultsByTopicV3AndBelow.map((t: any) => t.resultsByPartition[0].partitionErrorCode)).toEqual([NONE, NONE]);
    authz.reset().allow(DESCRIBE, TRANSACTIONAL_ID, 'txn-listed').allow(DESCRIBE, TOPIC, 'open');
    for (const v of versions(API.DescribeTransactions)) {
      const res = await call(API.DescribeTransactions, v, { transactionalIds: ['txn-listed', 'txn-offsets'] });
      expect(res.transactionStates[0]).toMatchObject({ transactionalId: 'txn-listed', errorCode: NONE, transactionState: 'Ongoing', topics: [{ topic: 'open', partitions: [1] }] });
      expect(res.transactionStates[1]).toEqual({ transactionalId: 'txn-offsets', errorCode: TIAF, transactionState: '', transactionTimeoutMs: 0, transactionStartTimeMs: 0n, producerId: 0n, producerEpoch: 0, topics: [] });
    }
    for (const v of versions(API.ListTransactions)) {
      const res = await call(API.ListTransactions, v, { stateFilters: [], producerIdFilters: [], durationFilter: -1n });
      expect(res.transactionStates.map((t: any) => t.transactionalId)).toEqual(['txn-listed']);
    }
    authz.allow(DESCRIBE, TRANSACTIONAL_ID);
    const all = await call(API.ListTransactions, 1, { stateFilters: [], producerIdFilters: [], durationFilter: -1n });
    expect(all.transactionStates.map((t: any) => t.transactionalId)).toEqual(expect.arrayContaining(['txn-listed', 'txn-offsets', 'apt-auth']));
    authz.allowEverything();
    expect((await call(API.EndTxn, 3, { transactionalId: 'txn-listed', producerId: init.producerId, producerEpoch: init.producerEpoch, committed: false })).errorCode).toBe(NONE);
  });
});
