/**
 * Replication throttles (KIP-73) on a 3-broker in-process cluster, driven as
 * kafka-reassign-partitions.sh --throttle drives them, over the wire with KafkaJS 2.2.4's admin:
 * alterConfigs sets the topic's leader/follower.replication.throttled.replicas and the brokers'
 * dynamic leader/follower.replication.throttled.rate, alterPartitionReassignments moves a
 * partition that holds SIZE bytes onto a new replica.
 *
 * - Unthrottled, the new replica copies the log in well under a second.
 * - Throttled on the leader (its follower fetches answered without records once the rate is
 *   exceeded) or on the follower (its fetcher leaves the partition out), the copy takes about
 *   SIZE / RATE: the SimpleRate lets the first window's worth through at once, so the expected
 *   time is (SIZE - RATE x 1 s) / RATE, checked within generous bounds; the byte-rate metric of the
 *   throttled side reads about RATE meanwhile. An unthrottled partition reassigned from the same
 *   leader at the same time is not slowed.
 * - Raising the rate while a throttled copy is under way finishes it at once (no restart).
 */
import { ConfigResourceTypes, type Admin, type Kafka } from 'kafkajs';
import type { RunningCluster } from '../../broker/cluster';
import type { TestBroker } from '../helpers/brokers';
import { connectedAdmin, connectedProducer, disconnectAll, kafkaFor } from '../helpers/kafkajs';
import { scrape } from '../../broker/metrics/testing/scrape';
import { fastCluster, waitFor } from './helpers';

const RATE = 100_000; // bytes/s
const MESSAGES = 500;
const VALUE_BYTES = 1000;

let cluster: RunningCluster;
let kafka: Kafka;
let admin: Admin;

beforeAll(async () => {
  // Small follower fetches, so a copy is many fetches and the throttle can act between them.
  cluster = await fastCluster({ brokers: 3, metricsPort: 0, config: { 'replica.fetch.max.bytes': 16_384, 'replica.fetch.response.max.bytes': 65_536 } });
  kafka = kafkaFor({ bootstrap: cluster.bootstrapServers[0] } as TestBroker, 'replication-throttle');
  admin = await connectedAdmin(kafka);
});
afterAll(async () => {
  await disconnectAll(admin);
  await cluster?.close();
});

/** A topic with one partition on broker `on` only, holding MESSAGES incompressible values; its log size. */
async function filledTopic(topic: string, on = 0): Promise<number> {
  await admin.createTopics({ topics: [{ topic, replicaAssignment: [{ partition: 0, replicas: [on] }] }], waitForLeaders: true });
  const producer = await connectedProducer(kafka);
  try {
    for (let i = 0; i < MESSAGES; i += 100) {
      const messages = Array.from({ length: 100 }, () => ({ value: Buffer.from(Array.from({ length: VALUE_BYTES }, () => Math.floor(Math.random() * 256))) }));
      await producer.send({ topic, acks: 1, messages });
    }
  } finally {
    await producer.disconnect();
  }
  const log = cluster.broker(on).server.logManager.getLog(topic, 0)!;
  expect(log.logEndOffset).toBe(BigInt(MESSAGES));
  return log.size;
}

const setConfigs = (type: ConfigResourceTypes, name: string, configs: Record<string, string>) =>
  admin.alterConfigs({ validateOnly: false, resources: [{ type, name, configEntries: Object.entries(configs).map(([k, v]) => ({ name: k, value: v })) }] });

/** Reassigns partition 0 of `topic` (on broker `from`) to [from, to]; resolves when the reassignment is done, with how long it took. */
async function reassign(topic: string, to: number, from = 0): Promise<number> {
  const start = Date.now();
  await admin.alterPartitionReassignments({ topics: [{ topic, partitionAssignment: [{ partition: 0, replicas: [from, to] }] }] });
  await waitFor(
    `the reassignment of ${topic} onto broker ${to}`,
    () => {
      const p = cluster.broker(from).server.metadata.topic(topic)?.partitions.get(0);
      return p !== undefined && p.addingReplicas.length === 0 && p.isr.includes(to);
    },
    60_000,
    20,
  );
  const took = Date.now() - start;
  expect(cluster.broker(to).server.logManager.getLog(topic, 0)!.logEndOffset).toBe(BigInt(MESSAGES));
  expect((await admin.listPartitionReassignments({ topics: [{ topic, partitions: [0] }] })).topics).toEqual([]);
  return took;
}

/** The time a throttled copy of `size` bytes should take: the first window's RATE bytes pass at once. */
const expectedMs = (size: number): number => ((size - RATE) / RATE) * 1000;

test('unthrottled, the new replica copies the partition in well under size / rate', async () => {
  const size = await filledTopic('unthrottled');
  expect(size).toBeGreaterThan(MESSAGES * VALUE_BYTES);
  const took = await reassign('unthrottled', 1);
  expect(took).toBeLessThan(expectedMs(size) / 3);
});

test('a leader-side throttle holds the copy to about the rate; an unthrottled partition of the same leader is not slowed', async () => {
  const size = await filledTopic('leader-throttled');
  await filledTopic('beside-it');
  // What --throttle sets: the existing replica as leader-throttled, the new one as follower-throttled,
  // with only the leader's rate bounded here.
  await setConfigs(ConfigResourceTypes.TOPIC, 'leader-throttled', { 'leader.replication.throttled.replicas': '0:0', 'follower.replication.throttled.replicas': '0:1' });
  await setConfigs(ConfigResourceTypes.BROKER, '0', { 'leader.replication.throttled.rate': String(RATE) });
  const leader = cluster.broker(0).server.replicationQuotas.leader;
  await waitFor('broker 0 applies the throttle', () => leader.upperBound === RATE && leader.isThrottled('leader-throttled', 0));
  expect(leader.isThrottled('beside-it', 0)).toBe(false);

  const throttled = reassign('leader-throttled', 1);
  const beside = await reassign('beside-it', 2);
  // Sampled once the throttled copy is flowing (the unthrottled one can finish before it starts).
  await waitFor('the throttled copy is under way', () => (cluster.broker(1).server.logManager.getLog('leader-throttled', 0)?.logEndOffset ?? 0n) > 0n, 10_000, 20);
  const rateMidway = (await scrape(cluster.broker(0).metricsAddress!)).value('kafka_server_leaderreplication_byte_rate');
  const took = await throttled;
  expect(beside).toBeLessThan(expectedMs(size) / 3);
  expect(took).toBeGreaterThan(expectedMs(size) * 0.75);
  expect(took).toBeLessThan(expectedMs(size) * 1.5 + 1000);
  expect(rateMidway).toBeGreaterThan(RATE * 0.5);
  expect(rateMidway).toBeLessThan(RATE * 2);
  // The follower side of broker 1 had no rate: nothing was held back there.
  expect(cluster.broker(1).server.replicationQuotas.follower.upperBound).toBe(Infinity);
  await setConfigs(ConfigResourceTypes.BROKER, '0', {});
});

test('a follower-side throttle holds the copy to about the rate', async () => {
  const size = await filledTopic('follower-throttled');
  await setConfigs(ConfigResourceTypes.TOPIC, 'follower-throttled', { 'leader.replication.throttled.replicas': '0:0', 'follower.replication.throttled.replicas': '0:2' });
  await setConfigs(ConfigResourceTypes.BROKER, '2', { 'follower.replication.throttled.rate': String(RATE) });
  const follower = cluster.broker(2).server.replicationQuotas.follower;
  await waitFor('broker 2 applies the throttle', () => follower.upperBound === RATE && follower.isThrottled('follower-throttled', 0));
  // Broker 0's leader quota is unbounded again (the previous test removed its rate; the change
  // reaches broker 0 through the metadata): only the follower holds back.
  await waitFor('broker 0 drops its leader rate', () => cluster.broker(0).server.replicationQuotas.leader.upperBound === Infinity);

  const throttled = reassign('follower-throttled', 2);
  await waitFor('the copy is under way', () => (cluster.broker(2).server.logManager.getLog('follower-throttled', 0)?.logEndOffset ?? 0n) > 0n, 10_000, 20);
  const rateMidway = (await scrape(cluster.broker(2).metricsAddress!)).value('kafka_server_followerreplication_byte_rate');
  const took = await throttled;
  expect(took).toBeGreaterThan(expectedMs(size) * 0.75);
  expect(took).toBeLessThan(expectedMs(size) * 1.5 + 1000);
  expect(rateMidway).toBeGreaterThan(RATE * 0.5);
  expect(rateMidway).toBeLessThan(RATE * 2);
  await setConfigs(ConfigResourceTypes.BROKER, '2', {});
});

test('raising the rate while a throttled copy is under way finishes it without a restart', async () => {
  const slow = RATE / 10;
  // Led by broker 1, whose leader quota has recorded nothing yet (the quota is one rate for all
  // its throttled partitions, so bytes recorded for another partition would count here too).
  await filledTopic('raised', 1);
  await setConfigs(ConfigResourceTypes.TOPIC, 'raised', { 'leader.replication.throttled.replicas': '*', 'follower.replication.throttled.replicas': '*' });
  await setConfigs(ConfigResourceTypes.BROKER, '1', { 'leader.replication.throttled.rate': String(slow) });
  const leader = cluster.broker(1).server.replicationQuotas.leader;
  await waitFor('broker 1 applies the throttle', () => leader.upperBound === slow);
  const done = reassign('raised', 2, 1);
  // At 10 kB/s the copy would take most of a minute: it is held back...
  await waitFor('the copy has started', () => (cluster.broker(2).server.logManager.getLog('raised', 0)?.logEndOffset ?? 0n) > 0n, 10_000, 20);
  const leo = () => cluster.broker(2).server.logManager.getLog('raised', 0)!.logEndOffset;
  await waitFor('the leader quota is exceeded', () => leader.isQuotaExceeded(), 10_000, 20);
  const held = leo();
  expect(Number(held)).toBeLessThan(MESSAGES / 2);
  // Three more follower fetches of broker 2 come and go while the quota stays exceeded, and
  // bring nothing (answered without records, not with an error: the fetcher keeps fetching).
  const fetches = cluster.control.broker(1).record({ api: 'Fetch', topic: 'raised', clientId: /^krill-replica-fetcher-2-/ }, { bodies: false });
  await waitFor('three throttled follower fetches', () => fetches.requests.length >= 3 && leader.isQuotaExceeded(), 10_000, 20);
  fetches.stop();
  expect(leo()).toBe(held);
  // ...until the rate goes up.
  const raisedAt = Date.now();
  await setConfigs(ConfigResourceTypes.BROKER, '1', { 'leader.replication.throttled.rate': String(RATE * 100) });
  await done;
  expect(Date.now() - raisedAt).toBeLessThan(3000);
  expect(leo()).toBe(BigInt(MESSAGES));
});
