/**
 * The Controller's whole-request partition limit (Kafka's MAX_PARTITIONS_PER_BATCH, KAFKA-17870 /
 * KAFKA-19673) over an in-memory metadata log: the total is counted before anything is planned
 * (-1 as num.partitions, a manual assignment by its length, growth from the current count), every
 * topic of a refused request gets POLICY_VIOLATION, and nothing is written to the log.
 */
import { ErrorCode } from '../../protocol/errors';
import { EXCESSIVE_PARTITIONS_MESSAGE, MAX_PARTITIONS_PER_BATCH } from './controller';
import { testController } from '../testing/test-controller';
import { InMemoryMetadataLog } from '../metadata-log';

async function controller(defaultNumPartitions: number) {
  const c = testController(new InMemoryMetadataLog(), { clusterId: 'test-cluster', defaultNumPartitions: () => defaultNumPartitions });
  await c.registerBroker({ brokerId: 0, incarnationId: 'AAAAAAAAAAAAAAAAAAAAAA', endpoints: [], rack: null, logDirs: [] });
  return c;
}

const spec = (name: string, numPartitions: number, assignments: number[][] = []) => ({
  name,
  numPartitions,
  replicationFactor: assignments.length > 0 ? -1 : 1,
  assignments: assignments.map((brokerIds, partitionIndex) => ({ partitionIndex, brokerIds })),
  configs: [],
});

const refused = { errorCode: ErrorCode.POLICY_VIOLATION, errorMessage: EXCESSIVE_PARTITIONS_MESSAGE };

describe('Controller: at most MAX_PARTITIONS_PER_BATCH partitions per request', () => {
  test('CreateTopics: -1 counts as num.partitions, assignments by length; refused requests write nothing', async () => {
    const c = await controller(MAX_PARTITIONS_PER_BATCH);
    const offset = c.lastCommittedOffset;
    expect(await c.createTopics([spec('a', -1), spec('b', -1, [[0]])], false)).toEqual([expect.objectContaining({ name: 'a', ...refused }), expect.objectContaining({ name: 'b', ...refused })]);
    expect(await c.createTopics([spec('huge', 2 ** 31 - 1)], true)).toEqual([expect.objectContaining(refused)]);
    expect(c.lastCommittedOffset).toBe(offset);
    expect(c.image.topic('a')).toBeUndefined();
    // Exactly the limit is allowed (validate_only, so nothing is allocated on disk anyway).
    expect((await c.createTopics([spec('a', -1)], true))[0].errorCode).toBe(ErrorCode.NONE);
    // Non-positive counts add nothing; they fail on their own.
    expect((await c.createTopics([spec('a', -1), spec('neg', -5)], true)).map((r) => r.errorCode)).toEqual([ErrorCode.NONE, ErrorCode.INVALID_PARTITIONS]);
    await c.close();
  });

  test('CreatePartitions: the growth of every topic counts, from its current partition count', async () => {
    const c = await controller(1);
    await c.createTopics([spec('x', 5), spec('y', 1)], false);
    const offset = c.lastCommittedOffset;
    expect(
      await c.createPartitions(
        [
          { name: 'x', count: 5 + 6000, assignments: null },
          { name: 'y', count: 1 + 4001, assignments: null },
          { name: 'unknown', count: 99_999, assignments: null },
        ],
        false,
      ),
    ).toEqual([
      { name: 'x', ...refused },
      { name: 'y', ...refused },
      { name: 'unknown', ...refused },
    ]);
    expect(c.lastCommittedOffset).toBe(offset);
    expect(c.image.topic('x')!.partitions.size).toBe(5);
    expect(await c.createPartitions([{ name: 'x', count: 5 + 10_000, assignments: null }, { name: 'unknown', count: 99_999, assignments: null }], true)).toEqual([
      { name: 'x', errorCode: ErrorCode.NONE, errorMessage: null },
      { name: 'unknown', errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: null },
    ]);
    await c.close();
  });
});
