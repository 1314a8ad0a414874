/**
 * The Controller as a combined node runs it (no sessions, one broker registered unfenced) over an
 * in-memory metadata log: topic creation and validation, deletion, partition growth, topic
 * configs, client-metrics subscriptions, replay of the log on restart, and round-robin replica
 * assignment.
 */
import { ErrorCode, KafkaError } from '../../protocol/errors';
import { MetadataCache } from '../metadata-cache';
import { assignReplicas, type Controller } from './controller';
import { testController } from '../testing/test-controller';
import { InMemoryMetadataLog } from '../metadata-log';

function makeController(log = new InMemoryMetadataLog()) {
  return testController(log, {
    clusterId: 'test-cluster',
    validateTopicConfig: (name, value) => {
      if (name !== 'retention.ms' && name !== 'cleanup.policy') throw new KafkaError(ErrorCode.INVALID_CONFIG, `Unknown topic config name: ${name}`);
      if (name === 'retention.ms' && value !== null && !/^-?\d+$/.test(value)) {
        throw new KafkaError(ErrorCode.INVALID_CONFIG, `Invalid value ${value} for configuration retention.ms`);
      }
    },
  });
}

async function withBroker(c: Controller, id = 0) {
  await c.registerBroker({ brokerId: id, incarnationId: 'AAAAAAAAAAAAAAAAAAAAAA', endpoints: [], rack: null, logDirs: [] });
}

const spec = (name: string, numPartitions = 3, replicationFactor = 1) => ({
  name,
  numPartitions,
  replicationFactor,
  assignments: [],
  configs: [],
});

describe('Controller', () => {
  test('creates topics with partitions led by the live broker, and brokers see the same records', async () => {
    const c = makeController();
    await withBroker(c);
    const broker = new MetadataCache('test-cluster');
    c.subscribe((records, last) => broker.apply(records, last));
    const [r] = await c.createTopics([spec('orders', 3)], false);
    expect(r.errorCode).toBe(ErrorCode.NONE);
    expect(r.topicId).toHaveLength(22);
    const t = broker.topic('orders')!;
    expect(t.topicId).toBe(r.topicId);
    expect([...t.partitions.values()].map((p) => [p.partition, p.leader, p.isr, p.leaderEpoch])).toEqual([
      [0, 0, [0], 0],
      [1, 0, [0], 0],
      [2, 0, [0], 0],
    ]);
  });

  test('client-metrics subscriptions: one batch for the accepted changes, validate_only writes nothing, replayed on restart', async () => {
    const log = new InMemoryMetadataLog();
    const c = makeController(log);
    const broker = new MetadataCache('test-cluster');
    c.subscribe((records, last) => broker.apply(records, last));
    const ops = (metrics: string) => [{ name: 'metrics', op: 0, value: metrics }];
    expect(await c.alterClientMetricsConfigs([{ name: 'dry', incremental: true, ops: ops('*') }], true)).toEqual([{ name: 'dry', errorCode: ErrorCode.NONE, errorMessage: null }]);
    expect(broker.clientMetricsConfigs().size).toBe(0);
    const results = await c.alterClientMetricsConfigs(
      [
        { name: 'a', incremental: true, ops: ops('org.apache.kafka.') },
        { name: 'b', incremental: true, ops: [{ name: 'interval.ms', op: 0, value: '1' }] },
        { name: 'c', incremental: false, ops: ops('*') },
      ],
      false,
    );
    expect(results.map((r) => r.errorCode)).toEqual([ErrorCode.NONE, ErrorCode.INVALID_REQUEST, ErrorCode.NONE]);
    expect([...broker.clientMetricsConfigs().keys()].sort()).toEqual(['a', 'c']);
    const before = broker.clientMetricsConfigVersion;
    await c.alterClientMetricsConfigs([{ name: 'c', incremental: true, ops: [{ name: 'metrics', op: 1, value: null }] }], false);
    expect(broker.clientMetricsConfigVersion).toBeGreaterThan(before);
    expect([...broker.clientMetricsConfigs().keys()]).toEqual(['a']);
    const restarted = makeController(log);
    expect(restarted.image.clientMetricsConfig('a')).toEqual(new Map([['metrics', 'org.apache.kafka.']]));
    expect(restarted.image.clientMetricsConfigs().has('c')).toBe(false);
  });

  test('validateOnly writes nothing', async () => {
    const c = makeController();
    await withBroker(c);
    const [r] = await c.createTopics([spec('x')], true);
    expect(r.errorCode).toBe(ErrorCode.NONE);
    expect(c.image.topic('x')).toBeUndefined();
  });

  test('each bad topic gets its own Kafka error and the good ones are still created', async () => {
    const c = makeController();
    await withBroker(c);
    await c.createTopics([spec('a.b')], false);
    const results = await c.createTopics(
      [
        spec('a.b'),
        spec('a_b'),
        spec('bad name'),
        spec('x'.repeat(250)),
        spec('zero', 0),
        spec('rf', 1, 3),
        { ...spec('cfg'), configs: [{ name: 'no.such.config', value: '1' }] },
        { ...spec('cfgval'), configs: [{ name: 'retention.ms', value: 'abc' }] },
        spec('dup'),
        spec('dup'),
        spec('good'),
      ],
      false,
    );
    expect(results.map((r) => [r.name.slice(0, 10), r.errorCode])).toEqual([
      ['a.b', ErrorCode.TOPIC_ALREADY_EXISTS],
      ['a_b', ErrorCode.INVALID_TOPIC_EXCEPTION],
      ['bad name', ErrorCode.INVALID_TOPIC_EXCEPTION],
      ['xxxxxxxxxx', ErrorCode.INVALID_TOPIC_EXCEPTION],
      ['zero', ErrorCode.INVALID_PARTITIONS],
      ['rf', ErrorCode.INVALID_REPLICATION_FACTOR],
      ['cfg', ErrorCode.INVALID_CONFIG],
      ['cfgval', ErrorCode.INVALID_CONFIG],
      ['dup', ErrorCode.INVALID_REQUEST],
      ['dup', ErrorCode.INVALID_REQUEST],
      ['good', ErrorCode.NONE],
    ]);
    expect(c.image.topic('good')).toBeDefined();
    expect(c.image.topic('dup')).toBeUndefined();
  });

  test('deleting by name and by id; unknown ones get UNKNOWN_TOPIC_OR_PARTITION / UNKNOWN_TOPIC_ID', async () => {
    const c = makeController();
    await withBroker(c);
    const [a, b] = await c.createTopics([spec('a'), spec('b')], false);
    const res = await c.deleteTopics([
      { name: 'a', topicId: null },
      { name: null, topicId: b.topicId },
      { name: 'nope', topicId: null },
      { name: null, topicId: a.topicId },
    ]);
    expect(res.map((r) => r.errorCode)).toEqual([
      ErrorCode.NONE,
      ErrorCode.NONE,
      ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
      ErrorCode.UNKNOWN_TOPIC_ID,
    ]);
    expect([...c.image.topics()]).toHaveLength(0);
  });

  test('createPartitions only grows', async () => {
    const c = makeController();
    await withBroker(c);
    await c.createTopics([spec('t', 2)], false);
    const res = await c.createPartitions(
      [
        { name: 't', count: 5, assignments: null },
        { name: 'missing', count: 2, assignments: null },
      ],
      false,
    );
    expect(res.map((r) => r.errorCode)).toEqual([ErrorCode.NONE, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]);
    expect(c.image.topic('t')!.partitions.size).toBe(5);
    const [shrink] = await c.createPartitions([{ name: 't', count: 3, assignments: null }], false);
    expect(shrink.errorCode).toBe(ErrorCode.INVALID_PARTITIONS);
  });

  test('topic configs: incremental set/delete/append, and full replacement', async () => {
    const c = makeController();
    await withBroker(c);
    await c.createTopics([{ ...spec('t'), configs: [{ name: 'retention.ms', value: '1000' }] }], false);
    expect(c.image.topicConfig('t').get('retention.ms')).toBe('1000');
    await c.alterTopicConfigs([{ topic: 't', incremental: true, ops: [{ name: 'cleanup.policy', op: 2, value: 'compact' }] }], false);
    await c.alterTopicConfigs([{ topic: 't', incremental: true, ops: [{ name: 'cleanup.policy', op: 2, value: 'delete' }] }], false);
    expect(c.image.topicConfig('t').get('cleanup.policy')).toBe('compact,delete');
    await c.alterTopicConfigs([{ topic: 't', incremental: true, ops: [{ name: 'retention.ms', op: 1, value: null }] }], false);
    expect(c.image.topicConfig('t').has('retention.ms')).toBe(false);
    await c.alterTopicConfigs([{ topic: 't', incremental: false, ops: [{ name: 'retention.ms', op: 0, value: '5' }] }], false);
    expect([...c.image.topicConfig('t')]).toEqual([['retention.ms', '5']]);
    const [bad] = await c.alterTopicConfigs([{ topic: 't', incremental: true, ops: [{ name: 'retention.ms', op: 0, value: 'x' }] }], false);
    expect(bad.errorCode).toBe(ErrorCode.INVALID_CONFIG);
    expect(c.image.topicConfig('t').get('retention.ms')).toBe('5');
  });

  test('broker configs: ConfigRecords of resource type BROKER for a broker id or the cluster default; validate_only writes nothing; bad names refused', async () => {
    const log = new InMemoryMetadataLog();
    const c = makeController(log);
    const [ok] = await c.alterBrokerConfigs([{ resourceName: '', incremental: true, ops: [{ name: 'message.max.bytes', op: 0, value: '2000' }] }], false);
    expect(ok).toEqual({ resourceName: '', errorCode: ErrorCode.NONE, errorMessage: null });
    await c.alterBrokerConfigs([{ resourceName: '4', incremental: true, ops: [{ name: 'log.retention.ms', op: 0, value: '10' }] }], false);
    expect([...c.image.brokerConfig('')]).toEqual([['message.max.bytes', '2000']]);
    expect([...c.image.brokerConfig('4')]).toEqual([['log.retention.ms', '10']]);
    const end = log.logEndOffset;
    await c.alterBrokerConfigs([{ resourceName: '', incremental: true, ops: [{ name: 'message.max.bytes', op: 0, value: '1' }] }], true);
    expect(log.logEndOffset).toBe(end);
    // Legacy AlterConfigs replaces the set: the old key gets a null ConfigRecord.
    await c.alterBrokerConfigs([{ resourceName: '4', incremental: false, ops: [{ name: 'message.max.bytes', op: 0, value: '3000' }] }], false);
    expect([...c.image.brokerConfig('4')]).toEqual([['message.max.bytes', '3000']]);
    const refused = await c.alterBrokerConfigs(
      [
        { resourceName: 'b1', incremental: true, ops: [] },
        { resourceName: '-1', incremental: true, ops: [] },
      ],
      false,
    );
    expect(refused.map((r) => [r.errorCode, r.errorMessage])).toEqual([
      [ErrorCode.INVALID_REQUEST, 'Unable to parse broker name as a base 10 number.'],
      [ErrorCode.INVALID_REQUEST, 'Invalid negative broker ID.'],
    ]);
    // A restarted controller reads them back.
    expect([...makeController(log).image.brokerConfig('4')]).toEqual([['message.max.bytes', '3000']]);
  });

  test('state is rebuilt from the metadata log on restart', async () => {
    const log = new InMemoryMetadataLog();
    const c1 = makeController(log);
    await withBroker(c1);
    const [r] = await c1.createTopics([spec('kept', 2)], false);
    const c2 = makeController(log);
    expect(c2.image.topic('kept')?.topicId).toBe(r.topicId);
    const [again] = await c2.createTopics([spec('kept')], false);
    expect(again.errorCode).toBe(ErrorCode.TOPIC_ALREADY_EXISTS);
  });

  test('round-robin assignment spreads leaders and followers', () => {
    expect(assignReplicas([0, 1, 2], 3, 2, 0)).toEqual([
      [0, 1],
      [1, 2],
      [2, 0],
    ]);
    expect(assignReplicas([0, 1, 2], 6, 3, 0).map((r) => r[0])).toEqual([0, 1, 2, 0, 1, 2]);
    for (const r of assignReplicas([0, 1, 2, 3], 8, 3, 0)) expect(new Set(r).size).toBe(3);
  });
});
