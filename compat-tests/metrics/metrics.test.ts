/**
 * Metrics against real clients: a broker with metrics on (port 0) takes a KafkaJS produce /
 * consume / consumer-group workload, and /metrics, read with a real Prometheus text-format parser,
 * must show the counts that were sent (messages and bytes in, requests per API, log sizes and
 * offsets, partition and leader counts, the group's committed offsets and its lag), not just the
 * names. Then @platformatic/kafka's Admin changes the broker's log levels through BROKER_LOGGER.
 */
import * as path from 'node:path';
import { Kafka, logLevel, type Admin, type Consumer, type Producer } from 'kafkajs';
import { startBroker, type RunningBroker } from '../../broker';
import { Logger } from '../../common/logger';
import { scrape, type Scrape } from '../../broker/metrics/testing/scrape';
import { lastJsonLine, runNodeScript } from '../helpers/node-script';
import { disconnectAll } from '../helpers/kafkajs';
import { connect } from '../../client/network-client';

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';

const TOPIC = 'metrics-t';
const GROUP = 'metrics-g';
const SENDS = 20;
const PER_SEND = 10;
const MESSAGES = SENDS * PER_SEND;
const VALUE = 'v'.repeat(100);

let broker: RunningBroker;
let kafka: Kafka;
let admin: Admin | undefined;
let producer: Producer | undefined;
let consumer: Consumer | undefined;
const logLines: string[] = [];

beforeAll(async () => {
  broker = await startBroker({
    metricsPort: 0,
    config: { 'auto.create.topics.enable': false, 'offsets.topic.num.partitions': 2, 'group.initial.rebalance.delay.ms': 0 },
    logger: Logger.root('krill[1]', { level: 'warn', sink: (l) => logLines.push(l) }),
  });
  kafka = new Kafka({
    clientId: 'krill-compat-metrics',
    brokers: broker.bootstrapServers,
    logLevel: logLevel.NOTHING,
    connectionTimeout: 3_000,
    requestTimeout: 15_000,
    retry: { retries: 3, initialRetryTime: 100, maxRetryTime: 1_000 },
  });
});

afterAll(async () => {
  await disconnectAll(consumer, producer, admin);
  await broker?.close();
});

const metrics = (): Promise<Scrape> => scrape(broker.metricsAddress!);

test('produce, consume and a consumer group: the scraped values are the counts sent', async () => {
  expect(broker.metricsAddress).not.toBeNull();
  admin = kafka.admin();
  await admin.connect();
  // flush.messages=1: every append is fsynced, so LogFlushStats counts one flush per produce.
  await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 3, configEntries: [{ name: 'flush.messages', value: '1' }] }] });
  producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  const perPartition = [0, 0, 0];
  for (let i = 0; i < SENDS; i++) {
    const partition = i % 3;
    await producer.send({ topic: TOPIC, acks: -1, messages: Array.from({ length: PER_SEND }, (_, j) => ({ partition, key: `k${j}`, value: VALUE })) });
    perPartition[partition] += PER_SEND;
  }

  const s1 = await metrics();
  expect(s1.family('kafka_server_brokertopicmetrics_messagesin_total')?.type).toBe('COUNTER');
  expect(s1.value('kafka_server_brokertopicmetrics_messagesin_total', { topic: TOPIC })).toBe(MESSAGES);
  expect(s1.value('kafka_server_brokertopicmetrics_messagesin_total')).toBe(MESSAGES);
  expect(s1.value('kafka_server_brokertopicmetrics_totalproducerequests_total', { topic: TOPIC })).toBe(SENDS);
  expect(s1.value('kafka_server_brokertopicmetrics_failedproducerequests_total', { topic: TOPIC })).toBe(0);
  // Bytes in are the record batches appended: exactly what the partition logs hold.
  const logSize = s1.sum('kafka_log_log_size', { topic: TOPIC });
  expect(logSize).toBeGreaterThan(MESSAGES * VALUE.length);
  expect(s1.value('kafka_server_brokertopicmetrics_bytesin_total', { topic: TOPIC })).toBe(logSize);
  for (let p = 0; p < 3; p++) {
    expect(s1.value('kafka_log_log_logendoffset', { topic: TOPIC, partition: String(p) })).toBe(perPartition[p]);
    expect(s1.value('kafka_log_log_logstartoffset', { topic: TOPIC, partition: String(p) })).toBe(0);
    expect(s1.value('kafka_log_log_numlogsegments', { topic: TOPIC, partition: String(p) })).toBe(1);
    expect(s1.value('kafka_topic_partition_current_offset', { topic: TOPIC, partition: String(p) })).toBe(perPartition[p]);
  }
  // One Produce request per send; its time summary counts the same requests.
  expect(s1.sum('kafka_network_requestmetrics_requests_total', { request: 'Produce' })).toBe(SENDS);
  expect(s1.family('kafka_network_requestmetrics_totaltimems')?.type).toBe('SUMMARY');
  const produceTime = s1.summary('kafka_network_requestmetrics_totaltimems', { request: 'Produce' })!;
  expect(produceTime.count).toBe(SENDS);
  expect(Object.keys(produceTime.quantiles)).toEqual(['0.50', '0.75', '0.95', '0.98', '0.99', '0.999']);
  expect(produceTime.quantiles['0.50']).toBeGreaterThan(0);
  expect(produceTime.quantiles['0.999']).toBeGreaterThanOrEqual(produceTime.quantiles['0.50']);
  expect(produceTime.sum).toBeGreaterThan(0);
  expect(s1.sum('kafka_network_requestmetrics_requests_total', { request: 'CreateTopics' })).toBe(1);
  const flushes = s1.family('kafka_log_logflushstats_logflushrateandtimems')!;
  expect(flushes.type).toBe('SUMMARY');
  expect(Number(flushes.metrics[0].count)).toBe(SENDS);
  expect(Object.keys(flushes.metrics[0].quantiles ?? {})).toHaveLength(6);
  expect(s1.value('kafka_log_logmanager_remaininglogstorecover', { dir: broker.dataDir })).toBe(0);
  expect(s1.value('kafka_log_logmanager_offlinelogdirectorycount')).toBe(0);
  expect(s1.sum('kafka_network_requestmetrics_requests_total', { request: 'Metadata' })).toBeGreaterThan(0);
  expect(s1.sum('kafka_network_requestmetrics_requests_total', { request: 'ApiVersions' })).toBeGreaterThanOrEqual(2);
  expect(s1.value('kafka_server_replicamanager_partitioncount')).toBe(3);
  expect(s1.value('kafka_server_replicamanager_leadercount')).toBe(3);
  expect(s1.value('kafka_server_replicamanager_underreplicatedpartitions')).toBe(0);
  expect(s1.value('kafka_controller_kafkacontroller_activecontrollercount')).toBe(1);
  expect(s1.value('kafka_controller_kafkacontroller_globaltopiccount')).toBe(1);
  expect(s1.value('kafka_controller_kafkacontroller_globalpartitioncount')).toBe(3);
  expect(s1.value('kafka_controller_kafkacontroller_offlinepartitionscount')).toBe(0);
  // The admin's and the producer's connections (KafkaJS keeps a bootstrap one too).
  expect(s1.value('kafka_server_socket_server_metrics_connection_count', { listener: 'PLAINTEXT', networkProcessor: '0' })).toBeGreaterThanOrEqual(2);
  expect(s1.value('kafka_network_requestchannel_requestqueuesize')).toBe(0);
  expect(s1.family('process_cpu_user_seconds_total')?.type).toBe('COUNTER');

  // A consumer group reads everything and commits where it stopped.
  consumer = kafka.consumer({ groupId: GROUP, sessionTimeout: 10_000, heartbeatInterval: 500 });
  await consumer.connect();
  await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
  let seen = 0;
  const allSeen = new Promise<void>((resolve) => {
    void consumer!.run({
      autoCommit: false,
      eachMessage: async () => {
        if (++seen === MESSAGES) resolve();
      },
    });
  });
  await allSeen;
  await consumer.commitOffsets([0, 1, 2].map((p) => ({ topic: TOPIC, partition: p, offset: String(perPartition[p]) })));
  await consumer.disconnect();
  consumer = undefined;
  // Five more records nobody consumes: the group lags by exactly that.
  await producer.send({ topic: TOPIC, acks: -1, messages: Array.from({ length: 5 }, () => ({ partition: 0, value: VALUE })) });

  const s2 = await metrics();
  for (let p = 0; p < 3; p++) {
    const labels = { consumergroup: GROUP, topic: TOPIC, partition: String(p) };
    expect(s2.value('kafka_consumergroup_current_offset', labels)).toBe(perPartition[p]);
    expect(s2.value('kafka_consumergroup_lag', labels)).toBe(p === 0 ? 5 : 0);
  }
  expect(s2.value('kafka_consumergroup_lag_sum', { consumergroup: GROUP, topic: TOPIC })).toBe(5);
  expect(s2.value('kafka_server_brokertopicmetrics_messagesin_total', { topic: TOPIC })).toBe(MESSAGES + 5);
  // Every record was fetched at least once; consumer fetches count as Fetch and as FetchConsumer.
  expect(s2.value('kafka_server_brokertopicmetrics_bytesout_total', { topic: TOPIC })).toBeGreaterThanOrEqual(logSize);
  expect(s2.value('kafka_server_brokertopicmetrics_totalfetchrequests_total', { topic: TOPIC })).toBeGreaterThan(0);
  const fetches = s2.sum('kafka_network_requestmetrics_requests_total', { request: 'Fetch' });
  expect(fetches).toBeGreaterThan(0);
  expect(s2.sum('kafka_network_requestmetrics_requests_total', { request: 'FetchConsumer' })).toBe(fetches);
  expect(s2.sum('kafka_network_requestmetrics_requests_total', { request: 'FetchFollower' })).toBe(0);
  expect(s2.sum('kafka_network_requestmetrics_requests_total', { request: 'OffsetCommit' })).toBe(1);
  expect(s2.sum('kafka_network_requestmetrics_requests_total', { request: 'JoinGroup' })).toBeGreaterThanOrEqual(1);
  expect(s2.sum('kafka_network_requestmetrics_requests_total', { request: 'SyncGroup' })).toBeGreaterThanOrEqual(1);
  // The group and its offsets are held here; __consumer_offsets' two partitions now count too.
  expect(s2.value('kafka_coordinator_group_groupmetadatamanager_numgroups')).toBe(1);
  expect(s2.value('kafka_coordinator_group_groupmetadatamanager_numgroupsempty')).toBe(1);
  expect(s2.value('kafka_coordinator_group_groupmetadatamanager_numoffsets')).toBe(3);
  expect(s2.value('kafka_server_group_coordinator_metrics_group_count', { protocol: 'classic' })).toBe(1);
  expect(s2.value('kafka_server_group_coordinator_metrics_group_count', { protocol: 'consumer' })).toBe(0);
  expect(s2.value('kafka_server_group_coordinator_metrics_consumer_group_count', { state: 'stable' })).toBe(0);
  // A KIP-848 consumer group joins (ConsumerGroupHeartbeat from krill's own client).
  const conn = await connect(broker.host, broker.port, { clientId: 'metrics-848' });
  try {
    const joined = await conn.send('ConsumerGroupHeartbeat', 1, { groupId: 'metrics-848', memberId: 'm1', memberEpoch: 0, rebalanceTimeoutMs: 30_000, subscribedTopicNames: [TOPIC], topicPartitions: [] });
    expect(joined.errorCode).toBe(0);
  } finally {
    await conn.close();
  }
  const s2b = await metrics();
  expect(s2b.value('kafka_server_group_coordinator_metrics_group_count', { protocol: 'consumer' })).toBe(1);
  expect(s2b.value('kafka_server_group_coordinator_metrics_consumer_group_count', { state: 'stable' })).toBe(1);
  expect(s2b.value('kafka_server_group_coordinator_metrics_consumer_group_count', { state: 'empty' })).toBe(0);
  expect(s2b.value('kafka_coordinator_group_groupmetadatamanager_numgroups')).toBe(2);
  expect(s2.value('kafka_server_group_coordinator_metrics_num_partitions', { state: 'active' })).toBe(2);
  expect(s2.value('kafka_server_replicamanager_partitioncount')).toBe(5);
  expect(s2.value('kafka_controller_kafkacontroller_globaltopiccount')).toBe(2);
  // Counters never go down between scrapes.
  expect(s2.value('kafka_server_brokertopicmetrics_bytesin_total')!).toBeGreaterThan(s1.value('kafka_server_brokertopicmetrics_bytesin_total')!);

  // A deleted topic's own series go; the all-topics counts stay.
  await admin.deleteTopics({ topics: [TOPIC] });
  const s3 = await metrics();
  expect(s3.value('kafka_server_brokertopicmetrics_messagesin_total', { topic: TOPIC })).toBeUndefined();
  expect(s3.samples('kafka_log_log_size', { topic: TOPIC })).toHaveLength(0);
  expect(s3.value('kafka_server_brokertopicmetrics_messagesin_total')).toBe(MESSAGES + 5);
});

test('@platformatic/kafka Admin: BROKER_LOGGER levels change at run time with Kafka\'s errors', async () => {
  const out = await runNodeScript(path.join(__dirname, 'broker-logger.mjs'), [broker.bootstrapServers[0], String(broker.nodeId)], 30_000);
  const r = lastJsonLine(out);
  expect(r.loggerCount).toBeGreaterThan(10);
  expect(r.before).toEqual({ root: 'WARN', 'kafka.server.ReplicaManager': 'WARN', 'kafka.log.LogManager': 'WARN' });
  expect(r.setTrace).toBe('ok');
  expect(r.afterSet).toEqual({ root: 'WARN', 'kafka.server.ReplicaManager': 'TRACE', 'kafka.log.LogManager': 'WARN' });
  expect(r.setParent).toBe('ok');
  expect(r.afterParent).toEqual({ root: 'WARN', 'kafka.server.ReplicaManager': 'TRACE', 'kafka.log.LogManager': 'DEBUG' });
  expect(r.badLevel).toEqual([
    { errorCode: 40, errorMessage: 'Cannot set the log level of root to verbose as it is not a supported log level. Valid log levels are DEBUG, ERROR, FATAL, INFO, TRACE, WARN' },
  ]);
  expect(r.unknownLogger).toEqual([{ errorCode: 40, errorMessage: 'Logger no.such.Logger does not exist!' }]);
  expect(r.append).toEqual([{ errorCode: 42, errorMessage: 'APPEND operation is not allowed for the BROKER_LOGGER resource' }]);
  expect(r.deleteRoot).toEqual([{ errorCode: 42, errorMessage: 'Removing the log level of the root logger is not allowed' }]);
  expect(r.afterRefusals).toEqual(r.afterParent);
  expect(r.delete).toBe('ok');
  expect(r.afterDelete).toEqual({ root: 'WARN', 'kafka.server.ReplicaManager': 'DEBUG', 'kafka.log.LogManager': 'DEBUG' });
  expect(r.deleteParent).toBe('ok');
  expect(r.afterAll).toEqual(r.before);
  // The broker's own loggers followed, and each change was logged at WARN.
  expect(broker.server.logger.levels.effective('kafka.server.ReplicaManager')).toBe('warn');
  expect(logLines.some((l) => l.includes('WARN') && l.includes('Updated the log level of kafka.server.ReplicaManager to TRACE'))).toBe(true);
});
