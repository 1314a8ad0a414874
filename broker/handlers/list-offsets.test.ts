/**
 * ListOffsets on a leader whose high watermark is behind its leader epoch start offset (right after
 * an election): Kafka's OFFSET_NOT_AVAILABLE (LEADER_NOT_AVAILABLE before v5) for the latest offset.
 */
import { ErrorCode } from '../../protocol/errors';
import { removeTempDirs } from '../../storage/testing/temp-dir';
import { partitionHarness as harness } from '../../replication/testing/partition-harness';
import { listOffsetsHandler } from './list-offsets';
import type { Broker } from '../broker';
import { ALLOW_ALL } from '../../metadata/authorizer/authorizer';
import type { RequestContext } from '../network/request-context';

afterAll(removeTempDirs);

describe('ListOffsets', () => {
  test('ListOffsets right after an election, while the HWM is behind the epoch start: OFFSET_NOT_AVAILABLE (LEADER_NOT_AVAILABLE before v5)', async () => {
    const h = harness({ minIsr: 1 });
    h.append(5); // no follower has fetched: the HWM stays at 0
    h.p.makeLeader({ ...h.state, leaderEpoch: 1, partitionEpoch: 1 });
    expect(h.p.leaderEpochStartOffset).toBe(5n);
    const broker = { replicaManager: { leaderPartitionOrThrow: () => h.p }, logger: { error: () => {} }, authorizer: ALLOW_ALL, tieredStorage: null } as unknown as Broker;
    const ask = async (version: number, timestamp: bigint, replicaId = -1) =>
      (
        (await listOffsetsHandler.handle(broker, { apiVersion: version } as RequestContext, {
          replicaId,
          isolationLevel: 0,
          topics: [{ name: 't', partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp, maxNumOffsets: 1 }] }],
          timeoutMs: 0,
        })) as { topics: { partitions: { errorCode: number; offset: bigint }[] }[] }
      ).topics[0].partitions[0];
    expect((await ask(7, -1n)).errorCode).toBe(ErrorCode.OFFSET_NOT_AVAILABLE);
    expect((await ask(4, -1n)).errorCode).toBe(ErrorCode.LEADER_NOT_AVAILABLE);
    expect(await ask(7, -2n)).toMatchObject({ errorCode: 0, offset: 0n });
    expect(await ask(7, -1n, 1)).toMatchObject({ errorCode: 0, offset: 5n }); // followers read to the LEO
    h.fetch(1, 5n);
    h.fetch(2, 5n);
    expect(await ask(7, -1n)).toMatchObject({ errorCode: 0, offset: 5n });
  });
});
