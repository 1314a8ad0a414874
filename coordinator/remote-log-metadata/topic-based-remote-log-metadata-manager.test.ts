/**
 * The topic-based manager's configuration: Kafka's defaults and checks for the
 * remote.log.metadata.* keys, what the broker passes under `rlmm.config.` (or another prefix), and
 * the CreateTopics spec of `__remote_log_metadata`. The manager itself runs against a real cluster
 * in broker/remote-log-metadata-manager.test.ts.
 */
import {
  parseTopicBasedRlmmConfig,
  remoteLogMetadataTopicSpec,
  rlmmConfigsOf,
} from './topic-based-remote-log-metadata-manager';

test("Kafka's defaults", () => {
  expect(parseTopicBasedRlmmConfig({})).toEqual({
    numPartitions: 50,
    replicationFactor: null,
    retentionMs: -1n,
    consumeWaitMs: 120_000,
    initializationRetryMaxTimeoutMs: 120_000,
    initializationRetryIntervalMs: 100,
  });
});

test('set values, and the values Kafka refuses', () => {
  expect(
    parseTopicBasedRlmmConfig({
      'remote.log.metadata.topic.num.partitions': '10',
      'remote.log.metadata.topic.replication.factor': '2',
      'remote.log.metadata.topic.retention.ms': '604800000',
      'remote.log.metadata.consume.wait.ms': '0',
    }),
  ).toMatchObject({ numPartitions: 10, replicationFactor: 2, retentionMs: 604800000n, consumeWaitMs: 0 });
  expect(() => parseTopicBasedRlmmConfig({ 'remote.log.metadata.topic.num.partitions': '0' })).toThrow(/remote.log.metadata.topic.num.partitions/);
  expect(() => parseTopicBasedRlmmConfig({ 'remote.log.metadata.topic.replication.factor': '0' })).toThrow(/replication.factor/);
  expect(() => parseTopicBasedRlmmConfig({ 'remote.log.metadata.topic.replication.factor': '40000' })).toThrow(/replication.factor/);
  expect(() => parseTopicBasedRlmmConfig({ 'remote.log.metadata.topic.retention.ms': '0' })).toThrow('Invalid metadata topic retention in millis: 0');
  expect(() => parseTopicBasedRlmmConfig({ 'remote.log.metadata.topic.retention.ms': '-2' })).toThrow(/retention in millis: -2/);
  expect(() => parseTopicBasedRlmmConfig({ 'remote.log.metadata.topic.retention.ms': 'forever' })).toThrow(/retention.ms/);
  expect(() => parseTopicBasedRlmmConfig({ 'remote.log.metadata.consume.wait.ms': '-1' })).toThrow(/consume.wait.ms/);
});

test('the broker passes its rlmm.config.* settings stripped, with broker.id and cluster.id; the prefix is configurable', () => {
  const originals = new Map([
    ['rlmm.config.remote.log.metadata.topic.num.partitions', '7'],
    ['rlmm.config.custom', 'x'],
    ['remote.log.metadata.topic.num.partitions', 'not passed'],
    ['log.dirs', '/data'],
  ]);
  expect(rlmmConfigsOf(originals, 3, 'cid')).toEqual({ 'remote.log.metadata.topic.num.partitions': '7', custom: 'x', 'broker.id': '3', 'cluster.id': 'cid' });
  const other = new Map([...originals, ['remote.log.metadata.manager.impl.prefix', 'mine.']], );
  other.set('mine.remote.log.metadata.topic.num.partitions', '9');
  expect(rlmmConfigsOf(other, 1, 'c')).toEqual({ 'remote.log.metadata.topic.num.partitions': '9', 'broker.id': '1', 'cluster.id': 'c' });
});

test("the topic's spec: Kafka's settings, the default replication factor 3 capped by the live brokers, a set one kept", () => {
  const dflt = parseTopicBasedRlmmConfig({});
  expect(remoteLogMetadataTopicSpec(dflt, 5)).toEqual({
    name: '__remote_log_metadata',
    numPartitions: 50,
    replicationFactor: 3,
    assignments: [],
    configs: [
      { name: 'retention.ms', value: '-1' },
      { name: 'cleanup.policy', value: 'delete' },
      { name: 'remote.storage.enable', value: 'false' },
    ],
  });
  expect([2, 1, 0].map((live) => remoteLogMetadataTopicSpec(dflt, live).replicationFactor)).toEqual([2, 1, 1]);
  expect(remoteLogMetadataTopicSpec(parseTopicBasedRlmmConfig({ 'remote.log.metadata.topic.replication.factor': '3' }), 1).replicationFactor).toBe(3);
});
