/**
 * The controller listener's registry with and without a raft client: without one it is
 * CONTROLLER_HANDLERS as before (the single-writer Fetch); with one the quorum RPCs are added at
 * Kafka 4.0's versions and Fetch is the raft client's, one handler per API key. The handlers
 * themselves run over the network in broker/controller/kafka-raft-client.test.ts.
 */
import { ApiKey } from '../../../protocol/generated';
import { CONTROLLER_HANDLERS, controllerHandlers } from './index';
import { controllerFetchHandler } from './fetch';
import { controllerRaftFetchHandler } from './raft-fetch';

const ranges = (hs: ReturnType<typeof controllerHandlers>) => new Map(hs.map((h) => [h.apiKey, [h.minVersion, h.maxVersion]]));

test('without a raft client the registry is unchanged', () => {
  expect(controllerHandlers(false)).toBe(CONTROLLER_HANDLERS);
  expect(CONTROLLER_HANDLERS).toContain(controllerFetchHandler);
  for (const k of [ApiKey.Vote, ApiKey.BeginQuorumEpoch, ApiKey.EndQuorumEpoch, ApiKey.DescribeQuorum, ApiKey.FetchSnapshot, ApiKey.AddRaftVoter, ApiKey.RemoveRaftVoter, ApiKey.UpdateRaftVoter]) {
    expect(CONTROLLER_HANDLERS.some((h) => h.apiKey === k)).toBe(false);
  }
});

test('with a raft client: the quorum RPCs at Kafka 4.0 versions, Fetch from the quorum', () => {
  const hs = controllerHandlers(true);
  expect(new Set(hs.map((h) => h.apiKey)).size).toBe(hs.length);
  expect(hs).toContain(controllerRaftFetchHandler);
  expect(hs).not.toContain(controllerFetchHandler);
  const r = ranges(hs);
  expect(r.get(ApiKey.Vote)).toEqual([0, 2]);
  expect(r.get(ApiKey.BeginQuorumEpoch)).toEqual([0, 1]);
  expect(r.get(ApiKey.EndQuorumEpoch)).toEqual([0, 1]);
  expect(r.get(ApiKey.DescribeQuorum)).toEqual([0, 2]);
  expect(r.get(ApiKey.FetchSnapshot)).toEqual([0, 1]);
  expect(r.get(ApiKey.Fetch)).toEqual([4, 17]);
  expect(r.get(ApiKey.AddRaftVoter)).toEqual([0, 0]);
  expect(r.get(ApiKey.RemoveRaftVoter)).toEqual([0, 0]);
  expect(r.get(ApiKey.UpdateRaftVoter)).toEqual([0, 0]);
  expect(hs.length).toBe(CONTROLLER_HANDLERS.length + 8);
});
