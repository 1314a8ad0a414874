/**
 * The public control API of an embedded broker (`startBroker(...).control`, docs/operations.md),
 * driven with KafkaJS 2.2.4 only through exported names: startup topics, error answers for the
 * next N requests and with a probability, a custom response, delay, drop, close, request recordings, pause/resume,
 * added latency, stop/start, and a failed storage write. Nothing here reaches into the server.
 */
import { Kafka, logLevel, Partitioners, type Admin, type Producer } from 'kafkajs';
import { startBroker, type RunningBroker } from '../../broker';
import { waitFor } from '../replication/helpers';
import { quietLogger } from '../recovery/helpers';
import type { ListOffsetsRequest } from '../../protocol/generated/list-offsets';

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';

let broker: RunningBroker;
let admin: Admin;
let producer: Producer;

function kafka(clientId: string, extra: { requestTimeout?: number; retries?: number } = {}): Kafka {
  return new Kafka({
    clientId,
    brokers: broker.bootstrapServers,
    logLevel: logLevel.NOTHING,
    connectionTimeout: 3_000,
    requestTimeout: extra.requestTimeout ?? 10_000,
    retry: { retries: extra.retries ?? 8, initialRetryTime: 50, maxRetryTime: 300 },
  });
}

/** The Kafka error name KafkaJS reports, under its retry wrapper. */
function kafkaJsErrorType(err: unknown): string | undefined {
  const e = err as { type?: string; cause?: { type?: string } } | undefined;
  return e?.type ?? e?.cause?.type;
}

beforeAll(async () => {
  broker = await startBroker({
    logLevel: 'error',
    config: { 'auto.create.topics.enable': false, 'offsets.topic.num.partitions': 1, 'group.initial.rebalance.delay.ms': 0 },
    topics: ['ctl-a:3', { name: 'ctl-b', partitions: 1, config: { 'cleanup.policy': 'compact' } }, 'ctl-c:2::retention.ms=3600000'],
  });
  admin = kafka('ctl-admin').admin();
  await admin.connect();
  producer = kafka('ctl-producer').producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
}, 30_000);

afterAll(async () => {
  await producer?.disconnect();
  await admin?.disconnect();
  await broker?.close();
});

afterEach(() => broker.control.clear());

test('startup topics exist before startBroker returns, with their partitions and configs', async () => {
  const md = await admin.fetchTopicMetadata({ topics: ['ctl-a', 'ctl-b', 'ctl-c'] });
  expect(md.topics.map((t) => [t.name, t.partitions.length]).sort()).toEqual([
    ['ctl-a', 3],
    ['ctl-b', 1],
    ['ctl-c', 2],
  ]);
  const cfg = await admin.describeConfigs({
    includeSynonyms: false,
    resources: [
      { type: 2, name: 'ctl-b', configNames: ['cleanup.policy'] },
      { type: 2, name: 'ctl-c', configNames: ['retention.ms'] },
    ],
  });
  expect(cfg.resources.map((r) => [r.resourceName, r.configEntries[0].configValue])).toEqual([
    ['ctl-b', 'compact'],
    ['ctl-c', '3600000'],
  ]);
});

test('an error for the next N produce requests of one partition: KafkaJS retries through it, the recording shows every attempt', async () => {
  const rec = broker.control.record({ api: 'Produce', topic: 'ctl-a', partition: 0 });
  const rule = broker.control.intercept({ api: 'Produce', topic: 'ctl-a', partition: 0 }, { error: 'NOT_LEADER_OR_FOLLOWER' }, { times: 2 });
  const [res] = await producer.send({ topic: 'ctl-a', messages: [{ partition: 0, value: 'after-two-errors' }] });
  expect(res.errorCode).toBe(0);
  await rule.done;
  expect(rule.hits).toBe(2);
  expect(rule.active).toBe(false);
  rec.stop();
  expect(rec.requests.length).toBe(3);
  expect(rec.requests.every((r) => r.apiName === 'Produce' && r.clientId === 'ctl-producer')).toBe(true);
  // Another partition was never affected.
  const [other] = await producer.send({ topic: 'ctl-a', messages: [{ partition: 1, value: 'untouched' }] });
  expect(other.errorCode).toBe(0);
});

test('an error with a probability hits a share of the requests; without retries the client sees the error', async () => {
  const noRetry = kafka('ctl-no-retry', { retries: 0 }).producer({ createPartitioner: Partitioners.DefaultPartitioner, retry: { retries: 0 } });
  await noRetry.connect();
  try {
    const rule = broker.control.intercept({ api: 'Produce', topic: 'ctl-a', partition: 2 }, { error: 'KAFKA_STORAGE_ERROR' }, { probability: 0.5 });
    let failures = 0;
    let successes = 0;
    for (let i = 0; i < 60 && (failures === 0 || successes === 0); i++) {
      try {
        await noRetry.send({ topic: 'ctl-a', messages: [{ partition: 2, value: `p-${i}` }] });
        successes++;
      } catch (err) {
        expect(kafkaJsErrorType(err)).toBe('KAFKA_STORAGE_ERROR');
        failures++;
      }
    }
    expect(failures).toBeGreaterThan(0);
    expect(successes).toBeGreaterThan(0);
    expect(rule.hits).toBe(failures);
  } finally {
    await noRetry.disconnect();
  }
});

test('a delay holds the request, then it is served normally', async () => {
  broker.control.intercept({ api: 'ListOffsets', topic: 'ctl-a' }, { delayMs: 400 }, { times: 1 });
  const t0 = Date.now();
  const offsets = await admin.fetchTopicOffsets('ctl-a');
  expect(Date.now() - t0).toBeGreaterThanOrEqual(380);
  expect(offsets).toHaveLength(3);
});

test('a custom response built from the request: KafkaJS reads the offsets the test made up', async () => {
  const rule = broker.control.intercept(
    { api: 'ListOffsets', topic: 'ctl-b' },
    {
      respond: (r) => {
        const req = r.body as ListOffsetsRequest;
        return { topics: req.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: 0, timestamp: -1n, offset: 1234n, leaderEpoch: 0 })) })) };
      },
    },
    { times: 1 },
  );
  expect(await admin.fetchTopicOffsets('ctl-b')).toEqual([expect.objectContaining({ partition: 0, high: '1234' })]);
  expect(rule.hits).toBe(1);
  expect((await admin.fetchTopicOffsets('ctl-b'))[0].high).not.toBe('1234');
});

test('a dropped request gets no answer: the client times out, the next request is served', async () => {
  const c = kafka('ctl-drop', { requestTimeout: 1_000 }).admin();
  await c.connect();
  try {
    const rule = broker.control.intercept({ api: 'ListOffsets', clientId: 'ctl-drop' }, 'drop', { times: 1 });
    const t0 = Date.now();
    await expect(c.fetchTopicOffsets('ctl-b')).rejects.toMatchObject({ name: 'KafkaJSRequestTimeoutError' });
    expect(rule.hits).toBe(1);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(900);
    expect(await c.fetchTopicOffsets('ctl-b')).toHaveLength(1);
  } finally {
    await c.disconnect();
  }
});

test('a closed connection: the client reconnects and retries', async () => {
  const rule = broker.control.intercept({ api: 'Produce', topic: 'ctl-b' }, 'close', { times: 1 });
  const [res] = await producer.send({ topic: 'ctl-b', messages: [{ key: 'k', value: 'after-close' }] });
  expect(res.errorCode).toBe(0);
  expect(rule.hits).toBe(1);
});

test('pause holds every request until resume', async () => {
  const rec = broker.control.record({ api: 'Metadata', clientId: 'ctl-admin' });
  broker.control.pause();
  expect(broker.control.paused).toBe(true);
  let settled = false;
  const pending = admin.fetchTopicMetadata({ topics: ['ctl-a'] }).finally(() => (settled = true));
  await waitFor('the held request to arrive', () => rec.requests.length > 0, 5_000);
  expect(settled).toBe(false);
  broker.control.resume();
  const md = await pending;
  expect(md.topics[0].partitions).toHaveLength(3);
  rec.stop();
});

test('slow adds latency to every request', async () => {
  broker.control.slow(300);
  const t0 = Date.now();
  await admin.fetchTopicMetadata({ topics: ['ctl-b'] });
  expect(Date.now() - t0).toBeGreaterThanOrEqual(280);
  broker.control.slow(0);
  const t1 = Date.now();
  await admin.fetchTopicMetadata({ topics: ['ctl-b'] });
  expect(Date.now() - t1).toBeLessThan(280);
});

test('stop and start: same port and data, clients reconnect', async () => {
  await producer.send({ topic: 'ctl-c', messages: [{ partition: 0, value: 'before-stop' }] });
  const port = broker.port;
  broker.control.pause(); // a stop releases it rather than waiting on held requests
  await broker.control.stop();
  expect(broker.control.paused).toBe(false);
  expect(broker.control.running).toBe(false);
  await broker.control.start();
  expect(broker.control.running).toBe(true);
  expect(broker.server.advertisedEndpoints[0].port).toBe(port);
  const offsets = await waitFor('offsets after the restart', async () => {
    const o = await admin.fetchTopicOffsets('ctl-c');
    return o.find((p) => p.partition === 0)?.high === '1' ? o : undefined;
  });
  expect(offsets.find((p) => p.partition === 0)!.high).toBe('1');
  // Rules survive the restart (the control is the broker's, not the server's).
  const rule = broker.control.intercept({ api: 'Produce', topic: 'ctl-c' }, { error: 'NOT_ENOUGH_REPLICAS' }, { times: 1 });
  const [res] = await producer.send({ topic: 'ctl-c', messages: [{ partition: 1, value: 'after-restart' }] });
  expect(res.errorCode).toBe(0);
  expect(rule.hits).toBe(1);
}, 30_000);

test('a failed segment write: the partition goes offline with KAFKA_STORAGE_ERROR, the failure is reported', async () => {
  const lines: string[] = [];
  const b = await startBroker({ logger: quietLogger(lines), topics: ['ctl-disk:1'] });
  const p = new Kafka({ clientId: 'ctl-disk', brokers: b.bootstrapServers, logLevel: logLevel.NOTHING, retry: { retries: 0 } }).producer({
    createPartitioner: Partitioners.DefaultPartitioner,
    retry: { retries: 0 },
  });
  await p.connect();
  try {
    b.control.failStorage({ op: 'write', file: 'log', topic: 'ctl-disk', partition: 0, errno: 'EIO' });
    expect(b.control.pendingStorageFaults).toBe(1);
    const err = await p.send({ topic: 'ctl-disk', messages: [{ value: 'x' }] }).then(() => undefined, (e: unknown) => e);
    expect(kafkaJsErrorType(err)).toBe('KAFKA_STORAGE_ERROR');
    expect(b.control.storageFaultsInjected).toEqual([expect.objectContaining({ op: 'write', errno: 'EIO', path: expect.stringMatching(/ctl-disk-0[/\\]0+\.log$/) })]);
    expect(b.control.pendingStorageFaults).toBe(0);
    expect(lines.some((l) => /log directory .* is offline: .*EIO: injected fault/.test(l))).toBe(true);
  } finally {
    await p.disconnect();
    await b.close();
  }
});

test('bad rules are refused with a clear error', () => {
  expect(() => broker.control.intercept({ api: 'Produce' }, { error: 'NOT_A_KAFKA_ERROR' })).toThrow('unknown Kafka error "NOT_A_KAFKA_ERROR"');
  expect(() => broker.control.failStorage({ op: 'write', file: 'journal' as never })).toThrow('unknown storage file kind "journal"');
});
