/**
 * Dynamic group configs (GROUP config resources) in a 3-broker cluster with a separate controller:
 * set through one broker (forwarded to the controller as IncrementalAlterConfigs / AlterConfigs on
 * GROUP resources by RemoteController), validated by the controller with Kafka's messages, stored as
 * ConfigRecords in the metadata log and applied by every broker: each one describes them, and the
 * group's coordinator, whichever broker it is, gives its members the group's heartbeat interval; a
 * validate_only change and a refused one change nothing; a deletion reaches every broker.
 */
import { ErrorCode } from '../../protocol/errors';
import type { RunningCluster } from '../../broker/cluster';
import { connectTo, createTopic, fastCluster, waitFor } from './helpers';

jest.setTimeout(60_000);

const GROUP = 'cluster-group';
const HEARTBEAT = 'consumer.heartbeat.interval.ms';
const SESSION = 'consumer.session.timeout.ms';

let cluster: RunningCluster;

beforeAll(async () => {
  cluster = await fastCluster();
  await createTopic(cluster, 'gc-topic', 1, 3);
});

afterAll(async () => {
  await cluster?.close();
});

async function onEachBroker<T>(fn: (conn: Awaited<ReturnType<typeof connectTo>>) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (const hostPort of cluster.bootstrapServers) {
    const conn = await connectTo(hostPort);
    try {
      out.push(await fn(conn));
    } finally {
      await conn.close();
    }
  }
  return out;
}

async function described(conn: Awaited<ReturnType<typeof connectTo>>): Promise<string[]> {
  const res = await conn.send('DescribeConfigs', undefined, { resources: [{ resourceType: 32, resourceName: GROUP, configurationKeys: [SESSION, HEARTBEAT] }], includeSynonyms: false, includeDocumentation: false });
  return res.results[0].configs.map((e) => `${e.name}=${e.value}/${e.configSource}`);
}

/** The heartbeat interval the group's coordinator gives a new member (which then leaves). */
async function joinedInterval(memberId: string): Promise<number> {
  const coordinator = await waitFor('the group coordinator', async () => {
    const conn = await connectTo(cluster.bootstrapServers[0]);
    try {
      const c = (await conn.send('FindCoordinator', 4, { keyType: 0, coordinatorKeys: [GROUP] })).coordinators[0];
      return c.errorCode === ErrorCode.NONE ? `${c.host}:${c.port}` : null;
    } finally {
      await conn.close();
    }
  }, 20_000);
  const conn = await connectTo(coordinator);
  try {
    const r = await waitFor('a ConsumerGroupHeartbeat answer', async () => {
      const res = await conn.send('ConsumerGroupHeartbeat', 1, { groupId: GROUP, memberId, memberEpoch: 0, rebalanceTimeoutMs: 30_000, subscribedTopicNames: ['gc-topic'], topicPartitions: [] });
      return res.errorCode === ErrorCode.NONE ? res : null;
    }, 20_000);
    await conn.send('ConsumerGroupHeartbeat', 1, { groupId: GROUP, memberId, memberEpoch: -1 });
    return r.heartbeatIntervalMs;
  } finally {
    await conn.close();
  }
}

test('group configs set through one broker are validated by the controller and applied by every broker and the coordinator', async () => {
  const first = await connectTo(cluster.bootstrapServers[0]);
  try {
    const set = await first.send('IncrementalAlterConfigs', undefined, {
      resources: [{ resourceType: 32, resourceName: GROUP, configs: [{ name: SESSION, configOperation: 0, value: '50000' }, { name: HEARTBEAT, configOperation: 0, value: '6000' }] }],
      validateOnly: false,
    });
    expect(set.responses[0]).toMatchObject({ errorCode: ErrorCode.NONE, errorMessage: null });
  } finally {
    await first.close();
  }
  const expected = [`${SESSION}=50000/8`, `${HEARTBEAT}=6000/8`];
  await waitFor('every broker to apply the group configs', async () => (await onEachBroker(described)).every((d) => d.join() === expected.join()));
  expect(await joinedInterval('m1')).toBe(6000);

  const last = await connectTo(cluster.bootstrapServers[2]);
  try {
    const bad = await last.send('IncrementalAlterConfigs', undefined, { resources: [{ resourceType: 32, resourceName: GROUP, configs: [{ name: 'colour', configOperation: 0, value: 'red' }] }], validateOnly: false });
    expect(bad.responses[0]).toMatchObject({ errorCode: ErrorCode.INVALID_CONFIG, errorMessage: 'Unknown group config name: colour' });
    const low = await last.send('AlterConfigs', undefined, { resources: [{ resourceType: 32, resourceName: GROUP, configs: [{ name: SESSION, value: '1000' }] }], validateOnly: false });
    expect(low.responses[0]).toMatchObject({ errorCode: ErrorCode.INVALID_CONFIG, errorMessage: `${SESSION} must be greater than or equal to group.consumer.min.session.timeout.ms` });
    const dry = await last.send('AlterConfigs', undefined, { resources: [{ resourceType: 32, resourceName: GROUP, configs: [{ name: HEARTBEAT, value: '7000' }] }], validateOnly: true });
    expect(dry.responses[0].errorCode).toBe(ErrorCode.NONE);
    // Legacy AlterConfigs: the whole set replaced (the session timeout goes back to the broker's).
    const replaced = await last.send('AlterConfigs', undefined, { resources: [{ resourceType: 32, resourceName: GROUP, configs: [{ name: HEARTBEAT, value: '8000' }] }], validateOnly: false });
    expect(replaced.responses[0].errorCode).toBe(ErrorCode.NONE);
  } finally {
    await last.close();
  }
  const afterReplace = [`${SESSION}=45000/5`, `${HEARTBEAT}=8000/8`];
  await waitFor('every broker to apply the replacement', async () => (await onEachBroker(described)).every((d) => d.join() === afterReplace.join()));
  expect(await joinedInterval('m2')).toBe(8000);

  const second = await connectTo(cluster.bootstrapServers[1]);
  try {
    const removed = await second.send('IncrementalAlterConfigs', undefined, { resources: [{ resourceType: 32, resourceName: GROUP, configs: [{ name: HEARTBEAT, configOperation: 1, value: null }] }], validateOnly: false });
    expect(removed.responses[0].errorCode).toBe(ErrorCode.NONE);
  } finally {
    await second.close();
  }
  const defaults = [`${SESSION}=45000/5`, `${HEARTBEAT}=5000/5`];
  await waitFor('every broker to drop the group configs', async () => (await onEachBroker(described)).every((d) => d.join() === defaults.join()));
  expect(await joinedInterval('m3')).toBe(5000);
});
