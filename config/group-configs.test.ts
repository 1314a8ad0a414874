/**
 * Dynamic group configs (group-configs.ts) against Kafka 4.0's GroupConfig and
 * GroupConfigManager.validate: names, ConfigDef parsing and bounds, the cross-config bounds in
 * Kafka's order and words, the consumer overrides the coordinator reads, and DescribeConfigs entries.
 */
import { ErrorCode, KafkaError } from '../protocol/errors';
import { ConfigSource, ConfigType } from './config-types';
import { GROUP_CONFIG_BOUNDS_DEFAULTS as B, consumerGroupOverrides, describeGroupConfigs, validateGroupConfigs } from './group-configs';

function error(configs: Record<string, string>, groupId = 'g', bounds = B): { code: number; message: string } | null {
  try {
    validateGroupConfigs(groupId, new Map(Object.entries(configs)), bounds);
    return null;
  } catch (err) {
    expect(err).toBeInstanceOf(KafkaError);
    return { code: (err as KafkaError).code, message: (err as Error).message };
  }
}

const invalidConfig = (message: string) => ({ code: ErrorCode.INVALID_CONFIG, message });

describe('validateGroupConfigs', () => {
  test('accepts every Kafka 4.0 group config within its bounds, and no configs at all', () => {
    expect(error({})).toBeNull();
    expect(
      error({
        'consumer.session.timeout.ms': '50000',
        'consumer.heartbeat.interval.ms': ' 6000 ',
        'share.session.timeout.ms': '60000',
        'share.heartbeat.interval.ms': '15000',
        'share.record.lock.duration.ms': '15000',
      }),
    ).toBeNull();
  });

  test('an empty group name is INVALID_REQUEST; an unknown name INVALID_CONFIG', () => {
    expect(error({ 'consumer.session.timeout.ms': '50000' }, '')).toEqual({ code: ErrorCode.INVALID_REQUEST, message: 'Default group resources are not allowed.' });
    expect(error({ 'session.timeout.ms': '50000' })).toEqual(invalidConfig('Unknown group config name: session.timeout.ms'));
  });

  test("ConfigDef's type and atLeast messages", () => {
    expect(error({ 'consumer.session.timeout.ms': 'soon' })).toEqual(invalidConfig('Invalid value soon for configuration consumer.session.timeout.ms: Not a number of type INT'));
    expect(error({ 'consumer.heartbeat.interval.ms': '0' })).toEqual(invalidConfig('Invalid value 0 for configuration consumer.heartbeat.interval.ms: Value must be at least 1'));
    expect(error({ 'share.record.lock.duration.ms': '999' })).toEqual(invalidConfig('Invalid value 999 for configuration share.record.lock.duration.ms: Value must be at least 1000'));
    expect(error({ 'consumer.session.timeout.ms': '3000000000' })).toEqual(invalidConfig('Invalid value 3000000000 for configuration consumer.session.timeout.ms: Not a number of type INT'));
  });

  test("the broker's bounds, in GroupConfig.validateValues' order and words", () => {
    expect(error({ 'consumer.heartbeat.interval.ms': '4999' })).toEqual(invalidConfig('consumer.heartbeat.interval.ms must be greater than or equal to group.consumer.min.heartbeat.interval.ms'));
    expect(error({ 'consumer.heartbeat.interval.ms': '15001' })).toEqual(invalidConfig('consumer.heartbeat.interval.ms must be less than or equal to group.consumer.max.heartbeat.interval.ms'));
    expect(error({ 'consumer.session.timeout.ms': '44999' })).toEqual(invalidConfig('consumer.session.timeout.ms must be greater than or equal to group.consumer.min.session.timeout.ms'));
    expect(error({ 'consumer.session.timeout.ms': '60001' })).toEqual(invalidConfig('consumer.session.timeout.ms must be less than or equal to group.consumer.max.session.timeout.ms'));
    expect(error({ 'share.heartbeat.interval.ms': '1' })).toEqual(invalidConfig('share.heartbeat.interval.ms must be greater than or equal to group.share.min.heartbeat.interval.ms'));
    expect(error({ 'share.heartbeat.interval.ms': '15001' })).toEqual(invalidConfig('share.heartbeat.interval.ms must be less than or equal to group.share.max.heartbeat.interval.ms'));
    expect(error({ 'share.session.timeout.ms': '1' })).toEqual(invalidConfig('share.session.timeout.ms must be greater than or equal to group.share.min.session.timeout.ms'));
    expect(error({ 'share.session.timeout.ms': '60001' })).toEqual(invalidConfig('share.session.timeout.ms must be less than or equal to group.share.max.session.timeout.ms'));
    expect(error({ 'share.record.lock.duration.ms': '14999' })).toEqual(invalidConfig('share.record.lock.duration.ms must be greater than or equal to group.share.min.record.lock.duration.ms'));
    expect(error({ 'share.record.lock.duration.ms': '60001' })).toEqual(invalidConfig('share.record.lock.duration.ms must be less than or equal to group.share.max.record.lock.duration.ms'));
    // The heartbeat is checked before the session timeout.
    expect(error({ 'consumer.heartbeat.interval.ms': '1', 'consumer.session.timeout.ms': '1' })!.message).toMatch(/^consumer\.heartbeat\.interval\.ms must be greater/);
  });

  test("the session timeout must exceed the heartbeat interval; unset values are the broker's", () => {
    const wide = { ...B, consumerMinSessionTimeoutMs: 1000, consumerMinHeartbeatIntervalMs: 1000, consumerMaxHeartbeatIntervalMs: 60_000 };
    expect(error({ 'consumer.session.timeout.ms': '2000', 'consumer.heartbeat.interval.ms': '2000' }, 'g', wide)).toEqual(
      invalidConfig('consumer.session.timeout.ms must be greater than consumer.heartbeat.interval.ms'),
    );
    // Only the session timeout given: checked against the broker's heartbeat interval (5000).
    expect(error({ 'consumer.session.timeout.ms': '5000' }, 'g', wide)).toEqual(invalidConfig('consumer.session.timeout.ms must be greater than consumer.heartbeat.interval.ms'));
    expect(error({ 'consumer.session.timeout.ms': '5001' }, 'g', wide)).toBeNull();
    // And the bounds are the broker's (here a wider group.consumer.min.session.timeout.ms).
    expect(error({ 'consumer.session.timeout.ms': '5001' })!.message).toBe('consumer.session.timeout.ms must be greater than or equal to group.consumer.min.session.timeout.ms');
  });
});

test('consumerGroupOverrides: the consumer.* values set, nothing else', () => {
  expect(consumerGroupOverrides(new Map())).toEqual({});
  expect(consumerGroupOverrides(new Map([['consumer.heartbeat.interval.ms', ' 7000'], ['share.session.timeout.ms', '50000']]))).toEqual({ heartbeatIntervalMs: 7000 });
  expect(consumerGroupOverrides(new Map([['consumer.session.timeout.ms', '50000'], ['consumer.heartbeat.interval.ms', '6000']]))).toEqual({ sessionTimeoutMs: 50000, heartbeatIntervalMs: 6000 });
});

test("describeGroupConfigs: every config, the group's with DYNAMIC_GROUP_CONFIG, the broker's defaults with DEFAULT_CONFIG, one synonym", () => {
  const bounds = { ...B, consumerSessionTimeoutMs: 50_000 };
  const all = describeGroupConfigs(new Map([['consumer.heartbeat.interval.ms', ' 6000']]), bounds, { includeSynonyms: true, includeDocumentation: true });
  expect(all.map((e) => [e.name, e.value, e.source])).toEqual([
    ['consumer.session.timeout.ms', '50000', ConfigSource.DEFAULT_CONFIG],
    ['consumer.heartbeat.interval.ms', '6000', ConfigSource.DYNAMIC_GROUP_CONFIG],
    ['share.session.timeout.ms', '45000', ConfigSource.DEFAULT_CONFIG],
    ['share.heartbeat.interval.ms', '5000', ConfigSource.DEFAULT_CONFIG],
    ['share.record.lock.duration.ms', '30000', ConfigSource.DEFAULT_CONFIG],
  ]);
  for (const e of all) {
    expect(e).toMatchObject({ readOnly: false, isSensitive: false, configType: ConfigType.INT });
    expect(e.synonyms).toEqual([{ name: e.name, value: e.value, source: e.source }]);
    expect(e.documentation).toEqual(expect.any(String));
  }
  const some = describeGroupConfigs(new Map(), bounds, { names: ['consumer.session.timeout.ms', 'nope'] });
  expect(some).toEqual([
    {
      name: 'consumer.session.timeout.ms',
      value: '50000',
      readOnly: false,
      isDefault: true,
      source: ConfigSource.DEFAULT_CONFIG,
      isSensitive: false,
      synonyms: [],
      configType: ConfigType.INT,
      documentation: null,
    },
  ]);
});
