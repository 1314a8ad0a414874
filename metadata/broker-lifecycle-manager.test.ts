/**
 * BrokerLifecycleManager's registration over a channel to the active controller: an attempt that
 * found no active controller within its timeout (ControllerChannel's REQUEST_TIMED_OUT) is retried
 * until the registration timeout, while INCONSISTENT_CLUSTER_ID stops it at once.
 */
import { BrokerLifecycleManager } from './broker-lifecycle-manager';
import type { ControllerRequestChannel } from './controller-channel';
import { ErrorCode, KafkaError } from '../protocol/errors';
import { Logger } from '../common/logger';

function manager(send: () => Promise<unknown>): BrokerLifecycleManager {
  const channel = { send: send as ControllerRequestChannel['send'], versionFor: async () => 0 };
  return new BrokerLifecycleManager({
    channel,
    nodeId: 4,
    clusterId: 'c',
    logger: Logger.silent(),
    listeners: () => [],
    rack: null,
    logDirs: [],
    heartbeatIntervalMs: 20,
    registrationTimeoutMs: 2_000,
    metadataOffset: () => -1n,
  });
}

test('a registration attempt with no active controller in time is retried', async () => {
  let calls = 0;
  const m = manager(async () => {
    calls++;
    if (calls < 3) throw new KafkaError(ErrorCode.REQUEST_TIMED_OUT, 'no answer from the active controller within 100 ms: no active controller known');
    return { errorCode: ErrorCode.NONE, brokerEpoch: 42n, throttleTimeMs: 0 };
  });
  expect(await m.register()).toBe(42n);
  expect(calls).toBe(3);
  await m.stop();
});

test('a controller of another cluster stops the registration at once', async () => {
  let calls = 0;
  const m = manager(async () => {
    calls++;
    return { errorCode: ErrorCode.INCONSISTENT_CLUSTER_ID, brokerEpoch: -1n, throttleTimeMs: 0 };
  });
  await expect(m.register()).rejects.toThrow(/another cluster/);
  expect(calls).toBe(1);
  await m.stop();
});
