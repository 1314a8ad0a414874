/**
 * KAFKA-19996: ISR expansion and shrink must agree, or a slow follower flaps in and out of the ISR
 * while the partition is under min ISR. Reproduced on a 3-broker in-process cluster, counting the
 * AlterPartition requests the controller receives:
 * - min.insync.replicas=2, replication factor 3; one follower stopped; the other slowed (each of
 *   its fetches waits, one batch per fetch) while the leader takes acks=1 writes quickly;
 * - the slow follower is shrunk out (the partition is now under min ISR, the HWM frozen); it keeps
 *   fetching, at or above the HWM but far behind the LEO. Over many lag periods it must not be
 *   added back (no expand followed by a shrink of the same replica);
 * - once it truly catches up it is added once, and the HWM advances.
 * Also: AlterPartition with a stale partition epoch, leader epoch or broker epoch is rejected at
 * every version and changes nothing.
 */
import { Kafka, logLevel, type Producer } from 'kafkajs';
import type { RunningCluster } from '../../broker/cluster';
import type { AlterPartitionRequest } from '../../protocol/generated/alter-partition';
import { ErrorCode } from '../../protocol/errors';
import { connectTo, fastCluster, partitionsOf, waitFor } from '../replication/helpers';

jest.setTimeout(60_000);
// Offsets are compared as numbers: a failed expectation on bigints cannot be reported from a jest
// worker (it fails to serialise the values and hides the real failure).

const LAG_MS = 1000;

describe('KAFKA-19996: no ISR flapping under min ISR', () => {
  let cluster: RunningCluster;
  let producer: Producer | undefined;
  beforeAll(async () => {
    cluster = await fastCluster({
      config: {
        'replica.lag.time.max.ms': String(LAG_MS),
        // One batch per follower fetch, so a delayed follower really falls behind.
        'replica.fetch.max.bytes': '1',
        'replica.fetch.response.max.bytes': '1',
      },
    });
  });
  afterAll(async () => {
    await producer?.disconnect().catch(() => undefined);
    await cluster?.close();
  });

  test('a slow follower at the frozen HWM is never added back while behind; it joins once caught up and the HWM moves', async () => {
    const topic = 'flap';
    const admin = await connectTo(cluster.bootstrapServers[0]);
    try {
        const res = await admin.send('CreateTopics', undefined, {
          topics: [{ name: topic, numPartitions: -1, replicationFactor: -1, assignments: [{ partitionIndex: 0, brokerIds: [0, 1, 2] }], configs: [{ name: 'min.insync.replicas', value: '2' }] }],
          timeoutMs: 5000,
          validateOnly: false,
        });
        expect(res.topics[0].errorCode).toBe(0);
      } finally {
        await admin.close();
      }
      // Every AlterPartition the controller receives, as (kind, replica) against the ISR before it.
      const alterPartitions = cluster.control.controller.record({ api: 'AlterPartition' });
      /** Each partition change asked for, as its new ISR and when the controller received it. */
      const isrChanges = () =>
        alterPartitions.requests.flatMap((r) =>
          (r.body as AlterPartitionRequest).topics.flatMap((t) =>
            t.partitions.map((p) => ({ isr: r.apiVersion >= 3 ? p.newIsrWithEpochs.map((b) => b.brokerId) : p.newIsr, at: r.receivedAtMs })),
          ),
        );
      // What the leader saw when it proposed each change.
      const proposals: { kind: string; isr: number[]; followerLeo: bigint; leaderLeo: bigint; hw: bigint }[] = [];
      cluster.broker(0).server.isrChangeListeners.push((t, part, kind, isr) => {
        if (t !== topic) return;
        const p = cluster.broker(0).server.replicaManager.getPartition(t, part)!;
        proposals.push({ kind, isr, followerLeo: p.replica(1)!.logEndOffset, leaderLeo: p.log.logEndOffset, hw: p.log.highWatermark });
      });

      producer = new Kafka({ clientId: 'kafka-19996', brokers: cluster.bootstrapServers, logLevel: logLevel.NOTHING, retry: { retries: 5, initialRetryTime: 50 } }).producer({ allowAutoTopicCreation: false });
      await producer.connect();
      await producer.send({ topic, acks: -1, messages: [{ value: 'start' }] });
      const leaderPartition = () => cluster.broker(0).server.replicaManager.getPartition(topic, 0)!;

      // One follower gone (controlled shutdown: the controller takes it out; not an AlterPartition).
    await cluster.stopBroker(2);
    expect(leaderPartition().isr).toEqual([0, 1]);
    // The other one slowed down (two batches a second) while the leader takes fast acks=1 writes:
    // the writer must outpace it even on a loaded machine, or the premise (a follower far behind)
    // would not hold.
    cluster.slowReplication(1, 500);
    let writing = true;
    let written = 0;
    const writer = (async () => {
      while (writing) {
        await producer!.send({ topic, acks: 1, messages: [{ value: `w${written++}` }] });
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    let frozenHw: bigint;
    try {
      await waitFor('the slow follower to be shrunk out', () => leaderPartition().isr.length === 1, 10_000);
      expect(leaderPartition().isUnderMinIsr).toBe(true);
      frozenHw = leaderPartition().log.highWatermark;
      const shrunkAt = Date.now();
      // Several lag periods of a follower at or above the frozen HWM, far behind the LEO.
      await new Promise((r) => setTimeout(r, 5 * LAG_MS));
      const p = leaderPartition();
      const follower = p.replica(1)!;
      expect(Number(follower.logEndOffset)).toBeGreaterThanOrEqual(Number(frozenHw));
      expect(Number(p.log.logEndOffset - follower.logEndOffset)).toBeGreaterThan(10);
      expect(Number(p.log.highWatermark)).toBe(Number(frozenHw));
      expect(p.isr).toEqual([0]);
      expect(isrChanges().filter((r) => r.at >= shrunkAt)).toEqual([]); // no expand (and so no shrink) while it is behind
    } finally {
      // Catch up: no more writes, no more delay.
      writing = false;
      await writer.catch(() => undefined);
      cluster.slowReplication(1, 0);
    }
    await waitFor('the follower back in the ISR', () => leaderPartition().isr.length === 2, 15_000);
    await waitFor('the HWM at the LEO', () => leaderPartition().log.highWatermark === leaderPartition().log.logEndOffset, 5000);
    expect(Number(leaderPartition().log.highWatermark)).toBeGreaterThan(Number(frozenHw));

    // The whole history: one shrink of broker 1, then one expand, proposed when it had caught up.
    expect(isrChanges().map((r) => r.isr)).toEqual([[0], [0, 1]]);
    expect(proposals.map((x) => [x.kind, x.isr])).toEqual([
      ['shrink', [0]],
      ['expand', [0, 1]],
    ]);
    expect(Number(proposals[1].followerLeo)).toBe(Number(proposals[1].leaderLeo));
    expect((await partitionsOf(cluster.bootstrapServers[0], topic))[0].isr).toEqual([0, 1]);
    await cluster.startBroker(2);
  });

  test('AlterPartition with a stale partition epoch, leader epoch or broker epoch is rejected at every version and changes nothing', async () => {
    const topic = 'stale';
    const admin = await connectTo(cluster.bootstrapServers[0]);
    try {
      await admin.send('CreateTopics', undefined, {
        topics: [{ name: topic, numPartitions: -1, replicationFactor: -1, assignments: [{ partitionIndex: 0, brokerIds: [0, 1, 2] }], configs: [] }],
        timeoutMs: 5000,
        validateOnly: false,
      });
    } finally {
      await admin.close();
    }
    // Give the partition a leader epoch and partition epoch above 0: move leadership away and back.
    await cluster.stopBroker(0);
    await cluster.startBroker(0);
    const image = cluster.controller.controller.image;
    await waitFor('a settled ISR', () => image.partition(topic, 0)!.isr.length === 3, 10_000);
    const state = image.partition(topic, 0)!;
    expect(state.leaderEpoch).toBeGreaterThan(0);
    expect(state.partitionEpoch).toBeGreaterThan(0);
    const leader = state.leader;
    const brokerEpoch = cluster.broker(leader).server.clusterLink!.brokerEpoch;
    const before = cluster.controller.controller.lastCommittedOffset;

    const conn = await connectTo(cluster.controllerAddress);
    try {
      for (let v = 0; v <= 3; v++) {
        const send = (o: { leaderEpoch?: number; partitionEpoch?: number; brokerEpoch?: bigint }) =>
          conn.send('AlterPartition', v, {
            brokerId: leader,
            brokerEpoch: o.brokerEpoch ?? brokerEpoch,
            topics: [
              {
                topicName: v < 2 ? topic : undefined,
                topicId: v >= 2 ? state.topicId : undefined,
                partitions: [
                  {
                    partitionIndex: 0,
                    leaderEpoch: o.leaderEpoch ?? state.leaderEpoch,
                    partitionEpoch: o.partitionEpoch ?? state.partitionEpoch,
                    newIsr: v < 3 ? [leader] : undefined,
                    newIsrWithEpochs: v >= 3 ? [{ brokerId: leader, brokerEpoch }] : undefined,
                  },
                ],
              },
            ],
          });
        const stalePartitionEpoch = await send({ partitionEpoch: state.partitionEpoch - 1 });
        expect(stalePartitionEpoch.topics[0].partitions[0].errorCode).toBe(ErrorCode.INVALID_UPDATE_VERSION);
        const staleLeaderEpoch = await send({ leaderEpoch: state.leaderEpoch - 1 });
        expect(staleLeaderEpoch.topics[0].partitions[0].errorCode).toBe(ErrorCode.FENCED_LEADER_EPOCH);
        const staleBroker = await send({ brokerEpoch: brokerEpoch - 1n });
        expect(staleBroker.errorCode).toBe(ErrorCode.STALE_BROKER_EPOCH);
      }
    } finally {
      await conn.close();
    }
    expect(Number(cluster.controller.controller.lastCommittedOffset)).toBe(Number(before));
    expect(image.partition(topic, 0)).toEqual(state);
  });
});
