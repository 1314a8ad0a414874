/**
 * The admin tools' pieces without a cluster: option parsing, Kafka's include-list topic filter,
 * ACL operation names, the offsets table layout and the quorum status block (krill's brokers do
 * not serve DescribeQuorum, so the block is checked on a response built here), --reset-offsets'
 * date, duration and option checks, quota values as Java prints them, and --command-config's
 * refusals.
 */
import { parseConfigPairs, parseToolArgs } from './tool-args';
import { topicFilter } from './topics-command';
import { parseOperation } from './acls-command';
import { formatOffsetRows } from './groups-command';
import { formatQuorumStatus } from './quorum-command';
import { parseBootstrapServers, ToolError } from './admin-connection';
import { adminMain, isAdminCommand } from './admin-main';
import { CollectedOutput } from './tool-output';
import { checkResetOptions, formatResetPlan, parseDateTime, parseDuration } from './groups-offsets';
import { entityNamesInOrder, javaDouble } from './configs-quotas';
import { commandConfigOf } from './command-config';

test('options: values, flags, repeats and their errors', () => {
  const a = parseToolArgs(['--topic', 't', '--list', '--config=a=b', '--config', 'c=d'], { '--topic': {}, '--list': { flag: true }, '--config': { repeatable: true } });
  expect([a.get('--topic'), a.has('--list'), a.all('--config')]).toEqual(['t', true, ['a=b', 'c=d']]);
  expect(() => parseToolArgs(['--nope'], {})).toThrow('unknown option --nope');
  expect(() => parseToolArgs(['--topic'], { '--topic': {} })).toThrow('--topic needs a value');
  expect(() => parseToolArgs(['--list=x'], { '--list': { flag: true } })).toThrow('--list takes no value');
  expect(() => parseToolArgs(['--topic', 'a', '--topic', 'b'], { '--topic': {} })).toThrow('--topic given twice');
  expect(() => parseToolArgs(['stray'], {})).toThrow('unexpected argument "stray"');
  expect([...parseConfigPairs(['a=1,b=x=y', 'c='], '--config')]).toEqual([['a', '1'], ['b', 'x=y'], ['c', '']]);
  expect(() => parseConfigPairs(['novalue'], '--config')).toThrow('invalid --config "novalue"');
  expect(parseBootstrapServers('a:1, b:2')).toEqual(['a:1', 'b:2']);
  expect(() => parseBootstrapServers('a')).toThrow(ToolError);
});

test('--topic is a whole-name regular expression; "," separates alternatives', () => {
  const f = topicFilter('orders.*,audit');
  expect(['orders', 'orders-eu', 'audit', 'audit2', 'xorders'].filter(f)).toEqual(['orders', 'orders-eu', 'audit']);
  expect(topicFilter(undefined)('anything')).toBe(true);
  expect(() => topicFilter('(')).toThrow('invalid --topic "("');
});

test('ACL operations by any of Kafka spellings', () => {
  expect(['Read', 'READ', 'IdempotentWrite', 'describe_configs', 'All'].map(parseOperation)).toEqual([3, 3, 12, 10, 2]);
  expect(() => parseOperation('Fly')).toThrow('invalid --operation Fly');
  expect(() => parseOperation('Any')).toThrow('invalid --operation Any');
});

test('the offsets table pads like ConsumerGroupCommand (15 wide at least, 10 for PARTITION)', () => {
  const lines = formatOffsetRows([{ group: 'g', topic: 'a-very-long-topic-name', partition: '0', currentOffset: '5', logEndOffset: '7', lag: '2', consumerId: 'c-1', host: '/127.0.0.1', clientId: 'app' }]);
  expect(lines).toEqual([
    'GROUP           TOPIC                  PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             CONSUMER-ID     HOST            CLIENT-ID',
    'g               a-very-long-topic-name 0          5               7               2               c-1             /127.0.0.1      app',
  ]);
});

test('the quorum status block', () => {
  const voter = (replicaId: number, logEndOffset: bigint, lastCaughtUpTimestamp: bigint) => ({ replicaId, replicaDirectoryId: 'AAAAAAAAAAAAAAAAAAAAAA', logEndOffset, lastFetchTimestamp: -1n, lastCaughtUpTimestamp });
  const lines = formatQuorumStatus('cid', {
    errorCode: 0,
    errorMessage: null,
    topics: [{ topicName: '__cluster_metadata', partitions: [{ partitionIndex: 0, errorCode: 0, errorMessage: null, leaderId: 1, leaderEpoch: 4, highWatermark: 100n, currentVoters: [voter(1, 100n, 5000n), voter(2, 90n, 4200n)], observers: [voter(7, 80n, -1n)] }] }],
    nodes: [{ nodeId: 1, listeners: [{ name: 'CONTROLLER', host: 'c1', port: 9093 }] }],
  });
  expect(lines).toEqual([
    'ClusterId:              cid',
    'LeaderId:               1',
    'LeaderEpoch:            4',
    'HighWatermark:          100',
    'MaxFollowerLag:         10',
    'MaxFollowerLagTimeMs:   800',
    'CurrentVoters:          [{"id": 1, "directoryId": null, "endpoints": ["CONTROLLER://c1:9093"]}, {"id": 2, "directoryId": null}]',
    'CurrentObservers:       [{"id": 7, "directoryId": null}]',
  ]);
});

test('usage errors exit 2, an unreachable cluster exits 1 with one line', async () => {
  expect(isAdminCommand('topics')).toBe(true);
  expect(isAdminCommand('dump-log')).toBe(false);
  const o = new CollectedOutput();
  expect(await adminMain('groups', ['--bogus'], o)).toBe(2);
  expect(o.err).toEqual(['Error: unknown option --bogus']);
  const t = new CollectedOutput();
  expect(await adminMain('groups', ['--bootstrap-server', '127.0.0.1:1', '--describe', '--group', 'g', '--topic', 't'], t)).toBe(2);
  expect(t.err).toEqual(['Error: Option "[topic]" can\'t be used with option "[describe]"']);
  const d = new CollectedOutput();
  expect(await adminMain('groups', ['--bootstrap-server', '127.0.0.1:1', '--delete-offsets', '--group', 'g'], d)).toBe(2);
  expect(d.err).toEqual(['Error: Option [delete-offsets] takes the following options: [group], [topic]']);
  const u = new CollectedOutput();
  expect(await adminMain('topics', ['--bootstrap-server', '127.0.0.1:1', '--list'], u)).toBe(1);
  expect(u.out).toEqual([expect.stringMatching(/^Error while executing topic command : cannot reach any bootstrap server \(127\.0\.0\.1:1: /)]);
});

test('--to-datetime and --by-duration parse as Kafka parses them', () => {
  expect(parseDateTime('2026-01-31T08:00:00.000')).toBe(Date.UTC(2026, 0, 31, 8));
  expect(parseDateTime('2026-01-31T08:00:00.000Z')).toBe(Date.UTC(2026, 0, 31, 8));
  expect(parseDateTime('2026-01-31T10:30:00.000+02:30')).toBe(Date.UTC(2026, 0, 31, 8));
  expect(parseDateTime('2026-01-31T03:00:00.000-0500')).toBe(Date.UTC(2026, 0, 31, 8));
  expect(() => parseDateTime('2026-01-31 08:00:00.000')).toThrow("It does not contain a 'T'");
  expect(() => parseDateTime('2026-02-30T08:00:00.000')).toThrow('Unparseable date');
  expect(parseDuration('PT1H')).toBe(3_600_000);
  expect(parseDuration('P1DT2H3M4.5S')).toBe(86_400_000 + 2 * 3_600_000 + 3 * 60_000 + 4_500);
  expect(parseDuration('-PT30M')).toBe(-1_800_000);
  for (const bad of ['1h', 'P', 'PT', 'P1H']) expect(() => parseDuration(bad)).toThrow('Text cannot be parsed to a Duration');
});

test('--reset-offsets option checks and the plan table', () => {
  const args = (...argv: string[]) =>
    parseToolArgs(argv, { '--group': { repeatable: true }, '--all-groups': { flag: true }, '--topic': { repeatable: true }, '--all-topics': { flag: true }, '--to-earliest': { flag: true }, '--to-latest': { flag: true }, '--to-offset': {}, '--dry-run': { flag: true }, '--execute': { flag: true } });
  expect(() => checkResetOptions(args('--group', 'g', '--topic', 't', '--to-earliest'))).not.toThrow();
  expect(() => checkResetOptions(args('--topic', 't', '--to-earliest'))).toThrow('Option [reset-offsets] takes one of these options: [all-groups], [group]');
  expect(() => checkResetOptions(args('--group', 'g', '--all-topics', '--topic', 't', '--to-latest'))).toThrow('"[all-topics]" can\'t be used with option "[topic]"');
  expect(() => checkResetOptions(args('--group', 'g', '--topic', 't', '--to-offset', '3', '--to-latest'))).toThrow('Option "[to-offset]" can\'t be used with option "[to-latest]"');
  expect(formatResetPlan(new Map())).toEqual(['']);
  expect(formatResetPlan(new Map([['g', new Map([['t\u00001', 7n], ['t\u00000', 5n]])]]))).toEqual([
    '',
    `${'GROUP'.padEnd(30)} ${'TOPIC'.padEnd(30)} ${'PARTITION'.padEnd(10)} ${'NEW-OFFSET'.padEnd(15)}`,
    `${'g'.padEnd(30)} ${'t'.padEnd(30)} ${'0'.padEnd(10)} ${'5'.padEnd(15)}`,
    `${'g'.padEnd(30)} ${'t'.padEnd(30)} ${'1'.padEnd(10)} ${'7'.padEnd(15)}`,
  ]);
});

test('quota values print as Java prints a double; entity names pair in command-line order', () => {
  expect([1024, 0.5, 50, 1e7, 12345678, 0, 1e-4].map(javaDouble)).toEqual(['1024.0', '0.5', '50.0', '1.0E7', '1.2345678E7', '0.0', '1.0E-4']);
  expect(entityNamesInOrder(['--entity-type', 'users', '--entity-default', '--entity-type', 'clients', '--entity-name', 'app'])).toEqual(['', 'app']);
  expect(entityNamesInOrder(['--entity-name=alice', '--entity-default'])).toEqual(['alice', '']);
});

test('--command-config: what it sets up and what it refuses', () => {
  expect(commandConfigOf(new Map(), 'f')).toEqual({ security: {} });
  const scram = commandConfigOf(
    new Map([
      ['security.protocol', 'sasl_plaintext'],
      ['sasl.mechanism', 'SCRAM-SHA-256'],
      ['sasl.jaas.config', 'org.apache.kafka.common.security.scram.ScramLoginModule required username="u" password="p";'],
      ['client.id', 'ops'],
    ]),
    'f',
  );
  expect([scram.security.tls, scram.security.sasl?.mechanism, scram.clientId]).toEqual([undefined, 'SCRAM-SHA-256', 'ops']);
  expect(scram.security.sasl!.newClient().initialResponse().toString()).toMatch(/^n,,n=u,r=/);
  const plain = commandConfigOf(new Map([['security.protocol', 'SASL_PLAINTEXT'], ['sasl.mechanism', 'PLAIN'], ['sasl.jaas.config', 'org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p";']]), 'f');
  expect(plain.security.sasl!.newClient().initialResponse()).toEqual(Buffer.from('\u0000u\u0000p'));
  const fail = (entries: [string, string][]) => () => commandConfigOf(new Map(entries), 'f');
  expect(fail([['security.protocol', 'TLS']])).toThrow('Invalid value TLS for configuration security.protocol: String must be one of: PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL');
  expect(fail([['security.protocol', 'SASL_PLAINTEXT'], ['sasl.mechanism', 'PLAIN']])).toThrow("Could not find a 'KafkaClient' entry in the JAAS configuration");
  expect(fail([['security.protocol', 'SASL_PLAINTEXT'], ['sasl.mechanism', 'PLAIN'], ['sasl.jaas.config', 'org.apache.kafka.common.security.scram.ScramLoginModule required username="u" password="p";']])).toThrow(
    'sasl.mechanism=PLAIN needs org.apache.kafka.common.security.plain.PlainLoginModule',
  );
  expect(fail([['security.protocol', 'SSL'], ['ssl.truststore.type', 'PEM'], ['ssl.truststore.location', '/nonexistent/ca.pem']])).toThrow(/^ssl\.truststore\.location \(f\)/);
  expect(fail([['request.timeout.ms', 'soon']])).toThrow('Invalid value soon for configuration request.timeout.ms');
});
