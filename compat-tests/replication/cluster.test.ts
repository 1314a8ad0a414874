/**
 * A 3-broker in-process cluster: brokers register with the controller over the Kafka protocol,
 * learn metadata from its log, and report the real leaders; a broker that stops heartbeating is
 * fenced and its leaderships move within the ISR; a controlled shutdown moves them first; a
 * restarted broker joins again with the same node id.
 */
import type { RunningCluster } from '../../broker/cluster';
import { parseArgs } from '../../broker/cli';
import { connectTo, createTopic, fastCluster, partitionsOf, waitFor } from './helpers';

jest.setTimeout(30_000);

describe('in-process cluster membership', () => {
  let cluster: RunningCluster;
  beforeAll(async () => {
    cluster = await fastCluster();
  });
  afterAll(async () => {
    await cluster?.close();
  });

  test('node ids 0..2; every broker lists all three at their own endpoints; the controller is separate', async () => {
    expect([...cluster.brokers.keys()].sort()).toEqual([0, 1, 2]);
    expect(cluster.controller.nodeId).toBe(3000);
    for (const b of cluster.bootstrapServers) {
      const conn = await connectTo(b);
      try {
        const dc = await conn.send('DescribeCluster', undefined, { includeClusterAuthorizedOperations: false, endpointType: 1 });
        expect(dc.clusterId).toBe(cluster.clusterId);
        expect(dc.brokers.map((x) => `${x.host}:${x.port}`).sort()).toEqual([...cluster.bootstrapServers].sort());
        expect(dc.brokers.map((x) => x.brokerId).sort()).toEqual([0, 1, 2]);
      } finally {
        await conn.close();
      }
    }
    // The controller listener speaks its own API set.
    const ctl = await connectTo(cluster.controllerAddress);
    try {
      const keys = [...ctl.apiVersions.keys()];
      for (const k of [1, 18, 19, 56, 60, 62, 63]) expect(keys).toContain(k);
      expect(keys).not.toContain(0); // no Produce on a controller
    } finally {
      await ctl.close();
    }
  });

  test('a topic created through any broker is seen by every broker with round-robin leaders', async () => {
    await createTopic(cluster, 'members', 3, 3);
    for (const b of cluster.bootstrapServers) {
      const parts = await partitionsOf(b, 'members');
      expect(parts.map((p) => p.leader)).toEqual([0, 1, 2]);
      expect(parts.every((p) => p.isr.length === 3 && p.leaderEpoch === 0)).toBe(true);
    }
    const conn = await connectTo(cluster.bootstrapServers[1]);
    try {
      const res = await conn.send('CreateTopics', undefined, { topics: [{ name: 'too-many', numPartitions: 1, replicationFactor: 4, assignments: [], configs: [] }], timeoutMs: 5000, validateOnly: false });
      expect(res.topics[0].errorCode).toBe(38); // INVALID_REPLICATION_FACTOR
    } finally {
      await conn.close();
    }
  });

  test('a broker that stops heartbeating is fenced; its leaderships move to the ISR; it is gone from Metadata', async () => {
    const before = await partitionsOf(cluster.bootstrapServers[1], 'members');
    await cluster.killBroker(0);
    const after = await waitFor('partition 0 to get a new leader', async () => {
      const parts = await partitionsOf(cluster.bootstrapServers[1], 'members');
      return parts[0].leader !== 0 && parts[0].leader !== -1 ? parts : undefined;
    });
    expect(after[0].leaderEpoch).toBe(before[0].leaderEpoch + 1);
    expect(after.every((p) => !p.isr.includes(0))).toBe(true);
    // A partition broker 0 only followed keeps its leader and leader epoch.
    expect(after[1]).toMatchObject({ leader: 1, leaderEpoch: before[1].leaderEpoch });
    const conn = await connectTo(cluster.bootstrapServers[2]);
    try {
      const md = await conn.send('Metadata', undefined, { topics: [] });
      expect(md.brokers.map((b) => b.nodeId).sort()).toEqual([1, 2]);
    } finally {
      await conn.close();
    }
    expect(cluster.controller.controller.image.broker(0)?.fenced).toBe(true);
  });

  test('a restarted broker registers again with the same node id, port and data', async () => {
    const port = cluster.bootstrapServers[0];
    await cluster.startBroker(0);
    expect(cluster.bootstrapServers[0]).toBe(port);
    expect(cluster.controller.controller.image.broker(0)?.fenced).toBe(false);
    await waitFor('broker 0 in every broker\'s metadata', async () => {
      for (const b of cluster.bootstrapServers) {
        const conn = await connectTo(b);
        try {
          const md = await conn.send('Metadata', undefined, { topics: [] });
          if (!md.brokers.some((x) => x.nodeId === 0)) return false;
        } finally {
          await conn.close();
        }
      }
      return true;
    });
  });

  test('a controlled shutdown moves the broker\'s leaderships before it stops', async () => {
    const led = () => [...cluster.controller.controller.image.topics()].flatMap((t) => [...t.partitions.values()]).filter((p) => p.leader === 2);
    expect(led().length).toBeGreaterThan(0);
    await cluster.stopBroker(2);
    // No waiting: by the time stopBroker returns, the controller has moved everything.
    expect(led()).toEqual([]);
    expect(cluster.controller.controller.image.broker(2)?.fenced).toBe(true);
    await cluster.startBroker(2);
  });
});

describe('krill CLI cluster flags', () => {
  test('--brokers, --node-id/--controller and --process-roles controller', () => {
    expect(parseArgs(['--brokers', '3', '--port', '19092'])).toMatchObject({ brokers: 3, port: 19092 });
    expect(parseArgs(['--node-id', '2', '--controller', 'ctl.example:9093']).overrides).toEqual([
      'process.roles=broker',
      'controller.quorum.bootstrap.servers=ctl.example:9093',
      'node.id=2',
    ]);
    expect(parseArgs(['--process-roles', 'controller', '--port', '9093'])).toMatchObject({ controllerOnly: true, port: 9093 });
    expect(() => parseArgs(['--controller', 'nohost'])).toThrow(/HOST:PORT/);
    expect(() => parseArgs(['--brokers', '0'])).toThrow(/--brokers/);
  });
});

describe('preferred leaders', () => {
  let cluster: RunningCluster;
  afterEach(async () => {
    await cluster?.close();
  });

  test('ElectLeaders (preferred) moves leadership back to the first replica once it is in the ISR', async () => {
    cluster = await fastCluster();
    await createTopic(cluster, 'pref', 3, 3);
    await cluster.stopBroker(0);
    await cluster.startBroker(0);
    await waitFor('broker 0 back in every ISR', async () => (await partitionsOf(cluster.bootstrapServers[1], 'pref')).every((p) => p.isr.includes(0)));
    expect((await partitionsOf(cluster.bootstrapServers[1], 'pref'))[0].leader).not.toBe(0);
    const conn = await connectTo(cluster.bootstrapServers[2]);
    try {
      for (const v of [0, 1, 2]) {
        const res = await conn.send('ElectLeaders', v, { electionType: 0, topicPartitions: [{ topic: 'pref', partitions: [0, 1, 9] }], timeoutMs: 5000 });
        const codes = res.replicaElectionResults[0].partitionResult.map((r) => r.errorCode);
        // v0 elects; later versions find nothing left to do.
        expect(codes).toEqual(v === 0 ? [0, 84, 3] : [84, 84, 3]); // NONE / ELECTION_NOT_NEEDED / UNKNOWN_TOPIC_OR_PARTITION
      }
      const unclean = await conn.send('ElectLeaders', 2, { electionType: 1, topicPartitions: [{ topic: 'pref', partitions: [0] }], timeoutMs: 5000 });
      expect(unclean.replicaElectionResults[0].partitionResult[0].errorCode).toBe(84); // it has a leader
    } finally {
      await conn.close();
    }
    expect((await partitionsOf(cluster.bootstrapServers[2], 'pref')).map((p) => p.leader)).toEqual([0, 1, 2]);
  });

  test('auto.leader.rebalance.enable: leadership returns to the preferred replica by itself', async () => {
    cluster = await fastCluster({ config: { 'auto.leader.rebalance.enable': 'true', 'leader.imbalance.check.interval.seconds': '1' } });
    await createTopic(cluster, 'auto', 3, 3);
    await cluster.stopBroker(1);
    expect((await partitionsOf(cluster.bootstrapServers[0], 'auto'))[1].leader).not.toBe(1);
    await cluster.startBroker(1);
    await waitFor('preferred leaders everywhere', async () => (await partitionsOf(cluster.bootstrapServers[0], 'auto')).map((p) => p.leader).join() === '0,1,2', 10_000, 100);
  });
});

describe('controller restart', () => {
  let cluster: RunningCluster;
  afterAll(async () => {
    await cluster?.close();
  });

  test('the metadata log is reloaded; brokers reconnect, keep their sessions and are fenced again when they die', async () => {
    cluster = await fastCluster();
    await createTopic(cluster, 'kept', 2, 3);
    const before = await partitionsOf(cluster.bootstrapServers[0], 'kept');
    await cluster.restartController(300);
    expect(cluster.controller.controller.image.partition('kept', 1)).toMatchObject({ leader: before[1].leader, isr: [1, 2, 0] });
    // Brokers stay unfenced through the restart (their heartbeats resume)...
    await new Promise((r) => setTimeout(r, 1500));
    for (const id of [0, 1, 2]) expect(cluster.controller.controller.image.broker(id)?.fenced).toBe(false);
    // ...admin requests reach the new controller...
    await createTopic(cluster, 'after-restart', 1, 3);
    expect((await partitionsOf(cluster.bootstrapServers[2], 'after-restart'))[0].isr).toHaveLength(3);
    // ...and a broker that dies is fenced by it.
    await cluster.killBroker(2);
    await waitFor('broker 2 fenced', () => cluster.controller.controller.image.broker(2)?.fenced === true, 5000);
    await cluster.startBroker(2);
  });
});
