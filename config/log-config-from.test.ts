import { ErrorCode, KafkaError } from '../protocol/errors';
import { ConfigSource, ConfigType, LONG_MAX_AS_NUMBER } from './config-types';
import { KafkaConfig } from './kafka-config';
import { logConfigFrom, validateTopicConfig } from './log-config-from';

const broker = (props: Record<string, string> = {}) => KafkaConfig.load({ props });
const HOUR = 3_600_000;

function invalidConfig(fn: () => unknown): KafkaError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(KafkaError);
    expect((e as KafkaError).code).toBe(ErrorCode.INVALID_CONFIG);
    return e as KafkaError;
  }
  throw new Error('expected INVALID_CONFIG');
}

describe('effective topic config', () => {
  test('Kafka defaults with nothing set', () => {
    const c = logConfigFrom(broker()).logConfig;
    expect(c).toMatchObject({
      segmentBytes: 1073741824,
      segmentMs: 168 * HOUR,
      segmentJitterMs: 0,
      segmentIndexBytes: 10485760,
      indexIntervalBytes: 4096,
      retentionMs: 168 * HOUR,
      retentionBytes: -1,
      localRetentionMs: 168 * HOUR,
      localRetentionBytes: -1,
      maxMessageBytes: 1048588,
      messageTimestampType: 'CreateTime',
      messageTimestampAfterMaxMs: HOUR,
      fileDeleteDelayMs: 60000,
      cleanupPolicy: ['delete'],
      compact: false,
      delete: true,
      minInSyncReplicas: 1,
      compressionType: 'producer',
      preallocate: false,
      remoteStorageEnable: false,
      leaderReplicationThrottledReplicas: [],
    });
    expect(c.flushMessages).toBe(LONG_MAX_AS_NUMBER);
    expect(c.flushMs).toBe(LONG_MAX_AS_NUMBER);
    expect(c.messageTimestampBeforeMaxMs).toBe(LONG_MAX_AS_NUMBER);
  });

  test('broker synonyms, with unit conversion and precedence', () => {
    const b = broker({
      'log.retention.hours': '2',
      'log.roll.hours': '3',
      'log.roll.jitter.hours': '1',
      'log.segment.bytes': '2097152',
      'message.max.bytes': '500000',
      'log.cleanup.policy': 'compact,delete',
      'log.flush.scheduler.interval.ms': '5000',
      'min.insync.replicas': '2',
      'log.message.timestamp.type': 'LogAppendTime',
      'log.cleaner.min.cleanable.ratio': '0.25',
    });
    const c = logConfigFrom(b).logConfig;
    expect(c.retentionMs).toBe(2 * HOUR);
    expect(c.segmentMs).toBe(3 * HOUR);
    expect(c.segmentJitterMs).toBe(HOUR);
    expect(c.segmentBytes).toBe(2097152);
    expect(c.maxMessageBytes).toBe(500000);
    expect(c.cleanupPolicy).toEqual(['compact', 'delete']);
    expect(c.compact && c.delete).toBe(true);
    expect(c.flushMs).toBe(5000);
    expect(c.minInSyncReplicas).toBe(2);
    expect(c.messageTimestampType).toBe('LogAppendTime');
    expect(c.minCleanableDirtyRatio).toBe(0.25);
    expect(logConfigFrom(broker({ 'log.retention.minutes': '10', 'log.retention.hours': '2' })).logConfig.retentionMs).toBe(600000);
  });

  test('topic overrides win over the broker', () => {
    const e = logConfigFrom(broker({ 'log.retention.hours': '2' }), { 'retention.ms': '1000', 'segment.bytes': '1024', 'cleanup.policy': 'compact' });
    expect(e.logConfig.retentionMs).toBe(1000);
    expect(e.logConfig.segmentBytes).toBe(1024); // the topic floor is 14 bytes in Kafka 4.0
    expect(e.logConfig.compact).toBe(true);
    expect(e.logConfig.delete).toBe(false);
    expect([...e.overrides.keys()]).toEqual(['retention.ms', 'segment.bytes', 'cleanup.policy']);
    expect(e.values.get('retention.ms')).toBe(1000n);
  });

  test('local retention -2 follows retention', () => {
    const c = logConfigFrom(broker(), { 'retention.bytes': '1000', 'local.retention.bytes': '-2', 'local.retention.ms': '5000' }).logConfig;
    expect(c.localRetentionBytes).toBe(1000);
    expect(c.localRetentionMs).toBe(5000);
  });
});

describe('validateTopicConfig (CreateTopics / AlterConfigs)', () => {
  test('unknown names, including configs Kafka 4.0 removed', () => {
    expect(invalidConfig(() => validateTopicConfig(broker(), { 'retention.hours': '1' })).message).toBe('Unknown topic config name: retention.hours');
    expect(invalidConfig(() => validateTopicConfig(broker(), { 'message.format.version': '3.0' })).message).toBe(
      'Unknown topic config name: message.format.version',
    );
    expect(invalidConfig(() => validateTopicConfig(broker(), { 'log.retention.ms': '1' })).message).toMatch('Unknown topic config name');
  });

  test('null values', () => {
    expect(invalidConfig(() => validateTopicConfig(broker(), { 'retention.ms': null, 'segment.ms': null })).message).toBe(
      'Null value not supported for topic configs: retention.ms,segment.ms',
    );
  });

  test('bad types and ranges carry Kafka\'s message', () => {
    expect(invalidConfig(() => validateTopicConfig(broker(), { 'retention.ms': 'forever' })).message).toBe(
      'Invalid value forever for configuration retention.ms: Not a number of type LONG',
    );
    expect(invalidConfig(() => validateTopicConfig(broker(), { 'retention.ms': '-2' })).message).toBe(
      'Invalid value -2 for configuration retention.ms: Value must be at least -1',
    );
    expect(invalidConfig(() => validateTopicConfig(broker(), { 'cleanup.policy': 'compact,shred' })).message).toMatch(
      'Invalid value shred for configuration cleanup.policy: String must be one of: compact, delete',
    );
    expect(invalidConfig(() => validateTopicConfig(broker(), { 'segment.bytes': '13' })).message).toMatch('Value must be at least 14');
    expect(invalidConfig(() => validateTopicConfig(broker(), { 'min.cleanable.dirty.ratio': '1.5' })).message).toMatch('Value must be no more than 1');
    expect(invalidConfig(() => validateTopicConfig(broker(), { 'message.timestamp.type': 'createtime' })).message).toMatch('String must be one of');
    expect(invalidConfig(() => validateTopicConfig(broker(), { 'leader.replication.throttled.replicas': '0-1' })).message).toMatch(
      "must be the literal '*'",
    );
  });

  test('min.compaction.lag.ms may not exceed max.compaction.lag.ms, also against the broker\'s value', () => {
    expect(invalidConfig(() => validateTopicConfig(broker(), { 'min.compaction.lag.ms': '10', 'max.compaction.lag.ms': '5' })).message).toBe(
      'conflict topic config setting min.compaction.lag.ms (10) > max.compaction.lag.ms (5)',
    );
    expect(() => validateTopicConfig(broker({ 'log.cleaner.max.compaction.lag.ms': '100' }), { 'min.compaction.lag.ms': '200' })).toThrow(
      'conflict topic config setting',
    );
  });

  test('tiered storage rules', () => {
    expect(invalidConfig(() => validateTopicConfig(broker(), { 'remote.storage.enable': 'true' })).message).toMatch(
      'Tiered Storage functionality is disabled in the broker',
    );
    const tiered = broker({ 'remote.log.storage.system.enable': 'true' });
    expect(() => validateTopicConfig(tiered, { 'remote.storage.enable': 'true' })).not.toThrow();
    expect(invalidConfig(() => validateTopicConfig(tiered, { 'remote.storage.enable': 'true', 'cleanup.policy': 'compact' })).message).toMatch(
      'Remote log storage only supports topics with cleanup.policy=delete',
    );
    expect(
      invalidConfig(() => validateTopicConfig(tiered, { 'remote.storage.enable': 'true', 'retention.bytes': '100', 'local.retention.bytes': '200' }))
        .message,
    ).toMatch('Value must not be more than retention.bytes property value: 100');
    expect(invalidConfig(() => validateTopicConfig(tiered, {}, { 'remote.storage.enable': 'true' })).message).toMatch(
      'It is invalid to disable remote storage without deleting remote data',
    );
    expect(() => validateTopicConfig(tiered, { 'remote.log.delete.on.disable': 'true' }, { 'remote.storage.enable': 'true' })).not.toThrow();
  });

  test('accepts a Map as well as an object, and returns typed values', () => {
    const typed = validateTopicConfig(broker(), new Map([['retention.ms', ' 1000 '], ['cleanup.policy', 'compact , delete']]));
    expect(typed.get('retention.ms')).toBe(1000n);
    expect(typed.get('cleanup.policy')).toEqual(['compact', 'delete']);
  });
});

describe('DescribeConfigs for a topic', () => {
  const describe_ = (b: KafkaConfig, overrides: Record<string, string> = {}) =>
    new Map(logConfigFrom(b, overrides).describe({ includeSynonyms: true }).map((e) => [e.name, e]));

  test('every topic config is reported, sorted, never read-only or sensitive', () => {
    const list = logConfigFrom(broker()).describe();
    expect(list).toHaveLength(33);
    expect(list.map((e) => e.name)).toEqual([...list.map((e) => e.name)].sort());
    expect(list.every((e) => !e.readOnly && !e.isSensitive)).toBe(true);
  });

  test('an override: DYNAMIC_TOPIC_CONFIG first, then the broker synonyms', () => {
    const m = describe_(broker({ 'log.segment.bytes': '2097152' }), { 'segment.bytes': '1048576' });
    expect(m.get('segment.bytes')).toEqual({
      name: 'segment.bytes',
      value: '1048576',
      readOnly: false,
      isDefault: false,
      source: ConfigSource.DYNAMIC_TOPIC_CONFIG,
      isSensitive: false,
      synonyms: [
        { name: 'segment.bytes', value: '1048576', source: ConfigSource.DYNAMIC_TOPIC_CONFIG },
        { name: 'log.segment.bytes', value: '2097152', source: ConfigSource.STATIC_BROKER_CONFIG },
        { name: 'log.segment.bytes', value: '1073741824', source: ConfigSource.DEFAULT_CONFIG },
      ],
      configType: ConfigType.INT,
      documentation: null,
    });
  });

  test('inherited from the broker: STATIC_BROKER_CONFIG or DEFAULT_CONFIG', () => {
    const m = describe_(broker({ 'log.segment.bytes': '2097152', 'log.retention.ms': '5000' }));
    expect(m.get('segment.bytes')).toMatchObject({ value: '2097152', source: ConfigSource.STATIC_BROKER_CONFIG, isDefault: false });
    expect(m.get('retention.ms')).toMatchObject({
      value: '5000',
      source: ConfigSource.STATIC_BROKER_CONFIG,
      synonyms: [
        { name: 'log.retention.ms', value: '5000', source: ConfigSource.STATIC_BROKER_CONFIG },
        { name: 'log.retention.hours', value: '168', source: ConfigSource.DEFAULT_CONFIG },
      ],
    });
    expect(m.get('max.message.bytes')).toMatchObject({
      value: '1048588',
      source: ConfigSource.DEFAULT_CONFIG,
      synonyms: [{ name: 'message.max.bytes', value: '1048588', source: ConfigSource.DEFAULT_CONFIG }],
    });
    expect(m.get('min.cleanable.dirty.ratio')!.value).toBe('0.5');
    expect(m.get('flush.messages')!.value).toBe('9223372036854775807');
    expect(m.get('cleanup.policy')!.configType).toBe(ConfigType.LIST);
  });

  test("Kafka's quirk: retention.ms set only through log.retention.hours lists no synonyms and says DEFAULT_CONFIG", () => {
    const m = describe_(broker({ 'log.retention.hours': '1' }));
    expect(m.get('retention.ms')).toMatchObject({ value: String(HOUR), source: ConfigSource.DEFAULT_CONFIG, synonyms: [] });
    expect(describe_(broker()).get('segment.ms')).toMatchObject({ value: String(168 * HOUR), source: ConfigSource.DEFAULT_CONFIG, synonyms: [] });
  });

  test('configs with no broker synonym', () => {
    const m = describe_(broker(), { 'remote.log.copy.disable': 'false' });
    expect(m.get('remote.storage.enable')).toMatchObject({ value: 'false', source: ConfigSource.DEFAULT_CONFIG, synonyms: [] });
    expect(m.get('leader.replication.throttled.replicas')).toMatchObject({ value: '', source: ConfigSource.DEFAULT_CONFIG });
    expect(m.get('remote.log.copy.disable')).toMatchObject({
      source: ConfigSource.DYNAMIC_TOPIC_CONFIG,
      synonyms: [{ name: 'remote.log.copy.disable', value: 'false', source: ConfigSource.DYNAMIC_TOPIC_CONFIG }],
    });
  });

  test('names filter and documentation', () => {
    const list = logConfigFrom(broker()).describe({ names: ['retention.ms', 'bogus'], includeDocumentation: true });
    expect(list.map((e) => e.name)).toEqual(['retention.ms']);
    expect(list[0].documentation).toMatch(/kept/);
  });
});
