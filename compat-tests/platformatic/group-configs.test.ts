/**
 * GROUP (32) config resources end to end on a started broker: @platformatic/kafka's Admin
 * (incrementalAlterConfigs, alterConfigs, describeConfigs, in a child process: group-configs.mjs)
 * sets a group's consumer.session.timeout.ms / consumer.heartbeat.interval.ms and is refused with
 * Kafka's INVALID_CONFIG messages; a KIP-848 member of that group (ConsumerGroupHeartbeat from
 * krill's own client) is given the group's heartbeat interval while another group gets the
 * broker's; after a restart (the metadata log replayed) the configs and their effect are still there.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ErrorCode } from '../../protocol/errors';
import { connect, type BrokerConnection } from '../../client/network-client';
import { startTestBroker, type TestBroker } from '../helpers/brokers';
import { runNodeScript } from '../helpers/node-script';

jest.setTimeout(90_000);

const GROUP = 'pf-group';
const TOPIC = 'group-configs';

let broker: TestBroker;

beforeAll(async () => {
  broker = await startTestBroker('embedded', { config: { 'offsets.topic.num.partitions': 1, 'num.partitions': 1 } });
});

afterAll(async () => {
  await broker?.close();
});

async function withConnection<T>(fn: (c: BrokerConnection) => Promise<T>): Promise<T> {
  const conn = await connect(broker.host, broker.port, { clientId: 'group-configs-test' });
  try {
    return await fn(conn);
  } finally {
    await conn.close();
  }
}

/** A new member joining `groupId`: the heartbeat interval it is given. */
async function joinedInterval(conn: BrokerConnection, groupId: string, memberId: string): Promise<number> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const found = await conn.send('FindCoordinator', 4, { keyType: 0, coordinatorKeys: [groupId] });
    if (found.coordinators[0].errorCode === ErrorCode.NONE) break;
    if (Date.now() > deadline) throw new Error(`no coordinator for ${groupId}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  for (;;) {
    const r = await conn.send('ConsumerGroupHeartbeat', 1, { groupId, memberId, memberEpoch: 0, rebalanceTimeoutMs: 30_000, subscribedTopicNames: [TOPIC], topicPartitions: [] });
    if (r.errorCode === ErrorCode.NONE) {
      // Leave again, so that the restart finds no member waiting for its session to expire.
      await conn.send('ConsumerGroupHeartbeat', 1, { groupId, memberId, memberEpoch: -1 });
      return r.heartbeatIntervalMs;
    }
    if (Date.now() > deadline) throw new Error(`ConsumerGroupHeartbeat kept failing with ${r.errorCode} ${r.errorMessage}`);
    await new Promise((r2) => setTimeout(r2, 100));
  }
}

async function describeGroup(conn: BrokerConnection, groupId: string): Promise<[string, string | null, number][]> {
  const res = await conn.send('DescribeConfigs', 4, { resources: [{ resourceType: 32, resourceName: groupId, configurationKeys: null }], includeSynonyms: false, includeDocumentation: false });
  expect(res.results[0].errorCode).toBe(ErrorCode.NONE);
  return res.results[0].configs.map((c) => [c.name, c.value, c.configSource]);
}

const EXPECTED: [string, string | null, number][] = [
  ['consumer.session.timeout.ms', '50000', 8],
  ['consumer.heartbeat.interval.ms', '6000', 8],
  ['share.session.timeout.ms', '45000', 5],
  ['share.heartbeat.interval.ms', '5000', 5],
  ['share.record.lock.duration.ms', '30000', 5],
];

test('@platformatic/kafka sets and describes group configs; the coordinator gives the group its heartbeat interval; a restart keeps both', async () => {
  await withConnection(async (conn) => {
    const created = await conn.send('CreateTopics', undefined, { topics: [{ name: TOPIC, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 10_000, validateOnly: false });
    expect(created.topics[0].errorCode).toBe(ErrorCode.NONE);
  });
  const out = path.join(broker.dataDir, 'platformatic-group-configs.json');
  expect(await runNodeScript(path.join(__dirname, 'group-configs.mjs'), [broker.bootstrap, GROUP, out], 60_000)).toBe('ok\n');
  const { described, unknown, bound } = JSON.parse(fs.readFileSync(out, 'utf8'));
  const byName = (d: any) => d.configs.map((c: any) => [c.name, c.value, c.configSource]);
  const mine = described.find((d: any) => d.resourceName === GROUP);
  expect(byName(mine)).toEqual(EXPECTED);
  const hb = mine.configs.find((c: any) => c.name === 'consumer.heartbeat.interval.ms');
  expect(hb.synonyms).toEqual([{ name: 'consumer.heartbeat.interval.ms', value: '6000', source: 8 }]);
  expect(typeof hb.documentation).toBe('string');
  expect(byName(described.find((d: any) => d.resourceName === `${GROUP}-legacy`))).toEqual([['consumer.heartbeat.interval.ms', '7000', 8]]);
  expect(unknown).not.toBeNull();
  expect(unknown.detail).toContain('Unknown group config name: nope.ms');
  expect(unknown.detail).toContain(`"errorCode":${ErrorCode.INVALID_CONFIG}`);
  expect(bound).not.toBeNull();
  expect(bound.detail).toContain('consumer.heartbeat.interval.ms must be less than or equal to group.consumer.max.heartbeat.interval.ms');

  await withConnection(async (conn) => {
    expect(await joinedInterval(conn, GROUP, 'm1')).toBe(6000);
    expect(await joinedInterval(conn, `${GROUP}-legacy`, 'm2')).toBe(7000);
    expect(await joinedInterval(conn, 'pf-other', 'm3')).toBe(5000);
  });

  await broker.restart();
  await withConnection(async (conn) => {
    expect(await describeGroup(conn, GROUP)).toEqual(EXPECTED);
    expect(await joinedInterval(conn, GROUP, 'm4')).toBe(6000);
  });
});
