/**
 * The admin CLI (`krill topics|groups|configs|acls|quorum`) against a running 2-broker cluster,
 * each answer compared with what KafkaJS 2.2.4's admin client says about the same cluster. Most
 * commands run in-process through adminMain (the code `krill <command>` runs); the `krill` binary
 * itself (dist/) runs `topics --list` and a CLI broker with `--create-topic`, so run
 * `npm run build` first.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Kafka, logLevel, Partitioners, type Admin, type Consumer, type Producer } from 'kafkajs';
import { startCluster, type RunningCluster } from '../../broker';
import { adminMain } from '../../broker/admin-cli/admin-main';
import { CollectedOutput } from '../../broker/admin-cli/tool-output';
import { FAST_CLUSTER_CONFIG, waitFor } from '../replication/helpers';
import { runNodeScript } from '../helpers/node-script';

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';

const REPO_ROOT = path.resolve(__dirname, '..', '..');
const CLI = path.join(REPO_ROOT, 'bin', 'krill.js');

let cluster: RunningCluster;
let kafka: Kafka;
let admin: Admin;
let bootstrap: string;

async function run(command: string, ...argv: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
  const o = new CollectedOutput();
  const code = await adminMain(command, ['--bootstrap-server', bootstrap, ...argv], o);
  return { code, out: o.out, err: o.err };
}

beforeAll(async () => {
  cluster = await startCluster({
    brokers: 2,
    logLevel: 'error',
    config: {
      ...FAST_CLUSTER_CONFIG,
      'offsets.topic.replication.factor': '1',
      'group.initial.rebalance.delay.ms': '0',
      'authorizer.class.name': 'org.apache.kafka.metadata.authorizer.StandardAuthorizer',
      'allow.everyone.if.no.acl.found': 'true',
    },
  });
  bootstrap = cluster.bootstrapServers.join(',');
  kafka = new Kafka({ clientId: 'admin-cli-test', brokers: cluster.bootstrapServers, logLevel: logLevel.NOTHING, retry: { retries: 8, initialRetryTime: 50, maxRetryTime: 500 } });
  admin = kafka.admin();
  await admin.connect();
}, 60_000);

afterAll(async () => {
  await admin?.disconnect();
  await cluster?.close();
});

describe('krill topics', () => {
  test('--create, --describe, --list, --alter and --delete agree with the KafkaJS admin', async () => {
    const created = await run('topics', '--create', '--topic', 'cli-t', '--partitions', '3', '--replication-factor', '2', '--config', 'cleanup.policy=compact', '--config', 'retention.ms=86400000');
    expect(created).toEqual({ code: 0, out: ['Created topic cli-t.'], err: [] });

    const md = await waitFor('KafkaJS sees cli-t', async () => {
      const m = await admin.fetchTopicMetadata({ topics: ['cli-t'] });
      return m.topics[0].partitions.length === 3 ? m : undefined;
    });
    const described = await run('topics', '--describe', '--topic', 'cli-t');
    expect(described.code).toBe(0);
    const [head, ...rows] = described.out;
    expect(head).toMatch(/^Topic: cli-t\tTopicId: [A-Za-z0-9_-]{22}\tPartitionCount: 3\tReplicationFactor: 2\tConfigs: /);
    const configs = head.split('\tConfigs: ')[1].split(',');
    expect(configs).toEqual(expect.arrayContaining(['cleanup.policy=compact', 'retention.ms=86400000']));
    const expected = [...md.topics[0].partitions]
      .sort((a, b) => a.partitionId - b.partitionId)
      .map((p) => `\tTopic: cli-t\tPartition: ${p.partitionId}\tLeader: ${p.leader}\tReplicas: ${p.replicas.join(',')}\tIsr: ${p.isr.join(',')}\tElr: N/A\tLastKnownElr: N/A`);
    expect(rows).toEqual(expected);

    const listed = await run('topics', '--list');
    expect(listed.out).toEqual([...(await admin.listTopics())].sort());
    expect((await run('topics', '--list', '--exclude-internal')).out).not.toContain('__consumer_offsets');
    expect((await run('topics', '--list', '--topic', 'cli-.*')).out).toEqual(['cli-t']);

    expect(await run('topics', '--alter', '--topic', 'cli-t', '--partitions', '5')).toEqual({ code: 0, out: [], err: [] });
    await waitFor('KafkaJS sees 5 partitions', async () => (await admin.fetchTopicMetadata({ topics: ['cli-t'] })).topics[0].partitions.length === 5);

    expect(await run('topics', '--delete', '--topic', 'cli-t')).toEqual({ code: 0, out: [], err: [] });
    await waitFor('KafkaJS no longer lists cli-t', async () => !(await admin.listTopics()).includes('cli-t'));
  }, 30_000);

  test('errors are reported as kafka-topics.sh reports them', async () => {
    await run('topics', '--create', '--topic', 'cli-dup', '--partitions', '1', '--replication-factor', '1');
    const again = await run('topics', '--create', '--topic', 'cli-dup', '--partitions', '1', '--replication-factor', '1');
    expect(again.code).toBe(1);
    expect(again.out).toEqual([expect.stringMatching(/^Error while executing topic command : .*already exists/)]);
    expect((await run('topics', '--create', '--topic', 'cli-dup', '--if-not-exists')).code).toBe(0);
    const missing = await run('topics', '--describe', '--topic', 'cli-nope');
    expect(missing).toEqual({ code: 1, out: ["Error while executing topic command : Topic 'cli-nope' does not exist as expected"], err: [] });
    expect((await run('topics', '--delete', '--topic', 'cli-nope', '--if-exists')).code).toBe(0);
    const usage = await run('topics', '--list', '--describe');
    expect(usage.code).toBe(2);
    expect((await run('topics', '--create', '--topic', 'x', '--partitions', 'many')).out).toEqual(['Error while executing topic command : invalid --partitions many (an integer from 1 to 2147483647)']);
  });
});

describe('krill groups', () => {
  let producer: Producer;
  let consumer: Consumer;

  beforeAll(async () => {
    await admin.createTopics({ topics: [{ topic: 'cli-g', numPartitions: 2, replicationFactor: 2 }] });
    producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
    await producer.connect();
    await producer.send({ topic: 'cli-g', messages: [0, 1, 2, 3, 4, 5].map((i) => ({ partition: i % 2, value: `m${i}` })) });
  }, 30_000);

  afterAll(async () => {
    await consumer?.disconnect();
    await producer?.disconnect();
  });

  test('--describe shows each partition with committed offset, log end and lag, as KafkaJS reports them', async () => {
    consumer = kafka.consumer({ groupId: 'cli-group', sessionTimeout: 6000, heartbeatInterval: 500 });
    await consumer.connect();
    await consumer.subscribe({ topic: 'cli-g', fromBeginning: true });
    let seen = 0;
    await consumer.run({ autoCommit: false, eachMessage: async () => void seen++ });
    await waitFor('six messages consumed', () => seen >= 6);
    // Commit partition 0 fully and partition 1 only up to offset 1: a lag of 2 there.
    await consumer.commitOffsets([
      { topic: 'cli-g', partition: 0, offset: '3' },
      { topic: 'cli-g', partition: 1, offset: '1' },
    ]);
    await producer.send({ topic: 'cli-g', messages: [{ partition: 0, value: 'late' }] });

    const d = await run('groups', '--describe', '--group', 'cli-group');
    expect(d.code).toBe(0);
    expect(d.out[0]).toBe('');
    const header = d.out[1].split(/\s+/);
    expect(header).toEqual(['GROUP', 'TOPIC', 'PARTITION', 'CURRENT-OFFSET', 'LOG-END-OFFSET', 'LAG', 'CONSUMER-ID', 'HOST', 'CLIENT-ID']);
    const rows = d.out.slice(2).map((l) => l.trim().split(/\s+/));

    const committed = await admin.fetchOffsets({ groupId: 'cli-group', topics: ['cli-g'] });
    const ends = await admin.fetchTopicOffsets('cli-g');
    const group = (await admin.describeGroups(['cli-group'])).groups[0];
    expect(group.members).toHaveLength(1);
    const member = group.members[0];
    const expected = [0, 1].map((p) => {
      const cur = committed[0].partitions.find((x) => x.partition === p)!.offset;
      const end = ends.find((x) => x.partition === p)!.high;
      return ['cli-group', 'cli-g', String(p), cur, end, String(Number(end) - Number(cur)), member.memberId, member.clientHost, member.clientId];
    });
    expect(rows).toEqual(expected);
    expect(rows.map((r) => r[5])).toEqual(['1', '2']);

    // --members and --state.
    const m = await run('groups', '--describe', '--group', 'cli-group', '--members');
    expect(m.out.slice(1).map((l) => l.trim().split(/\s+/))).toEqual([
      ['GROUP', 'CONSUMER-ID', 'HOST', 'CLIENT-ID', '#PARTITIONS'],
      ['cli-group', member.memberId, member.clientHost, member.clientId, '2'],
    ]);
    const s = await run('groups', '--describe', '--group', 'cli-group', '--state');
    expect(s.out[2]).toMatch(new RegExp(`^cli-group\\s+\\S+:\\d+ \\(\\d+\\)\\s+${group.protocol}\\s+Stable\\s+1$`));

    const listed = await run('groups', '--list');
    expect(listed.out).toEqual((await admin.listGroups()).groups.map((g) => g.groupId).sort());
  }, 40_000);

  test('an empty group: the note on stderr, rows without a consumer; --delete; an unknown group', async () => {
    await consumer.disconnect();
    await waitFor('the group is empty', async () => (await admin.describeGroups(['cli-group'])).groups[0].state === 'Empty');
    const d = await run('groups', '--describe', '--group', 'cli-group');
    expect(d.err).toEqual(["\nConsumer group 'cli-group' has no active members."]);
    expect(d.out.slice(2).map((l) => l.trim().split(/\s+/))).toEqual([
      ['cli-group', 'cli-g', '0', '3', '4', '1', '-', '-', '-'],
      ['cli-group', 'cli-g', '1', '1', '3', '2', '-', '-', '-'],
    ]);
    expect(await run('groups', '--delete', '--group', 'cli-group')).toEqual({ code: 0, out: ["Deletion of requested consumer groups ('cli-group') was successful."], err: [] });
    expect((await admin.listGroups()).groups.map((g) => g.groupId)).not.toContain('cli-group');
    const unknown = await run('groups', '--describe', '--group', 'cli-group');
    expect(unknown).toEqual({ code: 1, out: [], err: ["Error: Consumer group 'cli-group' does not exist."] });
  }, 30_000);
});

describe('krill configs', () => {
  test('--alter --add-config / --delete-config and --describe agree with KafkaJS describeConfigs', async () => {
    await admin.createTopics({ topics: [{ topic: 'cli-c', numPartitions: 1, replicationFactor: 1 }] });
    expect(await run('configs', '--alter', '--entity-type', 'topics', '--entity-name', 'cli-c', '--add-config', 'retention.ms=3600000,max.message.bytes=2000')).toEqual({
      code: 0,
      out: ['Completed updating config for topic cli-c.'],
      err: [],
    });
    const kjs = await admin.describeConfigs({ includeSynonyms: false, resources: [{ type: 2, name: 'cli-c', configNames: ['retention.ms', 'max.message.bytes'] }] });
    const values = Object.fromEntries(kjs.resources[0].configEntries.map((e) => [e.configName, e.configValue]));
    expect(values).toEqual({ 'retention.ms': '3600000', 'max.message.bytes': '2000' });
    const d = await run('configs', '--describe', '--entity-type', 'topics', '--entity-name', 'cli-c');
    expect(d.out[0]).toBe('Dynamic configs for topic cli-c are:');
    expect(d.out.slice(1).map((l) => l.split(' sensitive=')[0])).toEqual(['  max.message.bytes=2000', '  retention.ms=3600000']);
    // The synonyms are the broker's (DescribeConfigs include_synonyms), the topic's own first.
    expect(d.out[2]).toMatch(/^ {2}retention\.ms=3600000 sensitive=false synonyms=\{DYNAMIC_TOPIC_CONFIG:retention\.ms=3600000(, [A-Z_]+:[a-z.]+=\S*)*\}$/);
    const all = await run('configs', '--describe', '--entity-type', 'topics', '--entity-name', 'cli-c', '--all');
    expect(all.out[0]).toBe('All configs for topic cli-c are:');
    expect(all.out.some((l) => l.startsWith('  cleanup.policy=delete sensitive=false'))).toBe(true);

    expect((await run('configs', '--alter', '--entity-type', 'topics', '--entity-name', 'cli-c', '--delete-config', 'max.message.bytes')).code).toBe(0);
    expect((await run('configs', '--describe', '--entity-type', 'topics', '--entity-name', 'cli-c')).out.map((l) => l.split(' sensitive=')[0])).toEqual([
      'Dynamic configs for topic cli-c are:',
      '  retention.ms=3600000',
    ]);
    const bad = await run('configs', '--alter', '--entity-type', 'topics', '--entity-name', 'cli-c', '--delete-config', 'not.set');
    expect(bad.code).toBe(1);
    expect(bad.err[0]).toContain('Invalid config(s): not.set');
  }, 30_000);

  test('--entity-type groups: dynamic group configs altered, described and refused with Kafka\'s messages', async () => {
    expect(await run('configs', '--alter', '--entity-type', 'groups', '--entity-name', 'cli-g', '--add-config', 'consumer.heartbeat.interval.ms=6000,consumer.session.timeout.ms=50000')).toEqual({
      code: 0,
      out: ['Completed updating config for group cli-g.'],
      err: [],
    });
    const d = await run('configs', '--describe', '--entity-type', 'groups', '--entity-name', 'cli-g');
    expect(d.out).toEqual([
      'Dynamic configs for group cli-g are:',
      '  consumer.heartbeat.interval.ms=6000 sensitive=false synonyms={DYNAMIC_GROUP_CONFIG:consumer.heartbeat.interval.ms=6000}',
      '  consumer.session.timeout.ms=50000 sensitive=false synonyms={DYNAMIC_GROUP_CONFIG:consumer.session.timeout.ms=50000}',
    ]);
    const all = await run('configs', '--describe', '--entity-type', 'groups', '--entity-name', 'cli-g', '--all');
    expect(all.out).toContain('  share.record.lock.duration.ms=30000 sensitive=false synonyms={DEFAULT_CONFIG:share.record.lock.duration.ms=30000}');
    const bad = await run('configs', '--alter', '--entity-type', 'groups', '--entity-name', 'cli-g', '--add-config', 'consumer.heartbeat.interval.ms=1');
    expect(bad.code).toBe(1);
    expect(bad.err[0]).toContain('consumer.heartbeat.interval.ms must be greater than or equal to group.consumer.min.heartbeat.interval.ms');
    expect((await run('configs', '--alter', '--entity-type', 'groups', '--entity-name', 'cli-g', '--delete-config', 'consumer.heartbeat.interval.ms')).code).toBe(0);
    expect((await run('configs', '--describe', '--entity-type', 'groups', '--entity-name', 'cli-g')).out.map((l) => l.split(' sensitive=')[0])).toEqual([
      'Dynamic configs for group cli-g are:',
      '  consumer.session.timeout.ms=50000',
    ]);
  }, 30_000);
});

describe('krill acls', () => {
  test('--add, --list and --remove agree with KafkaJS describeAcls', async () => {
    const added = await run('acls', '--add', '--allow-principal', 'User:alice', '--operation', 'Read', '--operation', 'Describe', '--topic', 'cli-acl');
    expect(added.code).toBe(0);
    expect(added.out).toEqual([
      'Adding ACLs for resource `ResourcePattern(resourceType=TOPIC, name=cli-acl, patternType=LITERAL)`: ',
      ' \t(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)',
      '\t(principal=User:alice, host=*, operation=DESCRIBE, permissionType=ALLOW) ',
      '',
    ]);
    const kjs = await admin.describeAcls({ resourceType: 2, resourceName: 'cli-acl', resourcePatternType: 3, operation: 1, permissionType: 1 } as never);
    const kjsOps = kjs.resources.flatMap((r) => r.acls.map((a) => `${a.principal} ${a.host} ${a.operation} ${a.permissionType}`)).sort();
    expect(kjsOps).toEqual(['User:alice * 3 3', 'User:alice * 8 3']);
    const listed = await run('acls', '--list', '--topic', 'cli-acl');
    expect(listed.out[0]).toBe('Current ACLs for resource `ResourcePattern(resourceType=TOPIC, name=cli-acl, patternType=LITERAL)`: ');
    expect(listed.out.slice(1, -1).map((l) => l.trim()).sort()).toEqual([
      '(principal=User:alice, host=*, operation=DESCRIBE, permissionType=ALLOW)',
      '(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)',
    ]);
    expect((await run('acls', '--remove', '--topic', 'cli-acl')).code).toBe(1);
    expect((await run('acls', '--remove', '--force', '--allow-principal', 'User:alice', '--operation', 'Read', '--topic', 'cli-acl')).code).toBe(0);
    const after = await admin.describeAcls({ resourceType: 2, resourceName: 'cli-acl', resourcePatternType: 3, operation: 1, permissionType: 1 } as never);
    expect(after.resources.flatMap((r) => r.acls.map((a) => a.operation))).toEqual([8]);
    expect((await run('acls', '--remove', '--force', '--topic', 'cli-acl')).code).toBe(0);
    expect((await run('acls', '--list', '--topic', 'cli-acl')).out).toEqual([]);
  }, 30_000);
});

describe('krill quorum', () => {
  test('a single-node krill (no quorum) does not serve DescribeQuorum: UnsupportedVersionException', async () => {
    const q = await run('quorum', '--describe', '--status');
    expect(q.code).toBe(1);
    expect(q.err).toEqual([expect.stringMatching(/^Error while executing metadata quorum command: org.apache.kafka.common.errors.UnsupportedVersionException: The node at .* does not support DescribeQuorum \(API 55\)/)]);
  });
});

describe('the krill binary', () => {
  test('krill topics --list prints what the in-process command prints', async () => {
    const stdout = await runNodeScript(CLI, ['topics', '--bootstrap-server', bootstrap, '--list'], 20_000);
    expect(stdout.trim().split('\n')).toEqual((await run('topics', '--list')).out);
  }, 30_000);

  test('krill --create-topic creates the topics before the ready line', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'krill-cli-topics-'));
    const child = spawn(process.execPath, [CLI, '--port', '0', '--data-dir', dir, '--log-level', 'error', '--create-topic', 'boot-a:3', '--create-topic', 'boot-b::1:cleanup.policy=compact'], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const ready = await new Promise<string>((resolve, reject) => {
        let out = '';
        const timer = setTimeout(() => reject(new Error(`no ready line within 20 s: ${out}`)), 20_000);
        child.stdout.setEncoding('utf8').on('data', (s: string) => {
          out += s;
          const line = out.split('\n').find((l) => l.startsWith('krill ready: '));
          if (line) {
            clearTimeout(timer);
            resolve(line);
          }
        });
        child.once('exit', (code) => reject(new Error(`krill exited with ${code} before the ready line`)));
      });
      const [, host, port] = /PLAINTEXT:\/\/([^\s:]+):(\d+)/.exec(ready)!;
      const o = new CollectedOutput();
      expect(await adminMain('topics', ['--bootstrap-server', `${host}:${port}`, '--describe', '--topic', 'boot-.*'], o)).toBe(0);
      expect(o.out.filter((l) => l.startsWith('Topic: ')).map((l) => l.replace(/\tTopicId: \S+/, ''))).toEqual([
        'Topic: boot-a\tPartitionCount: 3\tReplicationFactor: 1\tConfigs: ',
        'Topic: boot-b\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: cleanup.policy=compact',
      ]);
    } finally {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 40_000);
});
