/**
 * unclean.leader.election.enable from a BROKER resource reaches the controller's elections, as in
 * Kafka (ConfigurationControlManager.getTopicConfig: the topic's value, else the controller node's
 * dynamic config, else the cluster default, else the static config): on a 3-broker cluster whose
 * static config leaves it false, the controller node's own dynamic config (resource "3000", set on
 * the controller listener as `kafka-configs --bootstrap-controller` would) turns it on. Two
 * partitions on [0, 1] lose broker 1 from their ISR (the network between 0 and 1 is cut while
 * records arrive), then broker 0 dies: the one without a topic override gets broker 1 as its
 * leader (unclean), the one whose topic says false stays without a leader.
 */
import { connect, type BrokerConnection } from '../../client/network-client';
import type { RunningCluster } from '../../broker/cluster';
import { ErrorCode } from '../../protocol/errors';
import { buildRecordBatch } from '../../protocol/records/memory-records-builder';
import { fastCluster, partitionsOf, waitFor } from './helpers';

let cluster: RunningCluster;
let toController: BrokerConnection;

beforeAll(async () => {
  cluster = await fastCluster({ brokers: 3 });
  const [host, port] = cluster.controllerAddress.split(':');
  toController = await connect(host, Number(port), { clientId: 'unclean-admin' });
});
afterAll(async () => {
  await toController?.close();
  await cluster?.close();
});

test('the controller node\'s dynamic unclean.leader.election.enable allows an unclean election; a topic\'s own false still forbids it', async () => {
  const b0 = cluster.broker(0);
  const conn = await connect(b0.host, b0.port, { clientId: 'unclean-test' });
  try {
    const created = await conn.send('CreateTopics', undefined, {
      topics: [
        { name: 'elected', numPartitions: -1, replicationFactor: -1, assignments: [{ partitionIndex: 0, brokerIds: [0, 1] }], configs: [] },
        { name: 'kept-offline', numPartitions: -1, replicationFactor: -1, assignments: [{ partitionIndex: 0, brokerIds: [0, 1] }], configs: [{ name: 'unclean.leader.election.enable', value: 'false' }] },
      ],
      timeoutMs: 10_000,
      validateOnly: false,
    });
    expect(created.topics.map((t) => t.errorCode)).toEqual([ErrorCode.NONE, ErrorCode.NONE]);
    for (const t of ['elected', 'kept-offline']) {
      await waitFor(`${t}: full ISR`, async () => (await partitionsOf(cluster.bootstrapServers[0], t))[0]?.isr.join() === '0,1');
    }
    const altered = await toController.send('IncrementalAlterConfigs', undefined, {
      resources: [{ resourceType: 4, resourceName: String(cluster.controller.nodeId), configs: [{ name: 'unclean.leader.election.enable', configOperation: 0, value: 'true' }] }],
      validateOnly: false,
    });
    expect(altered.responses.map((r) => r.errorCode)).toEqual([ErrorCode.NONE]);
    expect(cluster.controller.controller.uncleanLeaderElectionEnabled('elected')).toBe(true);
    expect(cluster.controller.controller.uncleanLeaderElectionEnabled('kept-offline')).toBe(false);

    // Broker 1 falls behind: it cannot reach broker 0 while records arrive, and is shrunk out.
    cluster.control.cut(0, 1);
    for (const t of ['elected', 'kept-offline']) {
      const records = buildRecordBatch([{ value: Buffer.from('x') }]);
      const res = await conn.send('Produce', undefined, { transactionalId: null, acks: 1, timeoutMs: 5000, topicData: [{ name: t, partitionData: [{ index: 0, records }] }] });
      expect(res.responses[0].partitionResponses[0].errorCode).toBe(ErrorCode.NONE);
    }
    for (const t of ['elected', 'kept-offline']) {
      await waitFor(`${t}: broker 1 out of the ISR`, async () => (await partitionsOf(cluster.bootstrapServers[2], t))[0]?.isr.join() === '0', 15_000, 50);
    }
  } finally {
    await conn.close();
  }
  await cluster.killBroker(0);
  cluster.control.healAll();
  await waitFor('broker 1 leads "elected" after an unclean election', async () => {
    const [p] = await partitionsOf(cluster.bootstrapServers[2], 'elected');
    return p.leader === 1 && p.isr.join() === '1';
  }, 15_000, 50);
  const [offline] = await partitionsOf(cluster.bootstrapServers[2], 'kept-offline');
  expect(offline).toMatchObject({ leader: -1, isr: [0] });
});
