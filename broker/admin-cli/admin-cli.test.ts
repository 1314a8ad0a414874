/**
 * The admin tools' pieces without a cluster: option parsing, Kafka's include-list topic filter,
 * ACL operation names, the offsets table layout and the quorum status block (krill's brokers do
 * not serve DescribeQuorum, so the block is checked on a response built here).
 */
import { parseConfigPairs, parseToolArgs } from './tool-args';
import { topicFilter } from './topics-command';
import { parseOperation } from './acls-command';
import { formatOffsetRows } from './groups-command';
import { formatQuorumStatus } from './quorum-command';
import { parseBootstrapServers, ToolError } from './admin-connection';
import { adminMain, isAdminCommand } from './admin-main';
import { CollectedOutput } from './tool-output';

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
  const u = new CollectedOutput();
  expect(await adminMain('topics', ['--bootstrap-server', '127.0.0.1:1', '--list'], u)).toBe(1);
  expect(u.out).toEqual([expect.stringMatching(/^Error while executing topic command : cannot reach any bootstrap server \(127\.0\.0\.1:1: /)]);
});
