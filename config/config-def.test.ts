import { BROKER_CONFIG_DEFS, brokerConfigDef, effectiveBrokerDefault, isDynamicBrokerConfig, KRILL_DEFAULT_OVERRIDES } from './config-def';
import {
  atLeast,
  between,
  ConfigException,
  ConfigSource,
  ConfigType,
  configTypeId,
  formatValue,
  gzipLevel,
  javaNumberToString,
  listOf,
  oneOf,
  parseAndValidate,
  parseValue,
  REQUIRED,
  throttledReplicaList,
} from './config-types';
import { TOPIC_CONFIG_DEFS, TOPIC_CONFIG_NAMES, topicConfigDef } from './topic-config-def';
import { brokerConfigSynonyms, serverSynonym, TOPIC_CONFIG_SYNONYMS } from './topic-config-synonyms';

describe('parseValue (ConfigDef.parseType)', () => {
  test('booleans are case-insensitive and trimmed', () => {
    expect(parseValue('x', 'boolean', ' TRUE ')).toBe(true);
    expect(parseValue('x', 'boolean', 'False')).toBe(false);
    expect(() => parseValue('x', 'boolean', 'yes')).toThrow('Invalid value yes for configuration x: Expected value to be either true or false');
  });

  test('ints and shorts: Java integer syntax and range', () => {
    expect(parseValue('x', 'int', ' -12 ')).toBe(-12);
    expect(parseValue('x', 'int', '+7')).toBe(7);
    expect(parseValue('x', 'int', '2147483647')).toBe(2147483647);
    expect(() => parseValue('x', 'int', '2147483648')).toThrow('Not a number of type INT');
    expect(() => parseValue('x', 'int', '1.5')).toThrow('Invalid value 1.5 for configuration x: Not a number of type INT');
    expect(() => parseValue('x', 'int', '0x10')).toThrow(ConfigException);
    expect(() => parseValue('x', 'int', '1_000')).toThrow(ConfigException);
    expect(parseValue('x', 'short', '32767')).toBe(32767);
    expect(() => parseValue('x', 'short', '32768')).toThrow('Not a number of type SHORT');
  });

  test('longs are exact bigints up to Long.MAX_VALUE', () => {
    expect(parseValue('x', 'long', '9223372036854775807')).toBe(9223372036854775807n);
    expect(parseValue('x', 'long', '-9223372036854775808')).toBe(-9223372036854775808n);
    expect(() => parseValue('x', 'long', '9223372036854775808')).toThrow('Not a number of type LONG');
  });

  test('doubles accept Java forms', () => {
    expect(parseValue('x', 'double', '0.5')).toBe(0.5);
    expect(parseValue('x', 'double', '1e3')).toBe(1000);
    expect(parseValue('x', 'double', '.25d')).toBe(0.25);
    expect(parseValue('x', 'double', '1.7976931348623157E308')).toBe(Number.MAX_VALUE);
    expect(() => parseValue('x', 'double', 'half')).toThrow('Not a number of type DOUBLE');
  });

  test('lists split on commas with surrounding blanks; empty string is the empty list', () => {
    expect(parseValue('x', 'list', ' a , b,c ')).toEqual(['a', 'b', 'c']);
    expect(parseValue('x', 'list', '')).toEqual([]);
    expect(parseValue('x', 'list', '   ')).toEqual([]);
    expect(parseValue('x', 'list', 'a,b,')).toEqual(['a', 'b', '']);
  });

  test('strings, classes and passwords are trimmed', () => {
    expect(parseValue('x', 'string', '  v  ')).toBe('v');
    expect(parseValue('x', 'password', ' secret ')).toBe('secret');
  });
});

describe('formatValue (ConfigDef.convertToString)', () => {
  test('Java number formatting', () => {
    expect(javaNumberToString(0.5, 'double')).toBe('0.5');
    expect(javaNumberToString(1, 'double')).toBe('1.0');
    expect(javaNumberToString(Number.MAX_VALUE, 'double')).toBe('1.7976931348623157E308');
    expect(javaNumberToString(1e7, 'double')).toBe('1.0E7');
    expect(javaNumberToString(0.0001, 'double')).toBe('1.0E-4');
    expect(javaNumberToString(0.9, 'double')).toBe('0.9');
  });

  test('types', () => {
    expect(formatValue('long', 9223372036854775807n)).toBe('9223372036854775807');
    expect(formatValue('int', 42)).toBe('42');
    expect(formatValue('list', ['compact', 'delete'])).toBe('compact,delete');
    expect(formatValue('list', [])).toBe('');
    expect(formatValue('boolean', false)).toBe('false');
    expect(formatValue('string', null)).toBeNull();
  });
});

describe('validators (Kafka wording)', () => {
  test('range', () => {
    expect(() => atLeast(1).ensureValid('n', 0)).toThrow('Invalid value 0 for configuration n: Value must be at least 1');
    expect(() => between(1, 17).ensureValid('n', 18)).toThrow('Value must be no more than 17');
    expect(() => atLeast(0).ensureValid('n', -1n)).toThrow('Value must be at least 0');
    expect(() => atLeast(-1).ensureValid('n', -1n)).not.toThrow();
    expect(atLeast(1048576).describe()).toBe('[1048576,...]');
    expect(between(0, 1).describe()).toBe('[0,...,1]');
  });

  test('strings and lists', () => {
    expect(() => oneOf('CreateTime', 'LogAppendTime').ensureValid('t', 'createtime')).toThrow(
      'Invalid value createtime for configuration t: String must be one of: CreateTime, LogAppendTime',
    );
    expect(() => listOf('compact', 'delete').ensureValid('p', ['delete', 'nope'])).toThrow('Invalid value nope for configuration p');
    expect(() => listOf('compact', 'delete').ensureValid('p', [])).not.toThrow();
  });

  test('gzip level and throttled replicas', () => {
    expect(() => gzipLevel.ensureValid('g', -1)).not.toThrow();
    expect(() => gzipLevel.ensureValid('g', 0)).toThrow('Value must be between 1 and 9, or -1');
    expect(() => throttledReplicaList.ensureValid('r', ['*'])).not.toThrow();
    expect(() => throttledReplicaList.ensureValid('r', ['0:1', '1:2'])).not.toThrow();
    expect(() => throttledReplicaList.ensureValid('r', ['0-1'])).toThrow("must be the literal '*'");
  });
});

describe('broker config table', () => {
  test('names are unique and every default parses and passes its own validator', () => {
    const names = BROKER_CONFIG_DEFS.map((d) => d.name);
    expect(new Set(names).size).toBe(names.length);
    for (const d of BROKER_CONFIG_DEFS) {
      const dflt = effectiveBrokerDefault(d);
      if (dflt === REQUIRED) continue;
      expect(() => parseAndValidate(d, dflt)).not.toThrow();
    }
  });

  test('the brief\'s keys are all there', () => {
    const required = [
      'node.id', 'broker.id', 'process.roles', 'listeners', 'advertised.listeners', 'listener.security.protocol.map',
      'inter.broker.listener.name', 'controller.listener.names', 'controller.quorum.voters', 'controller.quorum.bootstrap.servers',
      'log.dirs', 'log.dir', 'num.partitions', 'default.replication.factor', 'auto.create.topics.enable', 'delete.topic.enable',
      'message.max.bytes', 'replica.fetch.max.bytes', 'socket.request.max.bytes', 'socket.send.buffer.bytes',
      'socket.receive.buffer.bytes', 'num.network.threads', 'num.io.threads', 'queued.max.requests', 'log.segment.bytes',
      'log.roll.ms', 'log.roll.hours', 'log.roll.jitter.ms', 'log.roll.jitter.hours', 'log.index.size.max.bytes',
      'log.index.interval.bytes', 'log.retention.ms', 'log.retention.minutes', 'log.retention.hours', 'log.retention.bytes',
      'log.retention.check.interval.ms', 'log.segment.delete.delay.ms', 'log.flush.interval.messages', 'log.flush.interval.ms',
      'log.flush.scheduler.interval.ms', 'log.cleanup.policy', 'log.cleaner.enable', 'log.cleaner.threads',
      'log.message.timestamp.type', 'log.message.timestamp.before.max.ms', 'log.message.timestamp.after.max.ms',
      'log.preallocate', 'compression.type', 'compression.gzip.level', 'compression.lz4.level', 'compression.zstd.level',
      'min.insync.replicas', 'unclean.leader.election.enable', 'num.recovery.threads.per.data.dir',
      'offsets.topic.num.partitions', 'offsets.topic.replication.factor', 'offsets.topic.segment.bytes',
      'offsets.retention.minutes', 'offsets.retention.check.interval.ms', 'offsets.commit.timeout.ms',
      'group.initial.rebalance.delay.ms', 'group.min.session.timeout.ms', 'group.max.session.timeout.ms', 'group.max.size',
      'transaction.state.log.num.partitions', 'transaction.state.log.replication.factor', 'transaction.state.log.min.isr',
      'transaction.max.timeout.ms', 'transactional.id.expiration.ms', 'producer.id.expiration.ms',
      'transaction.abort.timed.out.transaction.cleanup.interval.ms', 'replica.lag.time.max.ms', 'replica.fetch.wait.max.ms',
      'replica.fetch.min.bytes', 'num.replica.fetchers', 'auto.leader.rebalance.enable', 'leader.imbalance.check.interval.seconds',
      'controlled.shutdown.enable', 'broker.heartbeat.interval.ms', 'broker.session.timeout.ms', 'fetch.max.bytes',
      'max.incremental.fetch.session.cache.slots', 'fetch.purgatory.purge.interval.requests',
      'producer.purgatory.purge.interval.requests', 'metadata.log.dir', 'connections.max.idle.ms', 'request.timeout.ms',
      'sasl.enabled.mechanisms', 'ssl.keystore.location', 'ssl.client.auth', 'unstable.api.versions.enable',
    ];
    for (const name of required) expect(brokerConfigDef(name)).toBeDefined();
  });

  test('Kafka 4.0 defaults that changed or are easy to get wrong', () => {
    const dflt = (n: string) => brokerConfigDef(n)!.default;
    expect(dflt('num.recovery.threads.per.data.dir')).toBe('2'); // KIP-1030
    expect(dflt('log.message.timestamp.after.max.ms')).toBe('3600000'); // KIP-1030
    expect(brokerConfigDef('log.segment.bytes')!.validator!.describe()).toBe('[1048576,...]'); // KIP-1030
    expect(dflt('message.max.bytes')).toBe('1048588');
    expect(dflt('fetch.max.bytes')).toBe('57671680');
    expect(dflt('log.retention.hours')).toBe('168');
    expect(dflt('log.retention.ms')).toBeNull();
    expect(dflt('offsets.topic.replication.factor')).toBe('3');
    expect(brokerConfigDef('offsets.topic.replication.factor')!.type).toBe('short');
    expect(dflt('transaction.state.log.min.isr')).toBe('2');
    expect(dflt('group.initial.rebalance.delay.ms')).toBe('3000');
    expect(dflt('listeners')).toBe('PLAINTEXT://:9092');
    expect(dflt('log.dir')).toBe('/tmp/kafka-logs');
    expect(dflt('node.id')).toBe(REQUIRED);
    expect(dflt('broker.id')).toBe('-1');
    // Removed in Kafka 4.0.
    for (const gone of ['log.message.format.version', 'log.message.downconversion.enable', 'leader.imbalance.per.broker.percentage',
      'offsets.commit.required.acks', 'zookeeper.connect', 'inter.broker.protocol.version']) {
      expect(brokerConfigDef(gone)).toBeUndefined();
    }
  });

  test("tiered storage plugin rows: Kafka 4.0's defaults, validators and update modes", () => {
    const d = (n: string) => brokerConfigDef(n)!;
    const dflt = (n: string) => parseAndValidate(d(n), d(n).default as string);
    expect(d('remote.log.storage.manager.class.name').default).toBeNull();
    expect(d('remote.log.storage.manager.class.path').default).toBeNull();
    expect(d('remote.log.storage.manager.impl.prefix').default).toBe('rsm.config.');
    expect(d('remote.log.metadata.manager.class.name').default).toBe('org.apache.kafka.server.log.remote.metadata.storage.TopicBasedRemoteLogMetadataManager');
    expect(d('remote.log.metadata.manager.impl.prefix').default).toBe('rlmm.config.');
    expect(() => parseAndValidate(d('remote.log.storage.manager.impl.prefix'), '')).toThrow(ConfigException);
    expect(dflt('remote.log.manager.task.interval.ms')).toBe(30000n);
    expect(dflt('remote.log.manager.copy.max.bytes.per.second')).toBe(9223372036854775807n);
    expect(dflt('remote.log.manager.fetch.max.bytes.per.second')).toBe(9223372036854775807n);
    expect(dflt('remote.log.index.file.cache.total.size.bytes')).toBe(1073741824n);
    expect(dflt('remote.log.reader.threads')).toBe(10);
    // KIP-1030 (4.0): -1 ("use remote.log.manager.thread.pool.size") is gone, the pools default to 10.
    for (const pool of ['remote.log.manager.copier.thread.pool.size', 'remote.log.manager.expiration.thread.pool.size']) {
      expect(dflt(pool)).toBe(10);
      expect(() => parseAndValidate(d(pool), '-1')).toThrow(ConfigException);
    }
    expect(['remote.log.manager.copy.max.bytes.per.second', 'remote.log.manager.fetch.max.bytes.per.second', 'remote.log.index.file.cache.total.size.bytes'].map(isDynamicBrokerConfig)).toEqual([true, true, true]);
    expect(isDynamicBrokerConfig('remote.log.storage.manager.class.name')).toBe(false);
  });

  test('update modes', () => {
    expect(isDynamicBrokerConfig('log.retention.ms')).toBe(true);
    expect(brokerConfigDef('log.retention.ms')!.updateMode).toBe('cluster-wide');
    expect(brokerConfigDef('log.retention.hours')!.updateMode).toBe('read-only');
    expect(brokerConfigDef('listeners')!.updateMode).toBe('per-broker');
    expect(isDynamicBrokerConfig('num.partitions')).toBe(false);
    expect(isDynamicBrokerConfig('no.such.config')).toBe(false);
  });

  test('krill overrides only node.id, broker.id and process.roles', () => {
    expect(Object.keys(KRILL_DEFAULT_OVERRIDES).sort()).toEqual(['broker.id', 'node.id', 'process.roles']);
    expect(effectiveBrokerDefault(brokerConfigDef('node.id')!)).toBe('1');
  });
});

describe('topic config table and synonyms', () => {
  test('33 topic configs in Kafka 4.0, defaults valid', () => {
    expect(TOPIC_CONFIG_NAMES).toHaveLength(33);
    for (const d of TOPIC_CONFIG_DEFS) expect(() => parseAndValidate(d, d.default as string)).not.toThrow();
    for (const gone of ['message.format.version', 'message.downconversion.enable', 'message.timestamp.difference.max.ms']) {
      expect(topicConfigDef(gone)).toBeUndefined();
    }
    expect(topicConfigDef('segment.bytes')!.validator!.describe()).toBe('[14,...]');
  });

  test('every synonym names a real topic config and real broker configs of a compatible type', () => {
    for (const [topicName, syns] of TOPIC_CONFIG_SYNONYMS) {
      const t = topicConfigDef(topicName);
      expect(t).toBeDefined();
      for (const s of syns) {
        const b = brokerConfigDef(s.name);
        expect(b).toBeDefined();
        if (!s.unit) expect(b!.type === t!.type || (b!.type === 'int' && t!.type === 'long')).toBe(true);
      }
    }
  });

  test("Kafka's order of precedence", () => {
    expect(TOPIC_CONFIG_SYNONYMS.get('retention.ms')).toEqual([
      { name: 'log.retention.ms' },
      { name: 'log.retention.minutes', unit: 'minutes' },
      { name: 'log.retention.hours', unit: 'hours' },
    ]);
    expect(TOPIC_CONFIG_SYNONYMS.get('segment.ms')!.map((s) => s.name)).toEqual(['log.roll.ms', 'log.roll.hours']);
    expect(TOPIC_CONFIG_SYNONYMS.get('flush.ms')!.map((s) => s.name)).toEqual(['log.flush.interval.ms', 'log.flush.scheduler.interval.ms']);
    expect(serverSynonym('max.message.bytes')).toBe('message.max.bytes');
    expect(serverSynonym('min.cleanable.dirty.ratio')).toBe('log.cleaner.min.cleanable.ratio');
    expect(serverSynonym('remote.storage.enable')).toBeUndefined();
  });

  test('brokerConfigSynonyms groups', () => {
    expect(brokerConfigSynonyms('log.retention.hours', true)).toEqual(['log.retention.ms', 'log.retention.minutes', 'log.retention.hours']);
    expect(brokerConfigSynonyms('log.roll.ms', true)).toEqual(['log.roll.ms', 'log.roll.hours']);
    expect(brokerConfigSynonyms('log.flush.interval.ms', true)).toEqual(['log.flush.interval.ms', 'log.flush.scheduler.interval.ms']);
    expect(brokerConfigSynonyms('log.flush.scheduler.interval.ms', true)).toEqual(['log.flush.scheduler.interval.ms']);
    expect(brokerConfigSynonyms('listener.name.client.ssl.keystore.location', true)).toEqual([
      'listener.name.client.ssl.keystore.location',
      'ssl.keystore.location',
    ]);
    expect(brokerConfigSynonyms('num.partitions', true)).toEqual(['num.partitions']);
  });
});

describe('DescribeConfigs ids', () => {
  test('ConfigSource and ConfigType match Kafka', () => {
    expect(ConfigSource).toEqual({
      UNKNOWN: 0, DYNAMIC_TOPIC_CONFIG: 1, DYNAMIC_BROKER_CONFIG: 2, DYNAMIC_DEFAULT_BROKER_CONFIG: 3, STATIC_BROKER_CONFIG: 4,
      DEFAULT_CONFIG: 5, DYNAMIC_BROKER_LOGGER_CONFIG: 6, DYNAMIC_CLIENT_METRICS_CONFIG: 7, DYNAMIC_GROUP_CONFIG: 8,
    });
    expect(configTypeId('password')).toBe(ConfigType.PASSWORD);
    expect(configTypeId('list')).toBe(7);
    expect(configTypeId(undefined)).toBe(0);
  });
});
