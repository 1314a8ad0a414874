/**
 * Dynamic broker configs (KIP-226) over the wire: KafkaJS 2.2.4's alterConfigs / describeConfigs
 * on BROKER resources and krill's client for IncrementalAlterConfigs (which KafkaJS does not send).
 * Changes take effect without a restart (message.max.bytes -> MESSAGE_TOO_LARGE; a cluster default
 * log.retention.ms deleting old segments of a topic without its own override; max.connections.per.ip),
 * survive a restart (the ConfigRecords are in the metadata log), and in a 3-broker cluster a
 * per-broker value on one broker beats the cluster default that the others use. Refusals carry
 * Kafka's messages: read-only configs, another broker's id, per-broker configs at the cluster level.
 * The log cleaner's settings restart its loops (LogCleaner.reconfigure), the thread count at most
 * doubled or halved at once.
 */
import { ConfigResourceTypes, type Admin, type Kafka } from 'kafkajs';
import { ErrorCode } from '../../protocol/errors';
import { connect, produce, type BrokerConnection } from '../../client/network-client';
import { ConfigSource } from '../../config/config-types';
import { startTestBroker, type TestBroker } from '../helpers/brokers';
import { connectedAdmin, connectedProducer, disconnectAll, kafkaFor } from '../helpers/kafkajs';
import { fastCluster, partitionsOf, waitFor } from '../replication/helpers';

const E = ErrorCode;
const BROKER = ConfigResourceTypes.BROKER;
const SET = 0;
const DELETE = 1;

async function incrementalAlter(
  conn: BrokerConnection,
  resourceName: string,
  configs: { name: string; configOperation: number; value: string | null }[],
  validateOnly = false,
): Promise<{ errorCode: number; errorMessage: string | null }> {
  const res = await conn.send('IncrementalAlterConfigs', 1, { resources: [{ resourceType: BROKER, resourceName, configs }], validateOnly });
  return { errorCode: res.responses[0].errorCode, errorMessage: res.responses[0].errorMessage };
}

async function describeBroker(conn: BrokerConnection, resourceName: string, keys: string[] | null) {
  const res = await conn.send('DescribeConfigs', 4, {
    resources: [{ resourceType: BROKER, resourceName, configurationKeys: keys }],
    includeSynonyms: true,
    includeDocumentation: false,
  });
  expect(res.results[0].errorCode).toBe(E.NONE);
  return new Map(res.results[0].configs.map((c) => [c.name, c]));
}

describe('single broker', () => {
  let broker: TestBroker;
  let kafka: Kafka;
  let admin: Admin;
  let conn: BrokerConnection;

  beforeAll(async () => {
    broker = await startTestBroker('embedded', { config: { 'log.retention.check.interval.ms': 100, 'log.initial.task.delay.ms': 0 } });
    kafka = kafkaFor(broker);
    admin = await connectedAdmin(kafka);
    conn = await connect(broker.host, broker.port, { clientId: 'dynamic-config' });
  });
  afterAll(async () => {
    await conn?.close();
    await disconnectAll(admin);
    await broker?.close();
  });

  test('the cluster default lowers message.max.bytes at once: a larger record gets MESSAGE_TOO_LARGE, KafkaJS describeConfigs reports the source and synonyms; a per-broker value (KafkaJS alterConfigs) wins over it', async () => {
    await admin.createTopics({ topics: [{ topic: 'mmb', numPartitions: 1 }], waitForLeaders: true });
    const producer = await connectedProducer(kafka);
    try {
      const big = 'x'.repeat(5000);
      await producer.send({ topic: 'mmb', messages: [{ value: big }] });
      // KafkaJS refuses an empty resource name, so the cluster default goes through krill's client.
      expect(await incrementalAlter(conn, '', [{ name: 'message.max.bytes', configOperation: SET, value: '2000' }])).toEqual({ errorCode: E.NONE, errorMessage: null });
      await expect(producer.send({ topic: 'mmb', acks: 1, messages: [{ value: big }] })).rejects.toMatchObject({ type: 'MESSAGE_TOO_LARGE' });
      await producer.send({ topic: 'mmb', messages: [{ value: 'small' }] });

      const described = await admin.describeConfigs({ includeSynonyms: true, resources: [{ type: BROKER, name: '1', configNames: ['message.max.bytes'] }] });
      const entry = described.resources[0].configEntries[0];
      expect(entry).toMatchObject({ configName: 'message.max.bytes', configValue: '2000', readOnly: false, configSource: ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG });
      expect(entry.configSynonyms.map((s) => [s.configName, s.configValue, s.configSource])).toEqual([
        ['message.max.bytes', '2000', ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG],
        ['message.max.bytes', '1048588', ConfigSource.DEFAULT_CONFIG],
      ]);
      // The topic's max.message.bytes follows the broker default it has no override for.
      const topic = await admin.describeConfigs({ includeSynonyms: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: 'mmb', configNames: ['max.message.bytes'] }] });
      expect(topic.resources[0].configEntries[0]).toMatchObject({ configValue: '2000', configSource: ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG });
      // The cluster default resource lists only what is set there.
      const defaults = await describeBroker(conn, '', null);
      expect([...defaults.keys()]).toEqual(['message.max.bytes']);

      // Per broker beats the cluster default (legacy AlterConfigs from KafkaJS, sent to broker 1).
      await admin.alterConfigs({ validateOnly: false, resources: [{ type: BROKER, name: '1', configEntries: [{ name: 'message.max.bytes', value: '8000' }] }] });
      await producer.send({ topic: 'mmb', acks: 1, messages: [{ value: big }] });
      const mine = (await describeBroker(conn, '1', ['message.max.bytes'])).get('message.max.bytes')!;
      expect(mine.value).toBe('8000');
      expect(mine.synonyms.map((s) => [s.value, s.source])).toEqual([
        ['8000', ConfigSource.DYNAMIC_BROKER_CONFIG],
        ['2000', ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG],
        ['1048588', ConfigSource.DEFAULT_CONFIG],
      ]);
      // DELETE drops the per-broker value: the cluster default is back in force.
      expect((await incrementalAlter(conn, '1', [{ name: 'message.max.bytes', configOperation: DELETE, value: null }])).errorCode).toBe(E.NONE);
      await expect(producer.send({ topic: 'mmb', acks: 1, messages: [{ value: big }] })).rejects.toMatchObject({ type: 'MESSAGE_TOO_LARGE' });
      // validate_only changes nothing.
      expect((await incrementalAlter(conn, '', [{ name: 'message.max.bytes', configOperation: SET, value: '9000' }], true)).errorCode).toBe(E.NONE);
      expect((await describeBroker(conn, '', null)).get('message.max.bytes')!.value).toBe('2000');
    } finally {
      await producer.disconnect();
    }
  });

  test('refusals: read-only configs, another broker id, a non-numeric name, SSL store settings without a listener prefix, configs krill does not re-read, bad values, nulls', async () => {
    expect(await incrementalAlter(conn, '', [{ name: 'log.dirs', configOperation: SET, value: '/tmp/x' }, { name: 'node.id', configOperation: SET, value: '3' }])).toEqual({
      errorCode: E.INVALID_REQUEST,
      errorMessage: 'Cannot update these configs dynamically: Set(log.dirs, node.id)',
    });
    expect(await incrementalAlter(conn, '7', [{ name: 'message.max.bytes', configOperation: SET, value: '100' }])).toEqual({
      errorCode: E.INVALID_REQUEST,
      errorMessage: 'Unexpected broker id, expected 1, but received 7',
    });
    expect(await incrementalAlter(conn, 'one', [{ name: 'message.max.bytes', configOperation: SET, value: '100' }])).toEqual({
      errorCode: E.INVALID_REQUEST,
      errorMessage: 'Node id must be an integer, but it is: one',
    });
    expect(await incrementalAlter(conn, '', [{ name: 'ssl.keystore.location', configOperation: SET, value: '/tmp/ks' }])).toEqual({
      errorCode: E.INVALID_REQUEST,
      errorMessage: 'These security configs can be dynamically updated only per-listener using the listener prefix: Set(ssl.keystore.location)',
    });
    // Dynamically updatable in Kafka, but no krill component re-reads it: refused rather than stored and ignored.
    expect(await incrementalAlter(conn, '', [{ name: 'sasl.enabled.mechanisms', configOperation: SET, value: 'PLAIN' }, { name: 'num.io.threads', configOperation: SET, value: '2' }])).toEqual({
      errorCode: E.INVALID_REQUEST,
      errorMessage: 'krill cannot update these configs without a restart: Set(sasl.enabled.mechanisms, num.io.threads)',
    });
    const bad = await incrementalAlter(conn, '', [{ name: 'message.max.bytes', configOperation: SET, value: 'lots' }]);
    expect(bad.errorCode).toBe(E.INVALID_REQUEST);
    expect(bad.errorMessage).toContain('message.max.bytes');
    expect(await incrementalAlter(conn, '', [{ name: 'message.max.bytes', configOperation: SET, value: null }])).toEqual({
      errorCode: E.INVALID_REQUEST,
      errorMessage: 'Null value not supported for : message.max.bytes',
    });
    expect(await incrementalAlter(conn, '', [{ name: 'message.max.bytes', configOperation: 2, value: '5' }])).toEqual({
      errorCode: E.INVALID_CONFIG,
      errorMessage: 'Config value append is not allowed for config key: message.max.bytes',
    });
    // APPEND on a list config starts from its default.
    expect((await incrementalAlter(conn, '', [{ name: 'log.cleanup.policy', configOperation: 2, value: 'compact' }], true)).errorCode).toBe(E.NONE);
    // KafkaJS surfaces the refusal as the error code.
    await expect(
      admin.alterConfigs({ validateOnly: false, resources: [{ type: BROKER, name: '1', configEntries: [{ name: 'log.dirs', value: '/tmp/y' }] }] }),
    ).rejects.toMatchObject({ type: 'INVALID_REQUEST' });
  });

  test('a cluster default log.retention.ms deletes the old segments of a topic without a retention override, without a restart', async () => {
    await admin.createTopics({ topics: [{ topic: 'ret', numPartitions: 1, configEntries: [{ name: 'segment.bytes', value: '1024' }] }], waitForLeaders: true });
    const producer = await connectedProducer(kafka);
    try {
      const old = String(Date.now() - 3_600_000);
      for (let i = 0; i < 10; i++) await producer.send({ topic: 'ret', messages: [{ value: 'v'.repeat(400), timestamp: old }] });
    } finally {
      await producer.disconnect();
    }
    const earliest = async () => (await admin.fetchTopicOffsetsByTimestamp('ret', 0))[0].offset;
    expect(await earliest()).toBe('0');
    expect(
      await incrementalAlter(conn, '', [{ name: 'log.retention.ms', configOperation: SET, value: '60000' }]),
    ).toEqual({ errorCode: E.NONE, errorMessage: null });
    await waitFor('old segments deleted by retention', async () => Number((await admin.fetchTopicOffsets('ret'))[0].low) > 0, 15_000, 100);
    const entry = (await admin.describeConfigs({ includeSynonyms: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: 'ret', configNames: ['retention.ms'] }] })).resources[0].configEntries[0];
    expect(entry).toMatchObject({ configValue: '60000', configSource: ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG });
  });

  test('max.connections.per.ip applies to new connections at once', async () => {
    expect((await incrementalAlter(conn, '', [{ name: 'max.connections.per.ip', configOperation: SET, value: '2' }])).errorCode).toBe(E.NONE);
    // The admin and conn already hold connections from 127.0.0.1: a third one is closed at once.
    const extra = await connect(broker.host, broker.port, { clientId: 'over-the-limit' }).then(
      async (c) => {
        try {
          await c.send('ApiVersions', 0, {});
          return 'served';
        } catch {
          return 'closed';
        } finally {
          await c.close();
        }
      },
      () => 'closed',
    );
    expect(extra).toBe('closed');
    expect((await incrementalAlter(conn, '', [{ name: 'max.connections.per.ip', configOperation: DELETE, value: null }])).errorCode).toBe(E.NONE);
    const again = await connect(broker.host, broker.port, { clientId: 'after-reset' });
    try {
      await again.send('ApiVersions', 0, {});
    } finally {
      await again.close();
    }
  });

  test('max.connections: a connection waiting for a slot is served as soon as the limit is raised', async () => {
    const solo = await startTestBroker('embedded');
    const first = await connect(solo.host, solo.port, { clientId: 'first' });
    let second: BrokerConnection | undefined;
    try {
      expect((await incrementalAlter(first, '', [{ name: 'max.connections', configOperation: SET, value: '1' }])).errorCode).toBe(E.NONE);
      const pending = connect(solo.host, solo.port, { clientId: 'second', timeoutMs: 10_000 }).then(async (c) => {
        second = c;
        await c.send('ApiVersions', 0, {});
        return 'served';
      });
      // Not served while the only slot is taken (a bounded look: nothing to await but its absence).
      expect(await Promise.race([pending, new Promise((r) => setTimeout(() => r('waiting'), 300))])).toBe('waiting');
      expect((await incrementalAlter(first, '', [{ name: 'max.connections', configOperation: SET, value: '10' }])).errorCode).toBe(E.NONE);
      expect(await pending).toBe('served');
    } finally {
      await second?.close();
      await first.close();
      await solo.close();
    }
  });

  test('log cleaner configs restart the cleaner with them: more threads, a new I/O throttle, and it goes on cleaning; the thread count may at most double or halve at once', async () => {
    const cleaner = () => broker.embedded!.server.logManager.cleaner!;
    expect(cleaner().config.numThreads).toBe(1);
    expect(await incrementalAlter(conn, '', [{ name: 'log.cleaner.threads', configOperation: SET, value: '3' }])).toEqual({
      errorCode: E.INVALID_REQUEST,
      errorMessage: 'Log cleaner threads cannot be increased to more than double the current value 1',
    });
    expect(await incrementalAlter(conn, '', [
      { name: 'log.cleaner.threads', configOperation: SET, value: '2' },
      { name: 'log.cleaner.io.max.bytes.per.second', configOperation: SET, value: '5000000' },
      { name: 'log.cleaner.backoff.ms', configOperation: SET, value: '20' },
    ])).toEqual({ errorCode: E.NONE, errorMessage: null });
    await waitFor('the cleaner restarted with 2 loops', () => cleaner().config.numThreads === 2 && cleaner().lastStats.length === 2 && cleaner().isRunning);
    expect(cleaner().throttler.rate).toBe(5_000_000);
    expect(cleaner().config.backoffMs).toBe(20);
    expect(await incrementalAlter(conn, '1', [{ name: 'log.cleaner.threads', configOperation: SET, value: '0' }])).toEqual({
      errorCode: E.INVALID_REQUEST,
      errorMessage: 'Log cleaner threads should be at least 1',
    });

    // The restarted cleaner compacts. (Its own max.message.bytes: an earlier test left a 2000-byte cluster default.)
    await admin.createTopics({
      topics: [
        {
          topic: 'dyn-compacted',
          numPartitions: 1,
          configEntries: [
            { name: 'cleanup.policy', value: 'compact' },
            { name: 'segment.bytes', value: '4096' },
            { name: 'min.cleanable.dirty.ratio', value: '0.01' },
            { name: 'max.message.bytes', value: '1000000' },
          ],
        },
      ],
      waitForLeaders: true,
    });
    const values = (round: number) => Array.from({ length: 20 }, (_, k) => ({ key: `k${k}`, value: `r${round}`.padEnd(100, '.') }));
    for (let round = 0; round < 5; round++) await produce(conn, 'dyn-compacted', 0, values(round), { acks: -1 });
    const pads = [];
    for (let i = 0; i < 2; i++) pads.push(await produce(conn, 'dyn-compacted', 0, [{ key: 'pad', value: 'p'.repeat(2500) }], { acks: -1 }));
    expect(await cleaner().awaitCleaned({ topic: 'dyn-compacted', partition: 0 }, pads[1]!.baseOffset, 30_000)).toBe(true);

    // Back to the static settings (the cluster default removed): one loop again.
    expect(await incrementalAlter(conn, '', [
      { name: 'log.cleaner.threads', configOperation: DELETE, value: null },
      { name: 'log.cleaner.io.max.bytes.per.second', configOperation: DELETE, value: null },
      { name: 'log.cleaner.backoff.ms', configOperation: DELETE, value: null },
    ])).toEqual({ errorCode: E.NONE, errorMessage: null });
    await waitFor('the cleaner back at 1 loop', () => cleaner().config.numThreads === 1 && cleaner().lastStats.length === 1);
  });

  test('dynamic configs survive a restart: they are read back from the metadata log', async () => {
    await conn.close();
    await disconnectAll(admin);
    await broker.restart();
    admin = await connectedAdmin(kafka);
    conn = await connect(broker.host, broker.port, { clientId: 'dynamic-config' });
    const entry = (await describeBroker(conn, '1', ['message.max.bytes', 'log.retention.ms']));
    expect(entry.get('message.max.bytes')).toMatchObject({ value: '2000', configSource: ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG });
    expect(entry.get('log.retention.ms')).toMatchObject({ value: '60000', configSource: ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG });
    const producer = await connectedProducer(kafka);
    try {
      await expect(producer.send({ topic: 'mmb', acks: 1, messages: [{ value: 'x'.repeat(5000) }] })).rejects.toMatchObject({ type: 'MESSAGE_TOO_LARGE' });
    } finally {
      await producer.disconnect();
    }
  });
});

test('3-broker cluster: a per-broker value on broker 1 and the cluster default on brokers 0 and 2, forwarded to the controller', async () => {
  const cluster = await fastCluster({ brokers: 3 });
  const conns: BrokerConnection[] = [];
  try {
    for (const id of [0, 1, 2]) {
      const b = cluster.broker(id);
      conns.push(await connect(b.host, b.port, { clientId: `dyn-${id}` }));
    }
    expect((await incrementalAlter(conns[0], '', [{ name: 'message.max.bytes', configOperation: SET, value: '3000' }])).errorCode).toBe(E.NONE);
    expect((await incrementalAlter(conns[1], '1', [{ name: 'message.max.bytes', configOperation: SET, value: '7000' }])).errorCode).toBe(E.NONE);
    // Broker 0 may not alter broker 1's resource (KafkaJS sends it to broker 1 itself).
    expect((await incrementalAlter(conns[0], '1', [{ name: 'message.max.bytes', configOperation: SET, value: '1' }])).errorMessage).toBe('Unexpected broker id, expected 0, but received 1');
    const expected: Record<number, [string, number]> = { 0: ['3000', ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG], 1: ['7000', ConfigSource.DYNAMIC_BROKER_CONFIG], 2: ['3000', ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG] };
    for (const id of [0, 1, 2]) {
      await waitFor(`broker ${id} applies its dynamic config`, async () => {
        const e = (await describeBroker(conns[id], String(id), ['message.max.bytes'])).get('message.max.bytes')!;
        return e.value === expected[id][0] && e.configSource === expected[id][1];
      });
      expect(cluster.broker(id).server.config.getInt('message.max.bytes')).toBe(Number(expected[id][0]));
    }
    // KafkaJS describes each broker's resource on that broker.
    const kafka = kafkaFor({ bootstrap: cluster.bootstrapServers[0] } as TestBroker);
    const admin = await connectedAdmin(kafka);
    try {
      const res = await admin.describeConfigs({ includeSynonyms: false, resources: [0, 1, 2].map((id) => ({ type: BROKER, name: String(id), configNames: ['message.max.bytes'] })) });
      const byName = new Map(res.resources.map((r) => [r.resourceName, r.configEntries[0].configValue]));
      expect(Object.fromEntries(byName)).toEqual({ '0': '3000', '1': '7000', '2': '3000' });
      // And produce on each broker follows its own limit.
      await admin.createTopics({ topics: [{ topic: 'per-broker', numPartitions: 3, replicationFactor: 1 }], waitForLeaders: true });
      const md = await admin.fetchTopicMetadata({ topics: ['per-broker'] });
      const producer = await connectedProducer(kafka);
      try {
        for (const p of md.topics[0].partitions) {
          const send = producer.send({ topic: 'per-broker', acks: 1, messages: [{ partition: p.partitionId, value: 'x'.repeat(5000) }] });
          if (p.leader === 1) await send;
          else await expect(send).rejects.toMatchObject({ type: 'MESSAGE_TOO_LARGE' });
        }
      } finally {
        await producer.disconnect();
      }
    } finally {
      await admin.disconnect();
    }
  } finally {
    for (const c of conns) await c.close();
    await cluster.close();
  }
});

test('the controller follows a cluster-default unclean.leader.election.enable: a replica outside the ISR takes over when the last ISR member dies', async () => {
  const cluster = await fastCluster({ brokers: 3 });
  const b2 = cluster.broker(2);
  const conn = await connect(b2.host, b2.port, { clientId: 'dyn-unclean' });
  try {
    expect((await incrementalAlter(conn, '', [{ name: 'unclean.leader.election.enable', configOperation: SET, value: 'true' }])).errorCode).toBe(E.NONE);
    const created = await conn.send('CreateTopics', 7, {
      topics: [{ name: 'unclean-t', numPartitions: -1, replicationFactor: -1, assignments: [{ partitionIndex: 0, brokerIds: [0, 1] }], configs: [] }],
      timeoutMs: 10_000,
      validateOnly: false,
    });
    expect(created.topics[0].errorCode).toBe(E.NONE);
    const state = async () => (await partitionsOf(b2.bootstrapServers[0], 'unclean-t'))[0];
    await waitFor('both replicas in the ISR', async () => (await state())?.isr.length === 2);
    // Broker 1 falls behind (a record it does not fetch in time) and out of the ISR, then the only ISR member dies.
    cluster.slowReplication(1, 5_000);
    const b0 = cluster.broker(0);
    const leaderConn = await connect(b0.host, b0.port, { clientId: 'dyn-unclean-producer' });
    try {
      await produce(leaderConn, 'unclean-t', 0, [{ value: Buffer.from('x') }], { acks: 1 });
    } finally {
      await leaderConn.close();
    }
    await waitFor('broker 1 out of the ISR', async () => (await state()).isr.join() === '0', 15_000, 50);
    await cluster.killBroker(0);
    await waitFor('broker 1 elected uncleanly', async () => (await state()).leader === 1, 15_000, 50);
    expect((await state()).isr).toEqual([1]);
  } finally {
    cluster.slowReplication(1, 0);
    await conn.close();
    await cluster.close();
  }
});
