/**
 * `krill groups --reset-offsets` and `--delete-offsets` against a running broker with a KafkaJS
 * 2.2.4 consumer group: an active group is refused with Kafka's message and keeps its offsets
 * (reset, and OffsetDelete of a subscribed topic);
 * once the group is empty every scenario's dry run prints the plan (checked against KafkaJS
 * admin's low / high watermarks and the produced timestamps) and changes nothing; --execute
 * --to-earliest makes a new consumer of the group read from offset 0; --delete-offsets removes the
 * committed offsets (KafkaJS then sees none).
 */
import { Kafka, logLevel, Partitioners, type Admin, type Consumer, type Producer } from 'kafkajs';
import { startBroker, type RunningBroker } from '../../broker';
import { adminMain } from '../../broker/admin-cli/admin-main';
import { CollectedOutput } from '../../broker/admin-cli/tool-output';
import { waitFor } from '../replication/helpers';

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';

const TOPIC = 'ro-orders';
const GROUP = 'ro-billing';
const PER_PARTITION = 5;

let broker: RunningBroker;
let kafka: Kafka;
let admin: Admin;
let producer: Producer;
let bootstrap: string;
/** The create time of the first record; record i of each partition is base + i s. */
let base: number;

async function run(...argv: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
  const o = new CollectedOutput();
  const code = await adminMain('groups', ['--bootstrap-server', bootstrap, ...argv], o);
  return { code, out: o.out, err: o.err };
}

/** The NEW-OFFSET rows of a plan as [group, topic, partition, offset]. */
function plan(out: string[]): string[][] {
  const i = out.findIndex((l) => l.startsWith('GROUP '));
  expect(out[i].split(/\s+/).filter((s) => s !== '')).toEqual(['GROUP', 'TOPIC', 'PARTITION', 'NEW-OFFSET']);
  expect(out[i - 1]).toBe('');
  return out.slice(i + 1).map((l) => l.trim().split(/\s+/));
}

async function committed(): Promise<Record<number, string>> {
  const [t] = await admin.fetchOffsets({ groupId: GROUP, topics: [TOPIC] });
  return Object.fromEntries(t.partitions.map((p) => [p.partition, p.offset]));
}

async function consumeAll(groupId: string): Promise<{ consumer: Consumer; seen: { partition: number; offset: string }[] }> {
  const consumer = kafka.consumer({ groupId, sessionTimeout: 6000, heartbeatInterval: 500 });
  await consumer.connect();
  await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
  const seen: { partition: number; offset: string }[] = [];
  await consumer.run({ eachMessage: async ({ partition, message }) => void seen.push({ partition, offset: message.offset }) });
  return { consumer, seen };
}

beforeAll(async () => {
  broker = await startBroker({ logLevel: 'error', config: { 'offsets.topic.replication.factor': '1', 'group.initial.rebalance.delay.ms': '0' } });
  bootstrap = broker.bootstrapServers.join(',');
  kafka = new Kafka({ clientId: 'reset-offsets', brokers: broker.bootstrapServers, logLevel: logLevel.NOTHING, retry: { retries: 8, initialRetryTime: 50, maxRetryTime: 500 } });
  admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 2 }] });
  producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  base = Date.now() - 60_000;
  for (let i = 0; i < PER_PARTITION; i++) {
    await producer.send({ topic: TOPIC, messages: [0, 1].map((partition) => ({ partition, value: `m${i}`, timestamp: String(base + i * 1000) })) });
  }
}, 60_000);

afterAll(async () => {
  await producer?.disconnect();
  await admin?.disconnect();
  await broker?.close();
});

test('an active group is refused with Kafka\'s message and keeps its offsets', async () => {
  const { consumer, seen } = await consumeAll(GROUP);
  try {
    await waitFor('all records consumed and committed', async () => seen.length === 2 * PER_PARTITION && Object.values(await committed()).every((o) => o === String(PER_PARTITION)));
    const refused = await run('--reset-offsets', '--group', GROUP, '--topic', TOPIC, '--to-earliest', '--execute');
    expect(refused.code).toBe(1);
    expect(refused.err).toEqual([`Error: Assignments can only be reset if the group '${GROUP}' is inactive, but the current state is Stable.`]);
    expect(refused.out).toEqual(['']);
    const subscribed = await run('--delete-offsets', '--group', GROUP, '--topic', `${TOPIC}:0`);
    expect(subscribed.code).toBe(1);
    expect(subscribed.err).toEqual(['Error: Encounter some partition level error, see the follow-up details:']);
    expect(subscribed.out[subscribed.out.length - 1]).toMatch(
      new RegExp(`^${TOPIC}\\s+0\\s+Error: :org\\.apache\\.kafka\\.common\\.errors\\.GroupSubscribedToTopicException: Deleting offsets of a topic is forbidden while the consumer group is actively subscribed to it\\.$`),
    );
    expect(await committed()).toEqual({ 0: '5', 1: '5' });
  } finally {
    await consumer.disconnect();
  }
  await waitFor('the group is empty', async () => (await admin.describeGroups([GROUP])).groups[0].state === 'Empty');
}, 30_000);

test('dry runs of every scenario print the plan and change nothing', async () => {
  const low = Object.fromEntries((await admin.fetchTopicOffsets(TOPIC)).map((p) => [p.partition, p.low]));
  const high = Object.fromEntries((await admin.fetchTopicOffsets(TOPIC)).map((p) => [p.partition, p.high]));
  expect(high).toEqual({ 0: '5', 1: '5' });

  const defaulted = await run('--reset-offsets', '--group', GROUP, '--topic', TOPIC, '--to-earliest');
  expect(defaulted.code).toBe(0);
  expect(defaulted.err[0]).toMatch(/^WARN: No action will be performed as the --execute option is missing/);
  expect(plan(defaulted.out)).toEqual([[GROUP, TOPIC, '0', low[0]], [GROUP, TOPIC, '1', low[1]]]);
  // Kafka's widths: %-30s %-30s %-10s %-15s.
  expect(defaulted.out[defaulted.out.length - 1]).toBe(`${GROUP.padEnd(30)} ${TOPIC.padEnd(30)} ${'1'.padEnd(10)} ${low[1].padEnd(15)}`);

  const dry = (...scenario: string[]) => run('--reset-offsets', '--group', GROUP, '--dry-run', ...scenario);
  expect(plan((await dry('--all-topics', '--to-latest')).out)).toEqual([[GROUP, TOPIC, '0', high[0]], [GROUP, TOPIC, '1', high[1]]]);
  expect(plan((await dry('--topic', `${TOPIC}:1`, '--to-offset', '2')).out)).toEqual([[GROUP, TOPIC, '1', '2']]);
  const clamped = await dry('--topic', `${TOPIC}:0`, '--to-offset', '99');
  expect(plan(clamped.out)).toEqual([[GROUP, TOPIC, '0', '5']]);
  expect(clamped.err).toEqual([`WARN New offset (99) is higher than latest offset for topic partition ${TOPIC}-0. Value will be set to 5`]);
  expect(plan((await dry('--all-topics', '--shift-by', '-2')).out)).toEqual([[GROUP, TOPIC, '0', '3'], [GROUP, TOPIC, '1', '3']]);
  expect(plan((await dry('--all-topics', '--shift-by', '-20')).out)).toEqual([[GROUP, TOPIC, '0', '0'], [GROUP, TOPIC, '1', '0']]);
  const at = new Date(base + 2500).toISOString().replace('Z', '');
  expect(plan((await dry('--topic', TOPIC, '--to-datetime', at)).out)).toEqual([[GROUP, TOPIC, '0', '3'], [GROUP, TOPIC, '1', '3']]);
  expect(plan((await dry('--topic', TOPIC, '--by-duration', 'PT1H')).out)).toEqual([[GROUP, TOPIC, '0', '0'], [GROUP, TOPIC, '1', '0']]);
  expect(plan((await dry('--topic', TOPIC, '--to-current')).out)).toEqual([[GROUP, TOPIC, '0', '5'], [GROUP, TOPIC, '1', '5']]);

  expect(await committed()).toEqual({ 0: '5', 1: '5' });
}, 30_000);

test('bad reset options are usage errors (exit 2) with Kafka\'s messages', async () => {
  expect(await run('--reset-offsets', '--group', GROUP, '--topic', TOPIC)).toEqual({
    code: 2,
    out: [],
    err: ["Error: Option '[reset-offsets]' requires one of the following scenarios: [to-offset, to-earliest, to-latest, shift-by, to-datetime, by-duration, to-current]"],
  });
  expect((await run('--reset-offsets', '--group', GROUP, '--topic', TOPIC, '--to-earliest', '--to-latest')).err).toEqual(['Error: Option "[to-earliest]" can\'t be used with option "[to-latest]"']);
  expect((await run('--reset-offsets', '--group', GROUP, '--to-earliest')).err).toEqual(['Error: One of the reset scopes should be defined: --all-topics, --topic.']);
  expect((await run('--reset-offsets', '--group', GROUP, '--topic', TOPIC, '--to-earliest', '--dry-run', '--execute')).err).toEqual(['Error: Option [reset-offsets] only accepts one of [execute] and [dry-run]']);
  expect((await run('--reset-offsets', '--group', GROUP, '--topic', TOPIC, '--by-duration', '1h')).code).toBe(2);
});

test('--execute --to-earliest: a new consumer of the group reads from offset 0', async () => {
  const executed = await run('--reset-offsets', '--group', GROUP, '--all-topics', '--to-earliest', '--execute');
  expect(executed.code).toBe(0);
  expect(executed.err).toEqual([]);
  expect(plan(executed.out)).toEqual([[GROUP, TOPIC, '0', '0'], [GROUP, TOPIC, '1', '0']]);
  expect(await committed()).toEqual({ 0: '0', 1: '0' });

  const { consumer, seen } = await consumeAll(GROUP);
  try {
    await waitFor('the group re-reads and commits every record', async () => seen.length >= 2 * PER_PARTITION && Object.values(await committed()).every((o) => o === String(PER_PARTITION)));
    for (const partition of [0, 1]) {
      expect(seen.filter((s) => s.partition === partition).map((s) => s.offset)).toEqual(['0', '1', '2', '3', '4']);
    }
  } finally {
    await consumer.disconnect();
  }
}, 30_000);

test('--delete-offsets removes the committed offsets of a topic', async () => {
  await waitFor('the group is empty', async () => (await admin.describeGroups([GROUP])).groups[0].state === 'Empty');
  const deleted = await run('--delete-offsets', '--group', GROUP, '--topic', TOPIC);
  expect(deleted.err).toEqual([]);
  expect(deleted.code).toBe(0);
  expect(deleted.out[0]).toBe(`Request succeed for deleting offsets with topic ${TOPIC} group ${GROUP}`);
  expect(deleted.out.slice(1).map((l) => l.trim().split(/\s+/))).toEqual([[''], ['TOPIC', 'PARTITION', 'STATUS'], [TOPIC, '0', 'Successful'], [TOPIC, '1', 'Successful']]);
  expect(await committed()).toEqual({ 0: '-1', 1: '-1' });

  const missing = await run('--delete-offsets', '--group', GROUP, '--topic', 'ro-nope');
  expect(missing.code).toBe(1);
  expect(missing.err).toEqual(['Error: Encounter some partition level error, see the follow-up details:']);
  expect(missing.out[missing.out.length - 1]).toMatch(/^ro-nope\s+Not Provided\s+Error: :org\.apache\.kafka\.common\.errors\.UnknownTopicOrPartitionException: This server does not host this topic-partition\.$/);
}, 30_000);
