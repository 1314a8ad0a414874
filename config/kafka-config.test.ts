import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { ConfigException, ConfigSource, ConfigType, LONG_MAX_AS_NUMBER } from './config-types';
import { KafkaConfig, OFFSETS_TOPIC, TRANSACTION_STATE_TOPIC } from './kafka-config';

const cfg = (props: Record<string, string> = {}) => KafkaConfig.load({ props });
const HOUR = 3_600_000;

describe('KafkaConfig sources and precedence', () => {
  test('file < programmatic < overrides; originals keep exactly what was set', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'krill-cfg-'));
    try {
      const file = path.join(dir, 'server.properties');
      fs.writeFileSync(file, 'num.partitions=3\nlog.dirs=/from/file\nmy.custom.key = kept\n');
      const c = KafkaConfig.load({
        file,
        props: { 'num.partitions': 5, 'log.cleanup.policy': ['compact', 'delete'], 'auto.create.topics.enable': false, skipped: undefined },
        overrides: ['num.partitions=7', 'log.segment.bytes=2097152'],
      });
      expect(c.getInt('num.partitions')).toBe(7);
      expect(c.logDirs()).toEqual(['/from/file']);
      expect(c.getList('log.cleanup.policy')).toEqual(['compact', 'delete']);
      expect(c.getBoolean('auto.create.topics.enable')).toBe(false);
      expect(c.getInt('log.segment.bytes')).toBe(2097152);
      expect(Object.fromEntries(c.originals())).toEqual({
        'log.dirs': '/from/file',
        'my.custom.key': 'kept',
        'log.cleanup.policy': 'compact,delete',
        'auto.create.topics.enable': 'false',
        'num.partitions': '7',
        'log.segment.bytes': '2097152',
      });
      expect(c.isSet('num.partitions')).toBe(true);
      expect(c.isSet('num.io.threads')).toBe(false);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('unknown keys are accepted, kept and listed', () => {
    const c = KafkaConfig.load({ fileText: 'zookeeper.connect=localhost:2181\nnum.partitions=2\n', overrides: ['krill.thing=x'] });
    expect(c.unknownKeys()).toEqual(['zookeeper.connect', 'krill.thing']);
    expect(c.originals().get('zookeeper.connect')).toBe('localhost:2181');
  });

  test('tiered-storage plugin configs under the rsm / rlmm prefixes are not unknown keys', () => {
    const c = KafkaConfig.load({ fileText: 'rsm.config.dir=/tmp/tiered\nrlmm.config.remote.log.metadata.topic.replication.factor=1\nremote.log.storage.manager.impl.prefix=tiered.\ntiered.storage.s3.region=eu-west-1\n' });
    expect(c.unknownKeys()).toEqual(['rsm.config.dir']);
  });

  test('an override must be key=value; an empty value is allowed', () => {
    expect(() => KafkaConfig.load({ overrides: ['num.partitions'] })).toThrow("Invalid override 'num.partitions'");
    expect(KafkaConfig.load({ overrides: ['broker.rack='] }).getString('broker.rack')).toBe('');
  });
});

describe('defaults and typed getters', () => {
  const c = cfg();

  test('Kafka defaults, krill node id and roles', () => {
    expect(c.nodeId).toBe(1);
    expect(c.brokerId).toBe(1);
    expect(c.processRoles()).toEqual(['broker', 'controller']);
    expect(c.getInt('num.partitions')).toBe(1);
    expect(c.getInt('message.max.bytes')).toBe(1048588);
    expect(c.getShort('offsets.topic.replication.factor')).toBe(3);
    expect(c.getDouble('log.cleaner.min.cleanable.ratio')).toBe(0.5);
    expect(c.getString('compression.type')).toBe('producer');
    expect(c.getString('advertised.listeners')).toBeNull();
    expect(c.getList('sasl.enabled.mechanisms')).toEqual(['GSSAPI']);
    expect(c.logDirs()).toEqual(['/tmp/kafka-logs']);
    expect(c.metadataLogDir()).toBe('/tmp/kafka-logs');
  });

  test('longs: number for convenience, bigint when exactness matters', () => {
    expect(c.getLong('log.retention.check.interval.ms')).toBe(300000);
    expect(c.getLongExact('log.flush.interval.messages')).toBe(9223372036854775807n);
    expect(c.getLong('log.flush.interval.messages')).toBe(LONG_MAX_AS_NUMBER);
    expect(c.getLongOrNull('log.retention.ms')).toBeNull();
  });

  test('typed getters refuse the wrong type or an unknown key', () => {
    expect(() => c.getInt('log.retention.bytes')).toThrow('is of type long');
    expect(() => c.getString('no.such.key')).toThrow('Unknown broker config');
    expect(() => c.getLong('log.retention.ms')).toThrow('has no value');
  });
});

describe('derived values', () => {
  test('log.retention.ms > minutes > hours; negative means -1', () => {
    expect(cfg().logRetentionTimeMillis()).toBe(168 * HOUR);
    expect(cfg({ 'log.retention.hours': '1' }).logRetentionTimeMillis()).toBe(HOUR);
    expect(cfg({ 'log.retention.hours': '1', 'log.retention.minutes': '30' }).logRetentionTimeMillis()).toBe(30 * 60_000);
    expect(cfg({ 'log.retention.hours': '1', 'log.retention.minutes': '30', 'log.retention.ms': '1234' }).logRetentionTimeMillis()).toBe(1234);
    expect(cfg({ 'log.retention.ms': '-1' }).logRetentionTimeMillis()).toBe(-1);
    expect(cfg({ 'log.retention.hours': '-5' }).logRetentionTimeMillis()).toBe(-1);
  });

  test('log.roll.ms > log.roll.hours, jitter likewise, flush interval falls back to the scheduler interval', () => {
    expect(cfg().logRollTimeMillis()).toBe(168 * HOUR);
    expect(cfg({ 'log.roll.hours': '2' }).logRollTimeMillis()).toBe(2 * HOUR);
    expect(cfg({ 'log.roll.hours': '2', 'log.roll.ms': '5000' }).logRollTimeMillis()).toBe(5000);
    expect(cfg().logRollTimeJitterMillis()).toBe(0);
    expect(cfg({ 'log.roll.jitter.hours': '1' }).logRollTimeJitterMillis()).toBe(HOUR);
    expect(cfg().logFlushIntervalMs()).toBe(LONG_MAX_AS_NUMBER);
    expect(cfg({ 'log.flush.scheduler.interval.ms': '10' }).logFlushIntervalMs()).toBe(10);
    expect(cfg({ 'log.flush.scheduler.interval.ms': '10', 'log.flush.interval.ms': '20' }).logFlushIntervalMs()).toBe(20);
  });

  test('log.dirs wins over log.dir and is a comma list', () => {
    expect(cfg({ 'log.dir': '/one' }).logDirs()).toEqual(['/one']);
    expect(cfg({ 'log.dir': '/one', 'log.dirs': ' /a , /b,,/c ' }).logDirs()).toEqual(['/a', '/b', '/c']);
    expect(cfg({ 'log.dirs': '/a,/b', 'metadata.log.dir': '/meta' }).metadataLogDir()).toBe('/meta');
  });

  test('node.id and broker.id fill in each other and must agree', () => {
    expect(cfg({ 'broker.id': '4' }).nodeId).toBe(4);
    expect(cfg({ 'node.id': '5' }).brokerId).toBe(5);
    expect(() => cfg({ 'node.id': '5', 'broker.id': '6' })).toThrow('You must set `node.id` to the same value as `broker.id`.');
  });
});

describe('listeners', () => {
  test('the default listener binds every interface on 9092 and is advertised as is', () => {
    const c = cfg();
    expect(c.listeners()).toEqual([{ listenerName: 'PLAINTEXT', host: null, port: 9092, securityProtocol: 'PLAINTEXT' }]);
    expect(c.advertisedListeners()).toEqual(c.listeners());
    expect(c.interBrokerListenerName()).toBe('PLAINTEXT');
    expect(c.interBrokerSecurityProtocol()).toBe('PLAINTEXT');
  });

  test('the embedding API form: 127.0.0.1 on port 0', () => {
    const c = cfg({ listeners: 'PLAINTEXT://127.0.0.1:0' });
    expect(c.listeners()).toEqual([{ listenerName: 'PLAINTEXT', host: '127.0.0.1', port: 0, securityProtocol: 'PLAINTEXT' }]);
  });

  test('custom listener names need the protocol map; names are upper-cased; IPv6 brackets are dropped', () => {
    const c = cfg({
      listeners: 'client://0.0.0.0:9092,internal://[::1]:9093,CONTROLLER://:9094',
      'advertised.listeners': 'CLIENT://kafka.example:19092,INTERNAL://[::1]:9093',
      'listener.security.protocol.map': 'CLIENT:plaintext,INTERNAL:SSL,CONTROLLER:PLAINTEXT',
      'inter.broker.listener.name': 'internal',
      'controller.listener.names': 'CONTROLLER',
    });
    expect(c.listeners().map((e) => [e.listenerName, e.host, e.port, e.securityProtocol])).toEqual([
      ['CLIENT', '0.0.0.0', 9092, 'PLAINTEXT'],
      ['INTERNAL', '::1', 9093, 'SSL'],
      ['CONTROLLER', null, 9094, 'PLAINTEXT'],
    ]);
    expect(c.dataPlaneListeners().map((e) => e.listenerName)).toEqual(['CLIENT', 'INTERNAL']);
    expect(c.advertisedListeners().map((e) => `${e.listenerName}:${e.host}:${e.port}`)).toEqual(['CLIENT:kafka.example:19092', 'INTERNAL:::1:9093']);
    expect(c.interBrokerListenerName()).toBe('INTERNAL');
    expect(c.interBrokerSecurityProtocol()).toBe('SSL');
  });

  test('controller listeners get PLAINTEXT implicitly while the map is unset', () => {
    const c = cfg({ listeners: 'PLAINTEXT://:9092,CONTROLLER://:9093', 'controller.listener.names': 'CONTROLLER' });
    expect(c.listenerSecurityProtocolMap().get('CONTROLLER')).toBe('PLAINTEXT');
    expect(c.advertisedListeners().map((e) => e.listenerName)).toEqual(['PLAINTEXT']);
  });

  test('listener errors', () => {
    expect(() => cfg({ listeners: 'PLAINTEXT://localhost' })).toThrow('Unable to parse PLAINTEXT://localhost to a broker endpoint');
    expect(() => cfg({ listeners: 'CLIENT://:9092' })).toThrow('No security protocol defined for listener CLIENT');
    expect(() => cfg({ listeners: 'PLAINTEXT://:9092,PLAINTEXT://:9093' })).toThrow('Each listener must have a different name');
    expect(() => cfg({ listeners: 'PLAINTEXT://:9092,SSL://:9092' })).toThrow('Each listener must have a different port');
    expect(() => cfg({ listeners: 'PLAINTEXT://:70000' })).toThrow('out of range');
    // Port 0 may repeat; one IPv4 and one IPv6 listener may share a port.
    expect(() => cfg({ listeners: 'PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0' })).not.toThrow();
    expect(() => cfg({ listeners: 'PLAINTEXT://127.0.0.1:9092,SSL://[::1]:9092' })).not.toThrow();
  });

  test('advertised listener rules', () => {
    expect(() => cfg({ listeners: 'PLAINTEXT://0.0.0.0:9092' })).toThrow('cannot use the nonroutable meta-address 0.0.0.0');
    expect(() => cfg({ listeners: 'PLAINTEXT://0.0.0.0:9092', 'advertised.listeners': 'PLAINTEXT://localhost:9092' })).not.toThrow();
    expect(() => cfg({ 'advertised.listeners': 'SSL://localhost:9093' })).toThrow('inter.broker.listener.name must be a listener name defined in advertised.listeners');
    expect(() =>
      cfg({ listeners: 'PLAINTEXT://:9092', 'advertised.listeners': 'PLAINTEXT://h:9092,SSL://h:9093' }),
    ).toThrow('advertised.listeners listener names must be equal to or a subset of the ones defined in listeners');
    expect(() => cfg({ listeners: 'CONTROLLER://:9093', 'controller.listener.names': 'CONTROLLER' })).toThrow(
      'There must be at least one broker advertised listener',
    );
  });

  test('inter-broker listener rules', () => {
    expect(() => cfg({ 'inter.broker.listener.name': 'PLAINTEXT', 'security.inter.broker.protocol': 'PLAINTEXT' })).toThrow(
      'Only one of inter.broker.listener.name and security.inter.broker.protocol should be set.',
    );
    expect(() => cfg({ 'inter.broker.listener.name': 'NOPE' })).toThrow('Listener with name NOPE defined in inter.broker.listener.name not found');
    expect(() => cfg({ 'listener.security.protocol.map': 'PLAINTEXT:TLS' })).toThrow('Invalid security protocol `TLS`');
  });
});

describe('validation', () => {
  const expectConfigError = (props: Record<string, string>, name: string, message: string | RegExp) => {
    let err: unknown;
    try {
      cfg(props);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigException);
    expect((err as ConfigException).configName).toBe(name);
    expect((err as Error).message).toMatch(message);
  };

  test('types and ranges name the key', () => {
    expectConfigError({ 'num.partitions': 'two' }, 'num.partitions', 'Invalid value two for configuration num.partitions: Not a number of type INT');
    expectConfigError({ 'num.partitions': '0' }, 'num.partitions', 'Invalid value 0 for configuration num.partitions: Value must be at least 1');
    expectConfigError({ 'log.segment.bytes': '1048575' }, 'log.segment.bytes', 'Value must be at least 1048576');
    expectConfigError({ 'auto.create.topics.enable': 'yes' }, 'auto.create.topics.enable', 'Expected value to be either true or false');
    expectConfigError({ 'compression.type': 'brotli' }, 'compression.type', 'String must be one of: uncompressed, zstd, lz4, snappy, gzip, producer');
    expectConfigError({ 'log.cleanup.policy': 'delete,archive' }, 'log.cleanup.policy', 'Invalid value archive for configuration log.cleanup.policy');
    expectConfigError({ 'process.roles': 'broker,observer' }, 'process.roles', 'String must be one of: broker, controller');
    expectConfigError({ 'compression.zstd.level': '23' }, 'compression.zstd.level', 'Value must be no more than 22');
  });

  test('cross-key rules', () => {
    expectConfigError({ 'log.retention.ms': '0' }, 'log.retention.ms', 'log.retention.ms must be unlimited (-1) or, greater than or equal to 1');
    expectConfigError({ 'log.roll.ms': '0' }, 'log.roll.ms', 'log.roll.ms must be greater than or equal to 1');
    expectConfigError({ 'log.dirs': '' }, 'log.dirs', 'At least one log directory must be defined');
    expectConfigError({ 'process.roles': 'broker,broker' }, 'process.roles', 'Duplicate role names');
    expectConfigError({ 'replica.fetch.wait.max.ms': '40000' }, 'replica.socket.timeout.ms', 'replica.socket.timeout.ms should always be at least replica.fetch.wait.max.ms');
    expectConfigError({ 'queued.max.request.bytes': '1000' }, 'queued.max.request.bytes', 'must be larger or equal to socket.request.max.bytes');
    expectConfigError({ 'log.cleaner.dedupe.buffer.size': '1048576' }, 'log.cleaner.dedupe.buffer.size', 'at least 1MB per cleaner thread');
    expectConfigError({ 'group.coordinator.rebalance.protocols': 'consumer' }, 'group.coordinator.rebalance.protocols', "Disabling the 'CLASSIC' protocol");
    expectConfigError({ 'group.consumer.session.timeout.ms': '5000' }, 'group.consumer.session.timeout.ms', 'must be greater than or equal to group.consumer.min.session.timeout.ms');
    expectConfigError({ 'max.connections.per.ip': '0' }, 'max.connections.per.ip', 'can be set to zero only if');
  });

  test('required configs without krill defaults', () => {
    // node.id has a krill default; the required-key path is still Kafka's message.
    expect(ConfigException.missing('node.id').message).toBe('Missing required configuration "node.id" which has no default value.');
  });
});

describe('internal topics', () => {
  test('replication factor 3 is capped at the live brokers unless the user set it', () => {
    expect(cfg().internalTopicReplicationFactor('offsets.topic.replication.factor', 1)).toBe(1);
    expect(cfg().internalTopicReplicationFactor('offsets.topic.replication.factor', 5)).toBe(3);
    expect(cfg({ 'offsets.topic.replication.factor': '3' }).internalTopicReplicationFactor('offsets.topic.replication.factor', 1)).toBe(3);
  });

  test('topic specs', () => {
    expect(cfg().internalTopicSpec(OFFSETS_TOPIC, 1)).toEqual({
      name: '__consumer_offsets',
      numPartitions: 50,
      replicationFactor: 1,
      configs: { 'cleanup.policy': 'compact', 'compression.type': 'producer', 'segment.bytes': '104857600' },
    });
    const txn = cfg().internalTopicSpec(TRANSACTION_STATE_TOPIC, 1);
    expect(txn.replicationFactor).toBe(1);
    expect(txn.configs['min.insync.replicas']).toBe('1');
    expect(cfg().internalTopicSpec(TRANSACTION_STATE_TOPIC, 3).configs['min.insync.replicas']).toBe('2');
    expect(cfg({ 'transaction.state.log.min.isr': '2' }).internalTopicSpec(TRANSACTION_STATE_TOPIC, 1).configs['min.insync.replicas']).toBe('2');
  });
});

describe('DescribeConfigs for the broker', () => {
  const byName = (c: KafkaConfig, opts = { includeSynonyms: true }) => new Map(c.describe(opts).map((e) => [e.name, e]));

  test('defaults: DEFAULT_CONFIG, value as Kafka prints it, read-only from the update mode', () => {
    const m = byName(cfg());
    expect(m.get('num.partitions')).toEqual({
      name: 'num.partitions',
      value: '1',
      readOnly: true,
      isDefault: true,
      source: ConfigSource.DEFAULT_CONFIG,
      isSensitive: false,
      synonyms: [{ name: 'num.partitions', value: '1', source: ConfigSource.DEFAULT_CONFIG }],
      configType: ConfigType.INT,
      documentation: null,
    });
    expect(m.get('log.retention.ms')).toMatchObject({ value: null, readOnly: false, source: ConfigSource.DEFAULT_CONFIG, synonyms: [] });
    expect(m.get('log.cleaner.io.max.bytes.per.second')!.value).toBe('1.7976931348623157E308');
    expect(m.get('log.flush.interval.messages')!.value).toBe('9223372036854775807');
    expect(m.get('unstable.api.versions.enable')).toBeUndefined(); // internal
    expect(m.get('ssl.keystore.password')).toMatchObject({ isSensitive: true, value: null, configType: ConfigType.PASSWORD });
  });

  test('static values: STATIC_BROKER_CONFIG first, then the default', () => {
    const m = byName(cfg({ 'num.partitions': '3', 'log.retention.hours': '24', 'ssl.key.password': 'hush', 'custom.key': 'v' }));
    expect(m.get('num.partitions')).toMatchObject({
      value: '3',
      isDefault: false,
      source: ConfigSource.STATIC_BROKER_CONFIG,
      synonyms: [
        { name: 'num.partitions', value: '3', source: ConfigSource.STATIC_BROKER_CONFIG },
        { name: 'num.partitions', value: '1', source: ConfigSource.DEFAULT_CONFIG },
      ],
    });
    expect(m.get('log.retention.hours')!.synonyms).toEqual([
      { name: 'log.retention.hours', value: '24', source: ConfigSource.STATIC_BROKER_CONFIG },
      { name: 'log.retention.hours', value: '168', source: ConfigSource.DEFAULT_CONFIG },
    ]);
    expect(m.get('ssl.key.password')).toMatchObject({
      value: null,
      isSensitive: true,
      source: ConfigSource.STATIC_BROKER_CONFIG,
      synonyms: [{ name: 'ssl.key.password', value: null, source: ConfigSource.STATIC_BROKER_CONFIG }],
    });
    expect(m.get('custom.key')).toMatchObject({ value: null, isSensitive: true, readOnly: true, configType: ConfigType.UNKNOWN, source: ConfigSource.STATIC_BROKER_CONFIG });
  });

  test('names filter, documentation, no synonyms unless asked', () => {
    const list = cfg().describe({ names: ['num.partitions', 'nope'], includeDocumentation: true });
    expect(list.map((e) => e.name)).toEqual(['num.partitions']);
    expect(list[0].documentation).toMatch(/partitions/i);
    expect(list[0].synonyms).toEqual([]);
  });

  test('dynamic layers take precedence for dynamic configs and report their sources', () => {
    const c = cfg({ 'log.retention.ms': '1000', 'message.max.bytes': '2000000' }).withDynamicConfigs({
      perBroker: { 'log.retention.ms': '2000' },
      clusterDefault: { 'log.retention.ms': '3000', 'message.max.bytes': '3000000' },
    });
    expect(c.logRetentionTimeMillis()).toBe(2000);
    expect(c.getInt('message.max.bytes')).toBe(3000000);
    const m = byName(c);
    expect(m.get('log.retention.ms')!.synonyms.map((s) => [s.name, s.source, s.value])).toEqual([
      ['log.retention.ms', ConfigSource.DYNAMIC_BROKER_CONFIG, '2000'],
      ['log.retention.ms', ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG, '3000'],
      ['log.retention.ms', ConfigSource.STATIC_BROKER_CONFIG, '1000'],
      ['log.retention.hours', ConfigSource.DEFAULT_CONFIG, '168'],
    ]);
    expect(c.describeClusterDefaults({ includeSynonyms: true }).map((e) => [e.name, e.value, e.source])).toEqual([
      ['log.retention.ms', '3000', ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG],
      ['message.max.bytes', '3000000', ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG],
    ]);
    expect(() => cfg().withDynamicConfigs({ perBroker: { 'num.partitions': '2' } })).toThrow('Cannot update these configs dynamically: num.partitions');
  });
});
