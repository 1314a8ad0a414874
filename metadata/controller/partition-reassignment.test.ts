import { ErrorCode } from '../../protocol/errors';
import { testController } from '../testing/test-controller';
import { completedReassignment } from './partition-change-builder';
import { ongoingReassignments } from './partition-reassignment';

async function controllerWith(brokers: number[], replicas: number[]) {
  const c = testController();
  for (const id of brokers) await c.registerBroker({ brokerId: id, incarnationId: `AAAAAAAAAAAAAAAAAAAAA${id}`, endpoints: [], rack: null, logDirs: [] });
  await c.createTopics([{ name: 't', numPartitions: -1, replicationFactor: -1, assignments: [{ partitionIndex: 0, brokerIds: replicas }], configs: [] }], false);
  const part = () => c.image.partition('t', 0)!;
  const isr = async (newIsr: number[]) => {
    const p = part();
    const r = await c.alterPartition(
      { brokerId: p.leader, brokerEpoch: c.image.broker(p.leader)!.epoch, topics: [{ topicName: 't', topicId: null, partitions: [{ partitionIndex: 0, leaderEpoch: p.leaderEpoch, partitionEpoch: p.partitionEpoch, leaderRecoveryState: 0, newIsrWithEpochs: newIsr.map((brokerId) => ({ brokerId, brokerEpoch: -1n })) }] }] },
      1,
    );
    expect(r.topics[0].partitions[0].errorCode).toBe(ErrorCode.NONE);
  };
  return { c, part, isr };
}

test('completedReassignment: only once every remaining replica is in the ISR, and never to an empty ISR', () => {
  expect(completedReassignment([1, 2, 0], [2], [0], [0, 1])).toBeUndefined();
  expect(completedReassignment([1, 2, 0], [2], [0], [0, 1, 2])).toEqual({ replicas: [1, 2], isr: [1, 2] });
  expect(completedReassignment([1, 0], [], [0], [0])).toBeUndefined();
  expect(completedReassignment([1, 2], [], [], [1, 2])).toBeUndefined();
});

test('a reassignment adds the target replicas first, completes when the leader brings them into the ISR, and moves the leader off a removed replica', async () => {
  const { c, part, isr } = await controllerWith([0, 1, 2], [0, 1]);
  const [res] = await c.alterPartitionReassignments([{ name: 't', partitions: [{ partitionIndex: 0, replicas: [1, 2] }] }]);
  expect(res.partitions).toEqual([{ partitionIndex: 0, errorCode: ErrorCode.NONE, errorMessage: null }]);
  expect(part()).toMatchObject({ replicas: [1, 2, 0], addingReplicas: [2], removingReplicas: [0], isr: [0, 1], leader: 0 });
  expect(ongoingReassignments(c.image, null)).toEqual([{ name: 't', partitions: [{ partitionIndex: 0, replicas: [1, 2, 0], addingReplicas: [2], removingReplicas: [0] }] }]);
  const epoch = part().leaderEpoch;
  await isr([0, 1, 2]);
  expect(part()).toMatchObject({ replicas: [1, 2], addingReplicas: [], removingReplicas: [], isr: [1, 2], leader: 1, leaderEpoch: epoch + 1 });
  expect(ongoingReassignments(c.image, [{ name: 't', partitionIndexes: [0] }])).toEqual([]);
});

test('cancellation reverts to the original replicas; cancelling again is NO_REASSIGNMENT_IN_PROGRESS', async () => {
  const { c, part } = await controllerWith([0, 1, 2, 3], [0, 1]);
  await c.alterPartitionReassignments([{ name: 't', partitions: [{ partitionIndex: 0, replicas: [2, 3] }] }]);
  expect(part()).toMatchObject({ replicas: [2, 3, 0, 1], addingReplicas: [2, 3], removingReplicas: [0, 1] });
  const [cancelled] = await c.alterPartitionReassignments([{ name: 't', partitions: [{ partitionIndex: 0, replicas: null }] }]);
  expect(cancelled.partitions[0].errorCode).toBe(ErrorCode.NONE);
  expect(part()).toMatchObject({ replicas: [0, 1], addingReplicas: [], removingReplicas: [], isr: [0, 1], leader: 0 });
  const [again] = await c.alterPartitionReassignments([{ name: 't', partitions: [{ partitionIndex: 0, replicas: null }] }]);
  expect(again.partitions[0]).toMatchObject({ errorCode: ErrorCode.NO_REASSIGNMENT_IN_PROGRESS, errorMessage: 'No partition reassignment is in progress.' });
});

test('a refused partition writes nothing; the others of the request are still planned', async () => {
  const { c, part } = await controllerWith([0, 1], [0]);
  const before = c.lastCommittedOffset;
  const [bad] = await c.alterPartitionReassignments([{ name: 't', partitions: [{ partitionIndex: 0, replicas: [0, 5] }] }]);
  expect(bad.partitions[0]).toMatchObject({ errorCode: ErrorCode.INVALID_REPLICA_ASSIGNMENT, errorMessage: 'The manual partition assignment includes broker 5, but no such broker is registered.' });
  expect(c.lastCommittedOffset).toBe(before);
  const [mixed] = await c.alterPartitionReassignments([{ name: 't', partitions: [{ partitionIndex: 3, replicas: [0] }, { partitionIndex: 0, replicas: [0, 1] }] }]);
  expect(mixed.partitions.map((p) => p.errorCode)).toEqual([ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.NONE]);
  expect(part()).toMatchObject({ replicas: [0, 1], addingReplicas: [1], removingReplicas: [] });
});
