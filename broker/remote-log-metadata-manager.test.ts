/**
 * TopicBasedRemoteLogMetadataManager against a real 2-broker krill cluster: `__remote_log_metadata`
 * created through the controller with Kafka's settings, events published from either broker to
 * whichever broker leads the metadata partition and read back by both, refused events, a second
 * user partition on an already-read metadata partition, a partition count that does not match,
 * brokers restarted one after the other with fresh managers that reload the state from the topic,
 * and a metadata partition's leader stopping under a manager that keeps publishing to it.
 * (It needs whole brokers, so it lives in broker/.)
 */
import { startCluster, type RunningCluster } from './cluster';
import {
  REMOTE_LOG_METADATA_TOPIC,
  rlmmConfigsOf,
  TopicBasedRemoteLogMetadataManager,
} from '../coordinator/remote-log-metadata/topic-based-remote-log-metadata-manager';
import { InvalidRemoteLogMetadataError } from '../storage/remote/remote-log-metadata-cache';
import { RemoteLogMetadataTopicPartitioner } from '../storage/remote/remote-log-metadata-topic-partitioner';
import {
  RemoteLogSegmentState as S,
  RemotePartitionDeleteState as P,
  type RemoteLogSegmentMetadata,
  type TopicIdPartition,
} from '../storage/remote/remote-log-segment-metadata';
import { RemoteResourceNotFoundError, RemoteStorageError } from '../storage/remote/remote-storage-manager';
import { CapturingLogger } from '../common/testing/mock-time';

jest.setTimeout(90_000);

const METADATA_PARTITIONS = 5;
let cluster: RunningCluster;
const managers: TopicBasedRemoteLogMetadataManager[] = [];
/** What each manager logged (refused events are logged errors). */
const logs = new Map<TopicBasedRemoteLogMetadataManager, CapturingLogger>();

/** A manager on the broker, configured: its initialization has started, not finished (nothing is awaited here). */
function managerOn(nodeId: number, extra: Record<string, string> = {}): TopicBasedRemoteLogMetadataManager {
  const server = cluster.broker(nodeId).server;
  const logger = new CapturingLogger();
  const m = new TopicBasedRemoteLogMetadataManager({
    nodeId,
    metadata: server.metadata,
    controller: server.controller,
    listenerName: server.config.interBrokerListenerName(),
    logger,
    requestTimeoutMs: 10_000,
    fetchMaxWaitMs: 200,
  });
  managers.push(m);
  logs.set(m, logger);
  m.configure({ ...rlmmConfigsOf(server.config.originals(), nodeId, server.clusterId), ...extra });
  return m;
}

/** Polls a condition (another broker's consumer has no event to await from here); bounded. */
async function eventually<T>(what: string, check: () => Promise<T | undefined | null | false>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function userPartitions(): TopicIdPartition[] {
  const t = cluster.broker(0).server.metadata.topic('tiered')!;
  return [...t.partitions.keys()].sort((a, b) => a - b).map((partition) => ({ topicId: t.topicId, topic: 'tiered', partition }));
}

let nextSegment = 1;
function segment(tp: TopicIdPartition, start: bigint, end: bigint, epochs: Record<number, bigint>, size: number): RemoteLogSegmentMetadata {
  const id = Buffer.alloc(16, 0x11);
  id.writeUInt32BE(nextSegment++, 12);
  return {
    remoteLogSegmentId: { topicIdPartition: tp, id: id.toString('base64url') },
    startOffset: start,
    endOffset: end,
    brokerId: 0,
    maxTimestampMs: 1000n,
    eventTimestampMs: 1n,
    segmentLeaderEpochs: Object.entries(epochs).map(([e, o]) => ({ epoch: Number(e), startOffset: o })),
    segmentSizeInBytes: size,
    customMetadata: null,
    state: S.COPY_SEGMENT_STARTED,
  };
}

const finished = (m: RemoteLogSegmentMetadata, brokerId = 0) => ({ remoteLogSegmentId: m.remoteLogSegmentId, eventTimestampMs: 2n, customMetadata: Buffer.from('rsm'), state: S.COPY_SEGMENT_FINISHED, brokerId });
const states = (ms: readonly RemoteLogSegmentMetadata[]) => ms.map((m) => [m.startOffset, S[m.state]]);

beforeAll(async () => {
  cluster = await startCluster({
    brokers: 2,
    logLevel: 'error',
    config: {
      'broker.heartbeat.interval.ms': '100',
      'broker.session.timeout.ms': '2000',
      'replica.fetch.wait.max.ms': '100',
      'replica.fetch.backoff.ms': '50',
      'auto.leader.rebalance.enable': 'false',
      'log.initial.task.delay.ms': '0',
      [`rlmm.config.remote.log.metadata.topic.num.partitions`]: String(METADATA_PARTITIONS),
    },
    topics: ['tiered:6:2'],
  });
});

afterAll(async () => {
  for (const m of managers) await m.close();
  await cluster?.close();
});

test('the first manager creates __remote_log_metadata with Kafka\'s settings, the replication factor capped by the live brokers', async () => {
  const m0 = managerOn(0);
  const m1 = managerOn(1);
  await Promise.all([m0.whenInitialized(), m1.whenInitialized()]);
  const md = cluster.broker(1).server.metadata;
  const topic = md.topic(REMOTE_LOG_METADATA_TOPIC)!;
  expect(topic.partitions.size).toBe(METADATA_PARTITIONS);
  expect([...topic.partitions.values()].map((p) => p.replicas.length)).toEqual(Array(METADATA_PARTITIONS).fill(2));
  const configs = md.topicConfig(REMOTE_LOG_METADATA_TOPIC);
  expect([configs.get('retention.ms'), configs.get('cleanup.policy'), configs.get('remote.storage.enable')]).toEqual(['-1', 'delete', 'false']);
  // Both brokers lead some metadata partitions, so publishing crosses brokers.
  expect(new Set([...topic.partitions.values()].map((p) => p.leader))).toEqual(new Set([0, 1]));
});

test('a manager configured with another partition count than the topic has fails to initialize', async () => {
  const m = managerOn(0, { 'remote.log.metadata.topic.num.partitions': '7' });
  await expect(m.whenInitialized()).rejects.toThrow(`${REMOTE_LOG_METADATA_TOPIC} has 5 partitions, not the configured 7`);
  await expect(m.listRemoteLogSegments(userPartitions()[0])).rejects.toThrow(/has 5 partitions/);
});

test('events published on one broker are applied there before the publish resolves and read back by the other broker', async () => {
  const [m0, m1] = managers;
  const [tp] = userPartitions();
  const other = userPartitions()[1];
  // Not assigned yet: lookups do not answer empty, publishing is refused.
  expect(m0.isReady(tp)).toBe(false);
  await expect(m0.listRemoteLogSegments(tp)).rejects.toThrow(RemoteResourceNotFoundError);
  await expect(m0.addRemoteLogSegmentMetadata(segment(tp, 0n, 99n, { 0: 0n }, 1))).rejects.toThrow(/not led or followed by this broker/);

  m0.onPartitionLeadershipChanges([tp], []);
  m1.onPartitionLeadershipChanges([], [tp]);
  await Promise.all([m0.awaitReady(tp, 10_000), m1.awaitReady(tp, 10_000)]);
  expect(await m0.listRemoteLogSegments(tp)).toEqual([]);

  const a = segment(tp, 0n, 99n, { 0: 0n }, 1000);
  const b = segment(tp, 100n, 249n, { 0: 100n, 1: 200n }, 2000);
  await m0.addRemoteLogSegmentMetadata(a);
  expect(states(await m0.listRemoteLogSegments(tp))).toEqual([[0n, 'COPY_SEGMENT_STARTED']]);
  await m0.updateRemoteLogSegmentMetadata(finished(a));
  await m0.addRemoteLogSegmentMetadata(b);
  // The follower's manager publishes too, to a metadata partition whichever broker leads.
  await eventually('broker 1 to read segment b', async () => (await m1.listRemoteLogSegments(tp)).length === 2);
  await m1.updateRemoteLogSegmentMetadata(finished(b, 1));
  expect((await m1.remoteLogSegmentMetadata(tp, 1, 220n))?.remoteLogSegmentId.id).toBe(b.remoteLogSegmentId.id);

  await eventually('broker 0 to read b finished', async () => (await m0.remoteLogSegmentMetadata(tp, 1, 220n))?.state === S.COPY_SEGMENT_FINISHED);
  for (const m of [m0, m1]) {
    expect(states(await m.listRemoteLogSegments(tp))).toEqual([[0n, 'COPY_SEGMENT_FINISHED'], [100n, 'COPY_SEGMENT_FINISHED']]);
    expect((await m.remoteLogSegmentMetadata(tp, 0, 150n))?.remoteLogSegmentId.id).toBe(b.remoteLogSegmentId.id);
    expect(await m.remoteLogSegmentMetadata(tp, 0, 200n)).toBeNull(); // epoch 1 starts at 200
    expect([await m.highestOffsetForEpoch(tp, 0), await m.highestOffsetForEpoch(tp, 1)]).toEqual([199n, 249n]);
    expect([await m.remoteLogSize(tp, 0), await m.remoteLogSize(tp, 1)]).toEqual([3000n, 2000n]);
    expect((await m.listRemoteLogSegmentsForEpoch(tp, 1)).map((x) => x.remoteLogSegmentId.id)).toEqual([b.remoteLogSegmentId.id]);
    expect((await m.remoteLogSegmentMetadata(tp, 0, 5n))?.customMetadata?.toString()).toBe('rsm');
  }
  // Another user partition of the topic was never assigned on either broker.
  await expect(m1.remoteLogSegmentMetadata(other, 0, 0n)).rejects.toThrow(RemoteResourceNotFoundError);
});

test('refused events are rejected before anything is produced', async () => {
  const [m0] = managers;
  const [tp] = userPartitions();
  const [a] = await m0.listRemoteLogSegments(tp);
  const partition = m0.metadataPartition(tp);
  const before = m0.readOffsetForPartition(partition);
  await expect(m0.updateRemoteLogSegmentMetadata({ ...finished(a), state: S.DELETE_SEGMENT_FINISHED })).rejects.toThrow(InvalidRemoteLogMetadataError);
  await expect(m0.updateRemoteLogSegmentMetadata({ ...finished(a), state: S.COPY_SEGMENT_STARTED })).rejects.toThrow(InvalidRemoteLogMetadataError);
  await expect(m0.addRemoteLogSegmentMetadata({ ...a, state: S.COPY_SEGMENT_STARTED })).rejects.toThrow(/COPY_SEGMENT_FINISHED -> COPY_SEGMENT_STARTED/);
  await expect(m0.addRemoteLogSegmentMetadata({ ...a, state: S.COPY_SEGMENT_FINISHED })).rejects.toThrow(/added in COPY_SEGMENT_STARTED/);
  await expect(m0.updateRemoteLogSegmentMetadata({ ...finished(a), remoteLogSegmentId: { ...a.remoteLogSegmentId, id: 'AAAAAAAAAAAAAAAAAAAA_w' } })).rejects.toThrow(/no remote log segment metadata/);
  await expect(m0.putRemotePartitionDeleteMetadata({ topicIdPartition: tp, state: P.DELETE_PARTITION_FINISHED, eventTimestampMs: 1n, brokerId: 0 })).rejects.toThrow(InvalidRemoteLogMetadataError);
  expect(m0.readOffsetForPartition(partition)).toBe(before);
  expect(states(await m0.listRemoteLogSegments(tp))).toEqual([[0n, 'COPY_SEGMENT_FINISHED'], [100n, 'COPY_SEGMENT_FINISHED']]);
});

test('a second user partition on a metadata partition already read gets its events; the first one\'s are not applied twice', async () => {
  const [m0] = managers;
  const [tp, ...rest] = userPartitions();
  const partitioner = new RemoteLogMetadataTopicPartitioner(METADATA_PARTITIONS);
  // Six user partitions over five metadata partitions: two of them share one.
  const all = [tp, ...rest];
  const byMeta = new Map<number, TopicIdPartition[]>();
  for (const u of all) byMeta.set(partitioner.metadataPartition(u), [...(byMeta.get(partitioner.metadataPartition(u)) ?? []), u]);
  // If the shared one is the partition already assigned, it is `first` (its metadata partition is then being read already).
  const [first, second] = [...byMeta.values()].find((l) => l.length >= 2)!.sort((x, y) => (x === tp ? -1 : y === tp ? 1 : 0));
  m0.onPartitionLeadershipChanges([first], []);
  await m0.awaitReady(first, 10_000);
  const s1 = segment(first, 1000n, 1099n, { 3: 1000n }, 10);
  await m0.addRemoteLogSegmentMetadata(s1);
  await m0.updateRemoteLogSegmentMetadata(finished(s1));
  const firstBefore = await m0.listRemoteLogSegments(first);
  expect(states(firstBefore).at(-1)).toEqual([1000n, 'COPY_SEGMENT_FINISHED']);

  // Assigning the second rewinds the shared metadata partition; `first` stays ready and unchanged.
  m0.onPartitionLeadershipChanges([second], []);
  expect([m0.isReady(first), m0.isReady(second)]).toEqual([true, false]);
  await m0.awaitReady(second, 10_000);
  const s2 = segment(second, 0n, 9n, { 0: 0n }, 20);
  await m0.addRemoteLogSegmentMetadata(s2);
  expect(states(await m0.listRemoteLogSegments(second))).toEqual([[0n, 'COPY_SEGMENT_STARTED']]);
  expect(await m0.listRemoteLogSegments(first)).toEqual(firstBefore);
  // Stopping one leaves the other readable.
  m0.onStopPartitions([second]);
  expect(m0.isReady(second)).toBe(false);
  await expect(m0.listRemoteLogSegments(second)).rejects.toThrow(RemoteResourceNotFoundError);
  expect(await m0.listRemoteLogSegments(first)).toEqual(firstBefore);
  // Re-reading the shared partition did not apply `first`'s events again (they would have been refused).
  expect(logs.get(m0)!.matching(/refused/)).toEqual([]);
});

test('after both brokers restart, new managers reload every partition\'s state from the topic', async () => {
  const [m0, m1] = managers;
  const [tp] = userPartitions();
  const [a, b] = await m0.listRemoteLogSegments(tp);
  // Segment a is deleted, the partition is marked for deletion; then the managers and brokers go away.
  await m0.updateRemoteLogSegmentMetadata({ ...finished(a), state: S.DELETE_SEGMENT_STARTED, customMetadata: null });
  await m0.updateRemoteLogSegmentMetadata({ ...finished(a), state: S.DELETE_SEGMENT_FINISHED, customMetadata: null });
  await m0.putRemotePartitionDeleteMetadata({ topicIdPartition: tp, state: P.DELETE_PARTITION_MARKED, eventTimestampMs: 5n, brokerId: 0 });
  const expected = await m0.listRemoteLogSegments(tp);
  expect(expected.map((x) => x.remoteLogSegmentId.id)).toContain(b.remoteLogSegmentId.id);
  expect(expected.map((x) => x.remoteLogSegmentId.id)).not.toContain(a.remoteLogSegmentId.id);
  await eventually('broker 1 to read the delete', async () => (await m1.listRemoteLogSegments(tp)).length === expected.length);
  for (const m of managers.splice(0)) await m.close();
  await expect(m0.listRemoteLogSegments(tp)).rejects.toThrow(RemoteStorageError);

  for (const id of [0, 1]) {
    await cluster.stopBroker(id);
    await cluster.startBroker(id);
  }
  for (const id of [0, 1]) {
    const m = managerOn(id);
    // Assigned while still initializing (configure returned, nothing awaited since): kept pending, loaded once the manager runs.
    expect(m.isInitialized).toBe(false);
    m.onPartitionLeadershipChanges(id === 0 ? [tp] : [], id === 1 ? [tp] : []);
    expect(m.isReady(tp)).toBe(false);
    await expect(m.listRemoteLogSegments(tp)).rejects.toThrow(RemoteStorageError);
    await m.whenInitialized();
    await m.awaitReady(tp, 20_000);
    expect(await m.listRemoteLogSegments(tp)).toEqual(expected);
    expect((await m.remoteLogSegmentMetadata(tp, 1, 249n))?.remoteLogSegmentId.id).toBe(b.remoteLogSegmentId.id);
    expect(await m.remoteLogSegmentMetadata(tp, 0, 50n)).toBeNull();
    expect(await m.remoteLogSize(tp, 0)).toBe(2000n);
  }
  // The reloaded delete state goes on from where it was: MARKED -> STARTED is accepted, MARKED -> FINISHED was not.
  const [n0] = managers;
  await expect(n0.putRemotePartitionDeleteMetadata({ topicIdPartition: tp, state: P.DELETE_PARTITION_FINISHED, eventTimestampMs: 6n, brokerId: 0 })).rejects.toThrow(InvalidRemoteLogMetadataError);
  await n0.putRemotePartitionDeleteMetadata({ topicIdPartition: tp, state: P.DELETE_PARTITION_STARTED, eventTimestampMs: 6n, brokerId: 0 });
  await n0.putRemotePartitionDeleteMetadata({ topicIdPartition: tp, state: P.DELETE_PARTITION_FINISHED, eventTimestampMs: 7n, brokerId: 0 });
  // DELETE_PARTITION_FINISHED drops the partition's metadata.
  await expect(n0.listRemoteLogSegments(tp)).rejects.toThrow(RemoteResourceNotFoundError);
});

test("a metadata partition's leader stops: the publish goes to the new leader and the consumer follows it", async () => {
  // The broker leading metadata partition 0 stops; the manager of the other broker keeps publishing to that partition.
  const leader = cluster.broker(0).server.metadata.partition(REMOTE_LOG_METADATA_TOPIC, 0)!.leader;
  const survivor = 1 - leader;
  const [n0, n1] = managers;
  const [m, gone] = survivor === 0 ? [n0, n1] : [n1, n0];
  await gone.close();
  const md = cluster.broker(survivor).server.metadata;
  // A user partition (of a topic the cluster need not have) whose events live in metadata partition 0.
  const partitioner = new RemoteLogMetadataTopicPartitioner(METADATA_PARTITIONS);
  const topicId = 'ZmFpbG92ZXItdG9waWMtMQ';
  let partition = 0;
  while (partitioner.metadataPartition({ topicId, partition }) !== 0) partition++;
  const tp: TopicIdPartition = { topicId, topic: 'failover', partition };
  m.onPartitionLeadershipChanges([tp], []);
  await m.awaitReady(tp, 10_000);
  const s = segment(tp, 0n, 49n, { 7: 0n }, 500);
  await m.addRemoteLogSegmentMetadata(s);

  await cluster.stopBroker(leader);
  await m.updateRemoteLogSegmentMetadata(finished(s));
  expect(md.partition(REMOTE_LOG_METADATA_TOPIC, 0)!.leader).toBe(survivor);
  expect((await m.remoteLogSegmentMetadata(tp, 7, 49n))?.state).toBe(S.COPY_SEGMENT_FINISHED);
  expect(logs.get(m)!.matching(/refused/)).toEqual([]);
  await cluster.startBroker(leader);
});
