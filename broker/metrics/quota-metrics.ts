/**
 * Client quota metrics (kafka.server:type=Produce|Fetch|Request, user=U, client-id=C), named by the
 * Strimzi JMX exporter's quota rules (kafka_server_quota_<attribute>, resource = the MBean type):
 *   kafka_server_quota_throttle_time{resource,user,clientId}  throttle-time: mean throttle of the
 *     client's recent requests, ms (0 within its quota)
 *   kafka_server_quota_byte_rate{resource="Produce"|"Fetch",user,clientId}  byte-rate, bytes/s
 *   kafka_server_quota_request_time{resource="Request",user,clientId}  request-time, % of a thread
 * for every (user, client id) key a quota applies to, tagged as Kafka tags its sensors: the part a
 * quota's level does not include is ''. Read from the quota managers at scrape time. Controller
 * mutation quotas are not reported yet.
 * Replication throttles (kafka.server:type=LeaderReplication|FollowerReplication, attribute byte-rate):
 *   kafka_server_leaderreplication_byte_rate     bytes/s of throttled partitions served to followers
 *   kafka_server_followerreplication_byte_rate   bytes/s of throttled partitions fetched as a follower
 * (SimpleRate over replication.quota.window.*, recorded whether or not the quota is exceeded).
 */
import type { Registry } from 'prom-client';
import { collectedGauge } from './collected';
import type { BrokerQuotas } from '../quota/broker-quotas';
import type { ClientQuotaManager } from '../quota/client-quota-manager';
import type { ReplicationQuotaManager } from '../../replication/replication-quota-manager';

export function registerQuotaMetrics(registry: Registry, quotas: BrokerQuotas, now: () => number = Date.now): void {
  const managers: [string, ClientQuotaManager, 'byte_rate' | 'request_time'][] = [
    ['Produce', quotas.produce, 'byte_rate'],
    ['Fetch', quotas.fetch, 'byte_rate'],
    ['Request', quotas.request, 'request_time'],
  ];
  collectedGauge(registry, 'kafka_server_quota_throttle_time', 'throttle-time: mean throttle of a quota\'d client\'s recent requests, ms (kafka.server:type=Produce|Fetch|Request).', ['resource', 'user', 'clientId'], (set) => {
    for (const [resource, m] of managers) for (const q of m.quotaMetrics(now())) set({ resource, user: q.user, clientId: q.clientId }, q.throttleTimeMs);
  });
  collectedGauge(registry, 'kafka_server_quota_byte_rate', 'byte-rate: bytes per second of a quota\'d client (kafka.server:type=Produce|Fetch).', ['resource', 'user', 'clientId'], (set) => {
    for (const [resource, m, attr] of managers) if (attr === 'byte_rate') for (const q of m.quotaMetrics(now())) set({ resource, user: q.user, clientId: q.clientId }, q.rate);
  });
  collectedGauge(registry, 'kafka_server_quota_request_time', 'request-time: percentage of a thread a quota\'d client used (kafka.server:type=Request).', ['resource', 'user', 'clientId'], (set) => {
    for (const [resource, m, attr] of managers) if (attr === 'request_time') for (const q of m.quotaMetrics(now())) set({ resource, user: q.user, clientId: q.clientId }, q.rate);
  });
}

export function registerReplicationQuotaMetrics(registry: Registry, quotas: { leader: ReplicationQuotaManager; follower: ReplicationQuotaManager }): void {
  collectedGauge(registry, 'kafka_server_leaderreplication_byte_rate', 'byte-rate: bytes per second of throttled replicas served to followers (kafka.server:type=LeaderReplication).', [], (set) =>
    set({}, quotas.leader.byteRate()),
  );
  collectedGauge(registry, 'kafka_server_followerreplication_byte_rate', 'byte-rate: bytes per second of throttled replicas fetched by this broker\'s followers (kafka.server:type=FollowerReplication).', [], (set) =>
    set({}, quotas.follower.byteRate()),
  );
}
