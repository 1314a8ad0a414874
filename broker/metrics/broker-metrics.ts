/**
 * One broker's metrics: its own prom-client Registry (brokers of one process never share one, so
 * startCluster's brokers each report their own), the counters kept on the request paths
 * (BrokerTopicStats, RequestMetrics, ISR changes) and the gauges read from the broker's state at
 * scrape time (replica manager, controller, logs, coordinators, consumer lag, connections, client
 * quotas, replication throttles), plus
 * prom-client's process and Node.js metrics (process_*, nodejs_*). Names follow the Strimzi JMX
 * exporter rules for Kafka; the list is in docs/operations.md.
 */
import { Registry, collectDefaultMetrics } from 'prom-client';
import { BrokerTopicStats } from './broker-topic-stats';
import { RequestMetrics } from './request-metrics';
import { IsrChangeStats, registerReplicaManagerMetrics } from './replica-manager-metrics';
import { registerTopicMetrics } from './topic-metrics';
import { registerControllerMetrics } from './controller-metrics';
import { registerLogMetrics } from './log-metrics';
import { registerCleanerMetrics } from './cleaner-metrics';
import { registerRemoteStorageMetrics } from './remote-storage-metrics';
import type { RemoteLogManager } from '../../storage/remote/remote-log-manager';
import { registerCoordinatorMetrics } from './coordinator-metrics';
import { registerConsumerLagMetrics } from './consumer-lag-metrics';
import { registerNetworkMetrics } from './network-metrics';
import { registerQuotaMetrics, registerReplicationQuotaMetrics } from './quota-metrics';
import { collectedGauge } from './collected';
import type { BrokerQuotas } from '../quota/broker-quotas';
import type { ReplicationQuotaManager } from '../../replication/replication-quota-manager';
import type { ReplicaManager } from '../../replication/replica-manager';
import type { LogManager } from '../../storage/log-manager';
import type { MetadataCache } from '../../metadata/metadata-cache';
import type { GroupCoordinator } from '../../coordinator/group/group-coordinator';
import type { TransactionCoordinator } from '../../coordinator/transaction/transaction-coordinator';

export interface BrokerMetricsSources {
  replicaManager: ReplicaManager;
  logManager: LogManager;
  metadata: MetadataCache;
  groupCoordinator: GroupCoordinator;
  transactionCoordinator: TransactionCoordinator;
  quotas: BrokerQuotas;
  replicationQuotas: { leader: ReplicationQuotaManager; follower: ReplicationQuotaManager };
  minInsyncReplicas(topic: string): number;
  /** Whether this node's controller is in this process and active (combined node); null: no local controller. */
  controllerActive: (() => boolean) | null;
  requestQueueSize(): number;
  listenerNames(): readonly string[];
  connectionCounts(): ReadonlyMap<string, number>;
  /** Kafka's BrokerState byte. */
  brokerState(): number;
  /** Client telemetry instances (KIP-714) held by this broker. */
  clientMetricsInstances(): number;
  /** Tiered storage's remote log manager, when it runs (null: tiered storage is off or not started). */
  remoteLogManager(): RemoteLogManager | null;
}

export class BrokerMetrics {
  readonly registry = new Registry();
  readonly topicStats = new BrokerTopicStats();
  readonly requests: RequestMetrics;
  readonly isrChanges = new IsrChangeStats();

  constructor(src: BrokerMetricsSources) {
    const r = this.registry;
    this.requests = new RequestMetrics(r, () => src.requestQueueSize());
    registerTopicMetrics(r, this.topicStats);
    registerReplicaManagerMetrics(
      r,
      {
        allPartitions: () => src.replicaManager.allPartitions(),
        minInsyncReplicas: (t) => src.minInsyncReplicas(t),
        maxFollowerLag: () => src.replicaManager.fetcherManager?.maxLag() ?? null,
      },
      this.isrChanges,
    );
    if (src.controllerActive) registerControllerMetrics(r, src.metadata, src.controllerActive);
    registerLogMetrics(r, src.logManager);
    registerCleanerMetrics(r, () => src.logManager.cleaner);
    registerRemoteStorageMetrics(r, () => src.remoteLogManager());
    registerCoordinatorMetrics(r, src.groupCoordinator, src.transactionCoordinator);
    registerConsumerLagMetrics(r, {
      groups: src.groupCoordinator,
      allPartitions: () => src.replicaManager.allPartitions(),
      leaderPartition: (topic, partition) => {
        const p = src.replicaManager.getPartition(topic, partition);
        return p?.isLeader ? p : undefined;
      },
    });
    registerNetworkMetrics(r, () => src.listenerNames(), () => src.connectionCounts());
    registerQuotaMetrics(r, src.quotas);
    registerReplicationQuotaMetrics(r, src.replicationQuotas);
    collectedGauge(r, 'kafka_server_clientmetrics_instance_count', 'instance-count: client telemetry (KIP-714) instances held by this broker (kafka.server:type=ClientMetrics).', [], (set) =>
      set({}, src.clientMetricsInstances()),
    );
    collectedGauge(r, 'kafka_server_kafkaserver_brokerstate', 'BrokerState: 1 starting, 2 loading (recovering) logs, 3 running, 6 in controlled shutdown, 7 shutting down (kafka.server:type=KafkaServer,name=BrokerState).', [], (set) =>
      set({}, src.brokerState()),
    );
    collectDefaultMetrics({ register: r });
  }

  /** The exposition, in Prometheus text format. */
  async scrape(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  /** A deleted topic's own series go, as Kafka removes its BrokerTopicMetrics. */
  onTopicDeleted(topic: string): void {
    this.topicStats.removeTopic(topic);
  }
}
