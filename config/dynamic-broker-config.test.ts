import { KafkaConfig } from './kafka-config';
import { effectiveBrokerConfig, KRILL_APPLIED, validateDynamicBrokerConfigs } from './dynamic-broker-config';
import { ConfigSource } from './config-types';
import { CapturingLogger } from '../common/testing/mock-time';
import { ErrorCode, KafkaError } from '../protocol/errors';

const base = new KafkaConfig({ 'log.dirs': '/tmp/krill-dyn', 'message.max.bytes': '5000' });
const props = (o: Record<string, string>) => new Map(Object.entries(o));

function refusal(fn: () => void): { code: number; message: string } {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(KafkaError);
    return { code: (err as KafkaError).code, message: (err as Error).message };
  }
  throw new Error('expected a refusal');
}

describe('validateDynamicBrokerConfigs', () => {
  test('accepts the configs krill applies at run time, and unknown custom keys', () => {
    expect(() => validateDynamicBrokerConfigs(base, props({ 'message.max.bytes': '100', 'log.retention.ms': '10', 'my.custom': 'x' }), false, new Map())).not.toThrow();
    expect(() => validateDynamicBrokerConfigs(base, props({ 'max.connections.per.ip': '3' }), true, new Map())).not.toThrow();
  });

  test("refuses with Kafka's messages, in Kafka's order", () => {
    expect(refusal(() => validateDynamicBrokerConfigs(base, props({ 'log.retention.hours': '1', 'message.max.bytes': 'x' }), true, new Map()))).toEqual({
      code: ErrorCode.INVALID_REQUEST,
      message: 'Cannot update these configs dynamically: Set(log.retention.hours)',
    });
    expect(refusal(() => validateDynamicBrokerConfigs(base, props({ 'ssl.truststore.password': 's' }), true, new Map())).message).toBe(
      'These security configs can be dynamically updated only per-listener using the listener prefix: Set(ssl.truststore.password)',
    );
    expect(refusal(() => validateDynamicBrokerConfigs(base, props({ 'listener.name.plaintext.max.connections': '5' }), true, new Map())).message).toBe(
      'krill cannot update these configs without a restart: Set(listener.name.plaintext.max.connections)',
    );
    // A listener's SSL stores are per broker: refused at the cluster default, accepted per broker
    // (whether they load is the broker's check, broker-config-preprocess.ts).
    expect(refusal(() => validateDynamicBrokerConfigs(base, props({ 'listener.name.ssl.ssl.keystore.location': '/k' }), false, new Map())).message).toBe(
      'Cannot update these configs at default cluster level, broker id must be specified: Set(listener.name.ssl.ssl.keystore.location)',
    );
    const candidate = validateDynamicBrokerConfigs(base, props({ 'listener.name.ssl.ssl.keystore.location': '/k' }), true, new Map());
    expect(candidate.listenerOverride('SSL', 'ssl.keystore.location')).toBe('/k');
    const bad = refusal(() => validateDynamicBrokerConfigs(base, props({ 'message.max.bytes': '-5x' }), false, new Map()));
    expect(bad.code).toBe(ErrorCode.INVALID_REQUEST);
    expect(bad.message).toContain('message.max.bytes');
  });

  test('the applied set holds the topic-config synonyms, the connection limits and the log cleaner settings, not read-only synonyms or thread pools', () => {
    for (const n of ['message.max.bytes', 'log.retention.ms', 'log.segment.bytes', 'log.cleanup.policy', 'min.insync.replicas', 'max.connections', 'max.connections.per.ip', 'log.cleaner.threads', 'log.cleaner.io.max.bytes.per.second']) {
      expect(KRILL_APPLIED.has(n)).toBe(true);
    }
    expect(KRILL_APPLIED.has('log.retention.hours')).toBe(false);
    expect(KRILL_APPLIED.has('num.io.threads')).toBe(false);
  });
});

describe('effectiveBrokerConfig', () => {
  test('per-broker dynamic > cluster default dynamic > static > default, with the sources DescribeConfigs reports', () => {
    const logger = new CapturingLogger();
    const c = effectiveBrokerConfig(base, props({ 'message.max.bytes': '7000' }), props({ 'message.max.bytes': '6000', 'log.retention.ms': '99' }), logger);
    expect(c.getInt('message.max.bytes')).toBe(7000);
    expect(c.logRetentionTimeMillis()).toBe(99);
    const [e] = c.describe({ names: ['message.max.bytes'], includeSynonyms: true });
    expect(e.synonyms.map((s) => [s.value, s.source])).toEqual([
      ['7000', ConfigSource.DYNAMIC_BROKER_CONFIG],
      ['6000', ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG],
      ['5000', ConfigSource.STATIC_BROKER_CONFIG],
      ['1048588', ConfigSource.DEFAULT_CONFIG],
    ]);
  });

  test('a stored value that does not validate is dropped with an error log; the rest apply; read-only and unknown keys are ignored', () => {
    const logger = new CapturingLogger();
    const c = effectiveBrokerConfig(base, props({ 'message.max.bytes': 'nope', 'log.dirs': '/elsewhere', 'custom.key': 'v' }), props({ 'log.retention.ms': '42' }), logger);
    expect(c.getInt('message.max.bytes')).toBe(5000);
    expect(c.logRetentionTimeMillis()).toBe(42);
    expect(c.logDirs()).toEqual(['/tmp/krill-dyn']);
    expect(logger.lines.some((l) => l.level === 'error' && l.msg.includes('message.max.bytes'))).toBe(true);
  });
});

describe('dynamic-only broker configs (the replication throttle rates)', () => {
  test('per broker, else the cluster default, else Long.MAX_VALUE; a static value means nothing; a bad value is refused', () => {
    const logger = new CapturingLogger();
    const withStatic = new KafkaConfig({ 'log.dirs': '/tmp/krill-dyn', 'leader.replication.throttled.rate': '5' });
    expect(withStatic.getLongExact('leader.replication.throttled.rate')).toBe(9223372036854775807n);
    expect(withStatic.unknownKeys()).toContain('leader.replication.throttled.rate');
    expect(withStatic.describe({ names: ['leader.replication.throttled.rate'] })).toEqual([]);
    const c = effectiveBrokerConfig(withStatic, props({ 'leader.replication.throttled.rate': '1000' }), props({ 'leader.replication.throttled.rate': '2000', 'follower.replication.throttled.rate': '3000' }), logger);
    expect(c.getLongExact('leader.replication.throttled.rate')).toBe(1000n);
    expect(c.getLongExact('follower.replication.throttled.rate')).toBe(3000n);
    const described = c.describe({ names: ['follower.replication.throttled.rate', 'leader.replication.throttled.rate'], includeSynonyms: true });
    expect(described.map((e) => [e.name, e.value, e.source, e.isSensitive, e.readOnly, e.synonyms.map((s) => [s.value, s.source])])).toEqual([
      ['follower.replication.throttled.rate', '3000', ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG, false, false, [['3000', ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG], ['9223372036854775807', ConfigSource.DEFAULT_CONFIG]]],
      [
        'leader.replication.throttled.rate',
        '1000',
        ConfigSource.DYNAMIC_BROKER_CONFIG,
        false,
        false,
        [['1000', ConfigSource.DYNAMIC_BROKER_CONFIG], ['2000', ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG], ['9223372036854775807', ConfigSource.DEFAULT_CONFIG]],
      ],
    ]);
    expect(() => validateDynamicBrokerConfigs(base, props({ 'leader.replication.throttled.rate': '1048576' }), false, new Map())).not.toThrow();
    for (const bad of ['-1', 'fast']) {
      const r = refusal(() => validateDynamicBrokerConfigs(base, props({ 'follower.replication.throttled.rate': bad }), true, new Map()));
      expect(r.code).toBe(ErrorCode.INVALID_REQUEST);
      expect(r.message).toContain('follower.replication.throttled.rate');
    }
    expect(KRILL_APPLIED.has('leader.replication.throttled.rate')).toBe(true);
  });
});
