/**
 * What request handlers may use of a running broker. The KafkaServer (server.ts) implements it;
 * handlers depend on this interface only, which keeps them testable and keeps the wiring in one
 * place.
 */
import type { KafkaConfig } from '../config/kafka-config';
import type { EffectiveTopicConfig } from '../config/log-config-from';
import type { Logger } from '../common/logger';
import type { FetchSessionCache } from './fetch-session';
import type { MetadataCache } from '../metadata/metadata-cache';
import type { ControllerApi } from '../metadata/controller/controller';
import type { ReplicaManager } from '../replication/replica-manager';
import type { LogManager } from '../storage/log-manager';
import type { BrokerTieredStorage } from './tiered-storage';
import type { GroupCoordinator } from '../coordinator/group/group-coordinator';
import type { TransactionCoordinator } from '../coordinator/transaction/transaction-coordinator';
import type { BrokerQuotas } from './quota/broker-quotas';
import type { Authorizer } from '../metadata/authorizer/authorizer';
import type { BrokerTopicStats } from './metrics/broker-topic-stats';
import type { ClientMetricsManager } from './telemetry/client-metrics-manager';
import type { ControllerRequestChannel } from '../metadata/controller-channel';

export interface AdvertisedEndpoint {
  listenerName: string;
  host: string;
  port: number;
  securityProtocol: string;
}

export interface Broker {
  readonly nodeId: number;
  readonly clusterId: string;
  /** The config this broker runs with now: static config under its dynamic layers (KIP-226). */
  readonly config: KafkaConfig;
  /** server.properties, programmatic values and overrides only (the base dynamic configs are checked against). */
  readonly staticConfig: KafkaConfig;
  readonly logger: Logger;
  readonly metadata: MetadataCache;
  /** The controller (in this process for a combined node, over the Kafka protocol for a cluster broker). */
  readonly controller: ControllerApi;
  readonly replicaManager: ReplicaManager;
  readonly logManager: LogManager;
  /** Tiered storage (KIP-405), when remote.log.storage.system.enable is on. */
  readonly tieredStorage: BrokerTieredStorage | null;
  readonly fetchSessions: FetchSessionCache;
  /** Classic consumer groups and their committed offsets (__consumer_offsets). */
  readonly groupCoordinator: GroupCoordinator;
  /** Transactional producers (__transaction_state) and producer ids for idempotent ones. */
  readonly transactionCoordinator: TransactionCoordinator;
  /** Decides what each principal may do (ALLOW_ALL unless authorizer.class.name names one). */
  readonly authorizer: Authorizer;
  /** Client quotas (produce / fetch byte rates, request time, controller mutations). */
  readonly quotas: BrokerQuotas;
  /** BrokerTopicMetrics counts (bytes and messages in, bytes out); null while metrics are off. */
  readonly topicStats: BrokerTopicStats | null;
  /** Client telemetry (KIP-714): subscriptions, pushes and the last metrics each client pushed. */
  readonly clientMetrics: ClientMetricsManager;
  /** The channel to the active controller of a KRaft controller quorum (undefined or null without one): the forwarded quorum APIs use it. */
  readonly controllerQuorumChannel?: ControllerRequestChannel | null;
  /** apiKey -> highest version to advertise (emulating an older Kafka); empty = no caps. */
  readonly versionCaps: ReadonlyMap<number, number>;
  /** This broker's advertised endpoint for a listener name. */
  advertisedEndpoint(listenerName: string): AdvertisedEndpoint | undefined;
  /** The ranges krill advertises in ApiVersions. */
  apiVersions(): { apiKey: number; minVersion: number; maxVersion: number }[];
  /** Effective config of a topic: overrides from metadata over broker defaults. */
  topicConfig(topic: string): EffectiveTopicConfig;
  /** The effective config a topic with these overrides would have (CreateTopics v5+ reports it). */
  topicConfigWith(overrides: ReadonlyMap<string, string>): EffectiveTopicConfig;
  /**
   * Creates topics that a Metadata/Produce request named but that do not exist, when
   * auto.create.topics.enable allows it. Returns the error code per topic (NONE once created).
   */
  autoCreateTopics(names: string[]): Promise<Map<string, number>>;
}
