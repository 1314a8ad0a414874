/**
 * @platformatic/kafka 1.x with `groupProtocol: 'consumer'` (KIP-848): its consumer joins through
 * ConsumerGroupHeartbeat (recorded by the fault-injection recorder), gets all four partitions of a
 * topic from the server-side assignor, reads every record from the earliest offsets and commits
 * them at its member epoch; the group is a consumer group (ConsumerGroupDescribe), and its
 * committed offsets are the log end offsets.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Kafka, logLevel, Partitioners } from 'kafkajs';
import { startBroker, type RunningBroker } from '../../broker';
import { connect } from '../../client/network-client';
import { ErrorCode } from '../../protocol/errors';
import { disconnectAll } from '../helpers/kafkajs';
import { runNodeScript } from '../helpers/node-script';

jest.setTimeout(90_000);
process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';

const SCRIPT = path.join(__dirname, 'consume.mjs');
const TOPIC = 'pf-kip848';
const GROUP = 'pf-kip848-group';
let broker: RunningBroker;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'krill-pf-kip848-'));

beforeAll(async () => {
  broker = await startBroker({ logLevel: 'warn', config: { 'auto.create.topics.enable': false, 'offsets.topic.num.partitions': 1 } });
});

afterAll(async () => {
  await broker?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

test('a @platformatic/kafka consumer on the consumer protocol reads and commits a 4-partition topic', async () => {
  const kafka = new Kafka({ clientId: 'pf-kip848-setup', brokers: broker.bootstrapServers, logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 4 }], waitForLeaders: true });
  await admin.disconnect();
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner, allowAutoTopicCreation: false });
  await producer.connect();
  const values = Array.from({ length: 200 }, (_, i) => `pf-${i}`);
  await producer.send({ topic: TOPIC, acks: -1, messages: values.map((value, i) => ({ value, partition: i % 4 })) });
  await disconnectAll(producer);

  const rec = broker.control.record({ api: 'ConsumerGroupHeartbeat' });
  const out = path.join(tmp, 'read.json');
  let stdout: string;
  try {
    stdout = await runNodeScript(SCRIPT, [broker.bootstrapServers[0], TOPIC, GROUP, String(values.length), out, 'consumer', 'each'], 60_000);
  } finally {
    rec.stop();
  }
  expect(stdout).toBe(`ok ${values.length}\n`);
  const read = JSON.parse(fs.readFileSync(out, 'utf8')) as { partition: number; offset: string; value: string }[];
  expect(new Set(read.map((r) => r.value))).toEqual(new Set(values));
  expect(new Set(read.map((r) => r.partition))).toEqual(new Set([0, 1, 2, 3]));
  expect(rec.requests.length).toBeGreaterThan(0);

  const conn = await connect(broker.host, broker.port);
  try {
    const described = await conn.send('ConsumerGroupDescribe', 0, { groupIds: [GROUP], includeAuthorizedOperations: false });
    expect(described.groups[0].errorCode).toBe(ErrorCode.NONE);
    const fetched = await conn.send('OffsetFetch', 8, { groups: [{ groupId: GROUP, topics: [{ name: TOPIC, partitionIndexes: [0, 1, 2, 3] }] }], requireStable: false });
    const offsets = fetched.groups[0].topics[0].partitions.map((p) => [p.partitionIndex, Number(p.committedOffset)]).sort((a, b) => a[0] - b[0]);
    expect(offsets).toEqual([[0, 50], [1, 50], [2, 50], [3, 50]]);
  } finally {
    await conn.close();
  }
});
