/**
 * The controller: the single writer of the cluster metadata log. Every change to topics,
 * partitions, configs (client-metrics subscriptions: client-metrics-config-control.ts; group configs: group-config-control.ts), client quotas (client-quota-control-manager.ts), SCRAM credentials
 * (scram-control-manager.ts), ACLs (acl-control-manager.ts), partition reassignments
 * (partition-reassignment.ts), broker registrations and producer id blocks is validated here, written to
 * the metadata log as one atomic batch of KRaft-shaped records, applied to the controller's own
 * image, and then published to the brokers, which apply the same records in the same order.
 * Operations run one at a time through a queue so that validation and the append see the same
 * state.
 *
 * Two ways to run it:
 * - combined (one node, `process.roles=broker,controller`): the broker calls it directly; its one
 *   broker registers unfenced and there are no sessions;
 * - cluster (`sessions` set): brokers talk to it over the Kafka protocol (ControllerServer,
 *   broker/controller/controller-server.ts). A broker registers fenced (BrokerRegistration), is
 *   unfenced by a heartbeat once it has caught up with the metadata log, and is fenced again when
 *   it misses heartbeats for broker.session.timeout.ms; fencing removes it from every ISR and
 *   moves its leaderships (PartitionChangeBuilder: from the ISR, unclean only when allowed).
 *   Controlled shutdown, ISR changes from partition leaders (AlterPartition), ElectLeaders and the
 *   periodic preferred leader election all end as PartitionChangeRecords in the same log.
 *
 * Two ways to keep the log:
 * - single writer (`log`): this controller is the only writer; an append is durable on return, so
 *   `commit` applies and notifies at once (the combined node, one controller process);
 * - quorum (`quorum`, quorum-log.ts; Kafka's QuorumController over the raft client): the image is
 *   built only from the quorum's committed batches, on every controller. The controller whose
 *   node leads the quorum claims (becomes active) once it has applied a committed batch of its own
 *   epoch (the LeaderChange record, so everything before is applied); only then does it accept
 *   any operation, and the others answer NOT_CONTROLLER. A write appends through the quorum and is
 *   answered once the feed has applied it; losing leadership first fails it with NOT_CONTROLLER.
 *   On each claim every registered broker gets a fresh session, the broker epoch counter continues
 *   from the committed registrations, the timers start (stopped again at renounce), and the first
 *   leader of an empty log writes the bootstrap records before anything else.
 *
 * Snapshots (quorum mode, Kafka's SnapshotGenerator and the controller's handleLoadSnapshot): every
 * controller, active or standby, writes its own image as a snapshot (MetadataCache.imageRecords,
 * through QuorumLog.createSnapshot) at the end of the committed batch after which
 * `metadata.log.max.record.bytes.between.snapshots` bytes of data batches were committed since
 * the last one, or after which `metadata.log.max.snapshot.interval.ms` has passed with data
 * committed; the committed log then keeps only what follows. A snapshot the quorum hands over
 * (restart on a trimmed log, or a follower behind the leader's log start) replaces the image
 * (snapshotDelta: the records that bring the image to the snapshot's, applied as a batch, so the
 * image's listeners see what changed), the committed log, the brokers' registration offsets (the
 * snapshot's end) and the broker epoch counter (past every epoch in it); producer ids are in the
 * image.
 *
 * Invariants: operations run one at a time (SerialQueue) and an operation's validation and its
 * records see the same image; the image holds only committed batches, each applied once, in
 * offset order (so in quorum mode nothing uncommitted is applied anywhere and no revert is needed);
 * a write is answered only after its batch is in the image and the listeners have seen it.
 */
import { ErrorCode, KafkaError, toErrorCode } from '../../protocol/errors';
import { randomUuid } from '../../protocol/primitives/uuid';
import type { Logger } from '../../common/logger';
import { MetadataCache } from '../metadata-cache';
import {
  ConfigResourceType,
  ControlledShutdownChange,
  FencingChange,
  type MetadataRecord,
  type PartitionChangeRecordData,
  type RegisterBrokerEndpoint,
} from '../metadata-records';
import type { PartitionState } from '../metadata-cache';
import { buildPartitionChange, type Election } from './partition-change-builder';
import { applyAlterConfigOps, type AlterConfigOp } from './alter-config-ops';
import { ongoingReassignments, planReassignments, type ListReassignmentsResult, type ReassignmentRequestTopic, type ReassignmentResultTopic } from './partition-reassignment';
import { SerialQueue } from '../../common/serial-queue';
import { topicPartitionKey } from '../../common/topic-partition';
import type { MetadataLog } from '../metadata-log';
import { CommittedMetadataLog, NotLeaderError, type CommittedBatch, type LoadedSnapshot, type QuorumLeader, type QuorumLog } from './quorum-log';
import { encodeMetadataRecord } from '../metadata-log-store';
import { snapshotDelta } from '../snapshot/snapshot-delta';
import { CLUSTER_METADATA_TOPIC, isInternalTopic, unifyCollisionChars, validateTopicName } from '../topic-name';
import { checkBrokerFeatures, planFeatureUpdates, type FeatureUpdate } from './feature-control-manager';
import { BOOTSTRAP_FEATURE_LEVELS, FeatureName, supportedFeatureRecords } from '../features';
import { ClientQuotaControlManager, type ClientQuotaAlteration, type ClientQuotaAlterationResult } from './client-quota-control-manager';
import { ScramControlManager, type ScramAlterationResult, type ScramCredentialDeletion, type ScramCredentialUpsertion } from './scram-control-manager';
import { AclControlManager, type AclCreateResult, type AclDeleteResult } from './acl-control-manager';
import type { AclBinding, AclBindingFilter } from '../authorizer/authorizer';
import { clientMetricsConfigRecords, type ClientMetricsConfigChange } from './client-metrics-config-control';
import { groupConfigRecords, type GroupConfigChange } from './group-config-control';
import { GROUP_CONFIG_BOUNDS_DEFAULTS, type GroupConfigBounds } from '../../config/group-configs';

export interface ControllerOptions {
  nodeId: number;
  clusterId: string;
  /** Single writer (combined node, one controller process): the metadata log, durable on append. */
  log?: MetadataLog;
  /**
   * Quorum mode (KRaft controller quorum, quorum-log.ts): instead of `log`. The image follows the
   * committed batches; this controller writes only while it leads the quorum (the active controller).
   */
  quorum?: QuorumLog;
  logger: Logger;
  defaultNumPartitions: () => number;
  defaultReplicationFactor: () => number;
  /** Throws KafkaError(INVALID_CONFIG) for an unknown topic config key or a bad value. */
  validateTopicConfig: (name: string, value: string | null) => void;
  /** A topic config's own default (not the broker's), which APPEND/SUBTRACT start from when unset. */
  topicConfigDefault?: (name: string) => string | null;
  /** A broker config's default, which APPEND/SUBTRACT on a BROKER resource start from when unset. */
  brokerConfigDefault?: (name: string) => string | null;
  /** This node's group.consumer.* settings, which GROUP configs are validated against (absent: Kafka's defaults). */
  groupConfigBounds?: () => GroupConfigBounds;
  /** Cluster mode: brokers register fenced and keep sessions by heartbeating. Absent: combined node. */
  sessions?: { sessionTimeoutMs: number };
  /**
   * This node's static unclean.leader.election.enable (server.properties; Kafka's default false),
   * the last fallback of uncleanLeaderElectionEnabled.
   */
  staticUncleanLeaderElection?: () => boolean;
  /** auto.leader.rebalance.enable: the preferred-leader check interval (leader.imbalance.check.interval.seconds). */
  autoLeaderRebalanceIntervalMs?: number | null;
  /** Clock (tests). */
  now?: () => number;
  /**
   * Written as the first batch of a fresh (empty) metadata log, like the bootstrap records of
   * `kafka-storage format` (krill: the `--add-scram` credentials); ignored once the log has records.
   */
  bootstrapRecords?: readonly MetadataRecord[];
  /**
   * Quorum mode: when to snapshot the image (metadata.log.max.record.bytes.between.snapshots,
   * default 20 MiB; metadata.log.max.snapshot.interval.ms, default 1 h, 0 disables the time rule).
   * Used only if the quorum log can store snapshots.
   */
  snapshots?: { maxRecordBytesBetween: number; maxIntervalMs: number };
}

/** Kafka's defaults of metadata.log.max.record.bytes.between.snapshots and metadata.log.max.snapshot.interval.ms. */
export const DEFAULT_SNAPSHOT_POLICY = { maxRecordBytesBetween: 20 * 1024 * 1024, maxIntervalMs: 3_600_000 };

export interface BrokerHeartbeatInput {
  brokerId: number;
  brokerEpoch: bigint;
  currentMetadataOffset: bigint;
  wantFence: boolean;
  wantShutDown: boolean;
}

export interface BrokerHeartbeatReply {
  isCaughtUp: boolean;
  isFenced: boolean;
  inControlledShutdown: boolean;
  shouldShutDown: boolean;
}

export interface AlterPartitionInput {
  brokerId: number;
  brokerEpoch: bigint;
  topics: {
    /** By name (v0-1) or by id (v2+). */
    topicName: string | null;
    topicId: string | null;
    partitions: {
      partitionIndex: number;
      leaderEpoch: number;
      partitionEpoch: number;
      leaderRecoveryState: number;
      newIsrWithEpochs: { brokerId: number; brokerEpoch: bigint }[];
    }[];
  }[];
}

export interface AlterPartitionPartitionResult {
  partitionIndex: number;
  errorCode: number;
  leaderId: number;
  leaderEpoch: number;
  isr: number[];
  leaderRecoveryState: number;
  partitionEpoch: number;
}

export interface AlterPartitionResult {
  errorCode: number;
  topics: { topicName: string; topicId: string; partitions: AlterPartitionPartitionResult[] }[];
}

export interface ElectLeadersResult {
  topic: string;
  partitionResult: { partitionId: number; errorCode: number; errorMessage: string | null }[];
}

/** ElectLeaders election_type: 0 preferred, 1 unclean. */
export const ElectionType = { PREFERRED: 0, UNCLEAN: 1 } as const;

/**
 * Kafka's ReplicationControlManager.MAX_PARTITIONS_PER_BATCH: the most partitions one CreateTopics
 * or CreatePartitions request may create (KAFKA-17870, KAFKA-19673), so that a request is one
 * bounded metadata batch and a hostile count is refused before anything is allocated.
 */
export const MAX_PARTITIONS_PER_BATCH = 10_000;

/** The POLICY_VIOLATION message of a request over MAX_PARTITIONS_PER_BATCH (Kafka's, word for word). */
export const EXCESSIVE_PARTITIONS_MESSAGE = 'Excessively large number of partitions per request.';

/** Kafka's answer (INVALID_REQUEST) to a topic named twice in CreateTopics / CreatePartitions / DeleteTopics. */
export const DUPLICATE_TOPIC_NAME = 'Duplicate topic name.';

/** The controller's view of one broker's session (in memory only, as in Kafka's BrokerHeartbeatManager). */
interface BrokerSession {
  lastSeenMs: number;
  /** Offset of the RegisterBrokerRecord: the broker may be unfenced once it has applied it. */
  registerOffset: bigint;
  /** Last metadata offset the broker reported. */
  metadataOffset: bigint;
  /** Offset of the batch that moved its leaderships away, once in controlled shutdown. */
  controlledShutdownOffset: bigint | null;
  shutdownNow: boolean;
}

export interface CreateTopicSpec {
  name: string;
  numPartitions: number;
  replicationFactor: number;
  assignments: { partitionIndex: number; brokerIds: number[] }[];
  configs: { name: string; value: string | null }[];
}

export interface CreateTopicResult {
  name: string;
  topicId: string;
  errorCode: number;
  errorMessage: string | null;
  numPartitions: number;
  replicationFactor: number;
}

export interface DeleteTopicResult {
  name: string | null;
  topicId: string;
  errorCode: number;
  errorMessage: string | null;
}

export interface CreatePartitionsSpec {
  name: string;
  count: number;
  assignments: { brokerIds: number[] }[] | null;
}

export type { AlterConfigOp } from './alter-config-ops';

export interface BrokerConfigChange {
  /** A broker id, or "" for the cluster-wide default. */
  resourceName: string;
  ops: AlterConfigOp[];
  incremental: boolean;
}

/** Kafka's ControllerConfigurationValidator.validateBrokerName: "" or a non-negative base-10 broker id. */
export function validateBrokerResourceName(name: string): void {
  if (name === '') return;
  if (!/^[+-]?\d+$/.test(name) || Math.abs(Number(name)) > 0x7fffffff) {
    throw new KafkaError(ErrorCode.INVALID_REQUEST, 'Unable to parse broker name as a base 10 number.');
  }
  if (Number(name) < 0) throw new KafkaError(ErrorCode.INVALID_REQUEST, 'Invalid negative broker ID.');
}

export interface BrokerRegistration {
  brokerId: number;
  incarnationId: string;
  endpoints: RegisterBrokerEndpoint[];
  rack: string | null;
  logDirs: string[];
  /** The feature ranges the broker supports (default: this krill's, for a broker in this process). */
  features?: { name: string; minSupportedVersion: number; maxSupportedVersion: number }[];
}

export type MetadataListener = (records: MetadataRecord[], lastOffset: bigint) => void;

/**
 * What brokers (and request handlers) may ask of the controller, whether it runs in this process
 * (Controller) or elsewhere (RemoteController, over the Kafka protocol).
 */
export interface ControllerApi {
  createTopics(specs: CreateTopicSpec[], validateOnly: boolean): Promise<CreateTopicResult[]>;
  deleteTopics(targets: { name: string | null; topicId: string | null }[]): Promise<DeleteTopicResult[]>;
  createPartitions(specs: CreatePartitionsSpec[], validateOnly: boolean): Promise<{ name: string; errorCode: number; errorMessage: string | null }[]>;
  alterTopicConfigs(
    changes: { topic: string; ops: AlterConfigOp[]; incremental: boolean }[],
    validateOnly: boolean,
  ): Promise<{ topic: string; errorCode: number; errorMessage: string | null }[]>;
  /** CLIENT_METRICS (KIP-714 subscription) config changes (client-metrics-config-control.ts): one result per change. */
  alterClientMetricsConfigs(changes: ClientMetricsConfigChange[], validateOnly: boolean): Promise<{ name: string; errorCode: number; errorMessage: string | null }[]>;
  /** GROUP (dynamic group config) changes (group-config-control.ts): one result per change. */
  alterGroupConfigs(changes: GroupConfigChange[], validateOnly: boolean): Promise<{ name: string; errorCode: number; errorMessage: string | null }[]>;
  /**
   * Dynamic broker configs (KIP-226): ConfigRecords of resource type BROKER, name = a broker id or
   * "" for the cluster-wide default. The forwarding broker has already checked that the changes
   * are dynamically updatable (broker/handlers/broker-config-preprocess.ts, as Kafka's
   * ConfigAdminManager); the controller checks the resource name, as ControllerConfigurationValidator.
   */
  alterBrokerConfigs(changes: BrokerConfigChange[], validateOnly: boolean): Promise<{ resourceName: string; errorCode: number; errorMessage: string | null }[]>;
  allocateProducerIds(brokerId: number, brokerEpoch: bigint, blockSize: number): Promise<{ first: bigint; size: number }>;
  electLeaders(electionType: number, topicPartitions: { topic: string; partitions: number[] }[] | null): Promise<ElectLeadersResult[]>;
  isInternal(topic: string): boolean;
  /** AlterClientQuotas (KIP-546): one result per distinct entity; validate_only writes nothing. */
  alterClientQuotas(alterations: ClientQuotaAlteration[], validateOnly: boolean): Promise<ClientQuotaAlterationResult[]>;
  /** AlterUserScramCredentials: one result per distinct user (scram-control-manager.ts). */
  alterUserScramCredentials(deletions: ScramCredentialDeletion[], upsertions: ScramCredentialUpsertion[]): Promise<ScramAlterationResult[]>;
  /** CreateAcls (acl-control-manager.ts): one result per binding, in order; all records or none. */
  createAcls(bindings: AclBinding[]): Promise<AclCreateResult[]>;
  /** DeleteAcls: one result per filter, in order, with the ACLs each matched; all removals or none. */
  deleteAcls(filters: AclBindingFilter[]): Promise<AclDeleteResult[]>;
  /** UpdateFeatures (feature-control-manager.ts): all updates or none; NONE, or the first failure as INVALID_UPDATE_VERSION. */
  updateFeatures(updates: FeatureUpdate[], validateOnly: boolean): Promise<{ errorCode: number; errorMessage: string | null }>;
  /** AlterPartitionReassignments (KIP-455, partition-reassignment.ts): one result per partition, in order; all records or none. */
  alterPartitionReassignments(topics: ReassignmentRequestTopic[]): Promise<ReassignmentResultTopic[]>;
  /**
   * ListPartitionReassignments (KIP-455): the reassignments in progress in the controller's image
   * (topics null: all of them), which includes every reassignment the controller has committed.
   */
  listPartitionReassignments(topics: readonly { name: string; partitionIndexes: number[] }[] | null): Promise<ListReassignmentsResult>;
}

export class Controller implements ControllerApi {
  readonly image: MetadataCache;
  private readonly queue = new SerialQueue();
  private readonly listeners: MetadataListener[] = [];
  private nextBrokerEpoch = 1n;
  private readonly log: Logger;
  private readonly sessions = new Map<number, BrokerSession>();
  private readonly now: () => number;
  private readonly timers: NodeJS.Timeout[] = [];
  private timersWanted = false;
  private closed = false;
  /** The single-writer log, or (quorum mode) the committed batches. */
  private readonly metaLog: MetadataLog;
  private readonly quorum: QuorumLog | null;
  /** Quorum mode: the epoch this controller is active in (ready once its bootstrap batch, if any, is committed). */
  private active: { epoch: number; ready: boolean } | null = null;
  /** Quorum mode: the highest epoch among the committed batches applied. */
  private lastCommittedEpoch = -1;
  /** Writes waiting for the feed to apply their batch. */
  private appliedWaiters: { offset: bigint; resolve: () => void; reject: (err: Error) => void }[] = [];
  /** Next broker epoch after every committed registration (an active controller starts from it). */
  private committedNextBrokerEpoch = 1n;
  /** Offset of each broker's committed RegisterBrokerRecord (a fresh session after a failover starts from it). */
  private readonly registerOffsets = new Map<number, bigint>();
  /** Validation and records of client quota changes; reads the current quotas from this controller's image. */
  private readonly clientQuotaControl = new ClientQuotaControlManager({ current: (entity) => this.image.clientQuota(entity) });
  /** Validation and records of SCRAM credential changes; reads existing credentials from this controller's image. */
  /** Validation and records of ACL changes; knows the current ACLs by following this controller's image. */
  private readonly aclControl = new AclControlManager();
  /** Quorum mode: data bytes committed since the last snapshot, when it was taken, and the last batch's timestamp. */
  private snapshotState = { bytesSince: 0, takenAt: 0, lastTimestamp: 0, count: 0 };
  private readonly scramControl = new ScramControlManager({ exists: (user, mechanism) => this.image.scramCredential(user, mechanism) !== undefined });

  constructor(private readonly opts: ControllerOptions) {
    if ((opts.log === undefined) === (opts.quorum === undefined)) throw new Error('a controller needs exactly one of `log` (single writer) and `quorum`');
    this.image = new MetadataCache(opts.clusterId);
    // The ACL manager follows this image from the start, so the replay below brings it up to date.
    this.image.subscribeAcls((changes, snapshot) => this.aclControl.replay(changes, snapshot));
    this.log = opts.logger;
    this.now = opts.now ?? Date.now;
    if (opts.quorum) {
      // Quorum mode: the image is built from the committed-batch feed only (the registration
      // replays what is committed so far); this controller writes once it claims leadership.
      this.quorum = opts.quorum;
      this.metaLog = new CommittedMetadataLog();
      this.snapshotState.takenAt = this.now();
      opts.quorum.register({
        onCommit: (batch) => this.handleCommit(batch),
        onLeaderChange: (leader) => this.handleLeaderChange(leader),
        onLoadSnapshot: (snapshot) => this.handleLoadSnapshot(snapshot),
      });
      return;
    }
    this.quorum = null;
    this.metaLog = opts.log!;
    for (const batch of this.metaLog.readAll()) {
      this.image.apply(batch.records, batch.lastOffset);
      this.trackBrokerEpochs(batch.records, batch.lastOffset);
    }
    // The finalized features come first in a fresh log, as in Kafka's bootstrap metadata. A log an
    // older krill wrote has none: it is finalized at the same levels, which is what that krill did.
    const { features, bootstrap } = this.bootstrapPlan();
    if (this.metaLog.logEndOffset === 0n) {
      this.commitLocal([...features, ...bootstrap]);
      this.log.info(`wrote ${features.length + bootstrap.length} bootstrap record(s) to the fresh metadata log`);
    } else {
      if (bootstrap.length > 0) this.log.info(`the metadata log is not empty: ${bootstrap.length} bootstrap record(s) not written`);
      if (features.length > 0) {
        this.commitLocal(features);
        this.log.info(`the metadata log had no metadata.version: finalized ${[...BOOTSTRAP_FEATURE_LEVELS].map(([n, l]) => `${n}=${l}`).join(', ')}`);
      }
    }
  }

  /** The FeatureLevelRecords to finalize when the image has no metadata.version, and the configured bootstrap records. */
  private bootstrapPlan(): { features: MetadataRecord[]; bootstrap: readonly MetadataRecord[] } {
    const features: MetadataRecord[] =
      this.image.featureLevel(FeatureName.METADATA_VERSION) === 0
        ? [...BOOTSTRAP_FEATURE_LEVELS].map(([name, featureLevel]): MetadataRecord => ({ type: 'FeatureLevelRecord', data: { name, featureLevel } }))
        : [];
    return { features, bootstrap: this.opts.bootstrapRecords ?? [] };
  }

  /** Follows the committed RegisterBrokerRecords: the next broker epoch, and each broker's registration offset. */
  private trackBrokerEpochs(records: readonly MetadataRecord[], lastOffset: bigint): void {
    let offset = lastOffset - BigInt(records.length) + 1n;
    for (const r of records) {
      if (r.type === 'RegisterBrokerRecord') {
        if (r.data.brokerEpoch >= this.committedNextBrokerEpoch) this.committedNextBrokerEpoch = r.data.brokerEpoch + 1n;
        if (r.data.brokerEpoch >= this.nextBrokerEpoch) this.nextBrokerEpoch = r.data.brokerEpoch + 1n;
        this.registerOffsets.set(r.data.brokerId, offset);
      }
      offset++;
    }
  }

  /** Replays the whole log to the listener (unless `replay` is false), then keeps it informed of every new batch. */
  subscribe(listener: MetadataListener, replay = true): void {
    if (replay) for (const batch of this.metaLog.readAll()) listener(batch.records, batch.lastOffset);
    this.listeners.push(listener);
  }

  /**
   * The log itself (the controller listener serves it to brokers as `__cluster_metadata`); in
   * quorum mode, the committed batches (CommittedMetadataLog), with the raft log's offsets.
   */
  get metadataLog(): MetadataLog {
    return this.metaLog;
  }

  /** In quorum mode: whether this controller is the active one (it leads the quorum and has claimed). */
  get isActiveController(): boolean {
    return this.quorum === null || (this.active !== null && this.active.ready);
  }

  /**
   * Throws NOT_CONTROLLER unless this controller is the active one (always passes outside quorum
   * mode): for handlers that would otherwise read this controller's own image first, where a
   * standby that has not applied a change yet would give a wrong answer instead of sending the
   * client to the active controller.
   */
  assertActive(): void {
    if (!this.isActiveController) throw this.notController();
  }

  /**
   * Every operation runs here, one at a time. In quorum mode only the active controller runs any
   * (checked when the task starts, not when it is queued): elsewhere it fails with NOT_CONTROLLER,
   * as Kafka's QuorumController answers requests that reach a standby controller.
   */
  private run<T>(task: () => Promise<T> | T): Promise<T> {
    return this.queue.run(() => {
      if (this.quorum !== null && (this.active === null || !this.active.ready)) throw this.notController();
      return task();
    });
  }

  private notController(): KafkaError {
    const l = this.quorum?.leader();
    return new KafkaError(ErrorCode.NOT_CONTROLLER, `This controller (node ${this.opts.nodeId}) is not the active controller${l && l.id >= 0 ? `; the quorum leader is ${l.id} in epoch ${l.epoch}` : ''}.`);
  }

  /**
   * Writes one atomic batch and answers once it is in the image and the listeners have seen it.
   * Single writer: the append is durable on return, so this applies at once (commitLocal). Quorum:
   * the batch goes through QuorumLog.append and is applied by the committed-batch feed; this waits
   * for both, and fails with NOT_CONTROLLER if leadership is lost first (nothing is applied then,
   * unless a later leader commits the batch, which every controller then applies from the feed).
   */
  private async commit(records: MetadataRecord[]): Promise<bigint> {
    if (records.length === 0) return this.image.lastAppliedOffset;
    if (this.quorum === null) return this.commitLocal(records);
    if (this.active === null) throw this.notController();
    let lastOffset: bigint;
    try {
      lastOffset = await this.quorum.append(records);
    } catch (err) {
      if (err instanceof KafkaError && err.code === ErrorCode.NOT_CONTROLLER) throw err;
      if (!(err instanceof NotLeaderError)) throw err;
      this.log.info('a metadata write was not committed before leadership was lost', { err: String(err) });
      throw this.notController();
    }
    // Committed; answered once the feed has applied it here (Kafka completes a write when the
    // committed offset passes it, and fails it with NOT_CONTROLLER if it renounces first).
    if (this.image.lastAppliedOffset < lastOffset) {
      await new Promise<void>((resolve, reject) => this.appliedWaiters.push({ offset: lastOffset, resolve, reject }));
    }
    return lastOffset;
  }

  /** The single-writer path: append (durable on return), apply to the image, notify. */
  private commitLocal(records: MetadataRecord[]): bigint {
    if (records.length === 0) return this.image.lastAppliedOffset;
    const lastOffset = this.metaLog.append(records);
    this.applyCommitted(records, lastOffset);
    return lastOffset;
  }

  private applyCommitted(records: MetadataRecord[], lastOffset: bigint): void {
    this.image.apply(records, lastOffset);
    if (records.length === 0) return;
    for (const l of this.listeners) {
      try {
        l(records, lastOffset);
      } catch (err) {
        this.log.error('metadata listener failed', { err, lastOffset });
      }
    }
  }

  // ------------------------------------------------------------------ quorum mode

  /** Kafka's QuorumMetaLogListener.handleCommit: apply the committed batch, then maybe claim. */
  private handleCommit(batch: CommittedBatch): void {
    if (batch.lastOffset <= this.image.lastAppliedOffset) return;
    (this.metaLog as CommittedMetadataLog).appendCommitted(batch.records, batch.lastOffset);
    this.trackBrokerEpochs(batch.records, batch.lastOffset);
    this.applyCommitted(batch.records, batch.lastOffset);
    if (batch.epoch > this.lastCommittedEpoch) this.lastCommittedEpoch = batch.epoch;
    this.resolveAppliedWaiters(batch.lastOffset);
    if (batch.records.length > 0) {
      this.snapshotState.bytesSince += batch.sizeInBytes ?? batch.records.reduce((n, r) => n + encodeMetadataRecord(r).length, 0);
    }
    if (batch.appendTimestamp !== undefined) this.snapshotState.lastTimestamp = batch.appendTimestamp;
    this.maybeSnapshot(batch);
    this.maybeClaim();
  }

  private resolveAppliedWaiters(lastOffset: bigint): void {
    const due = this.appliedWaiters.filter((w) => w.offset <= lastOffset);
    if (due.length > 0) {
      this.appliedWaiters = this.appliedWaiters.filter((w) => w.offset > lastOffset);
      for (const w of due) w.resolve();
    }
  }

  /** Snapshots taken by this controller so far (quorum mode). */
  get snapshotsTaken(): number {
    return this.snapshotState.count;
  }

  /**
   * Kafka's SnapshotGenerator: after a committed batch, snapshot the image at its end when enough
   * data bytes were committed since the last snapshot, or enough time passed with some.
   */
  private maybeSnapshot(batch: CommittedBatch): void {
    const quorum = this.quorum;
    if (!quorum?.createSnapshot || this.closed) return;
    const policy = this.opts.snapshots ?? DEFAULT_SNAPSHOT_POLICY;
    const st = this.snapshotState;
    if (st.bytesSince === 0) return;
    const now = this.now();
    const bySize = st.bytesSince >= policy.maxRecordBytesBetween;
    const byTime = policy.maxIntervalMs > 0 && now - st.takenAt >= policy.maxIntervalMs;
    if (!bySize && !byTime) return;
    const id = { offset: batch.lastOffset + 1n, epoch: batch.epoch };
    const started = Date.now();
    const bytes = st.bytesSince;
    st.bytesSince = 0;
    st.takenAt = now;
    try {
      const records = this.image.imageRecords();
      quorum.createSnapshot(id, records, st.lastTimestamp);
      (this.metaLog as CommittedMetadataLog).compactTo(id.offset, records);
      st.count++;
      this.log.info(`wrote metadata snapshot ${id.offset}/${id.epoch}: ${records.length} records, after ${bytes} bytes of records ${bySize ? '(metadata.log.max.record.bytes.between.snapshots)' : '(metadata.log.max.snapshot.interval.ms)'}, in ${Date.now() - started} ms`);
    } catch (err) {
      this.log.error(`writing metadata snapshot ${id.offset}/${id.epoch} failed`, { err: String(err) });
    }
  }

  /**
   * Kafka's handleLoadSnapshot: the quorum's log starts with this snapshot (a restart, or a download
   * from the leader). The image becomes exactly the snapshot's (the delta applied as one batch at
   * the snapshot's last offset), the committed log restarts from it, broker registration offsets
   * become the snapshot's last offset and the broker epoch counter moves past every epoch in it.
   */
  private handleLoadSnapshot(snapshot: LoadedSnapshot): void {
    const last = snapshot.id.offset - 1n;
    if (last <= this.image.lastAppliedOffset && this.image.lastAppliedOffset >= 0n) return;
    const started = Date.now();
    const delta = snapshotDelta(this.image, snapshot.records);
    (this.metaLog as CommittedMetadataLog).resetToSnapshot(snapshot.id.offset, snapshot.records);
    this.applyCommitted(delta, last);
    this.registerOffsets.clear();
    for (const b of this.image.allBrokers()) {
      this.registerOffsets.set(b.id, last);
      if (b.epoch >= this.committedNextBrokerEpoch) this.committedNextBrokerEpoch = b.epoch + 1n;
      if (b.epoch >= this.nextBrokerEpoch) this.nextBrokerEpoch = b.epoch + 1n;
    }
    if (snapshot.id.epoch > this.lastCommittedEpoch) this.lastCommittedEpoch = snapshot.id.epoch;
    this.snapshotState.bytesSince = 0;
    this.snapshotState.takenAt = this.now();
    this.resolveAppliedWaiters(last);
    this.log.info(`loaded metadata snapshot ${snapshot.id.offset}/${snapshot.id.epoch}: ${snapshot.records.length} records (${delta.length} applied) in ${Date.now() - started} ms`);
    this.maybeClaim();
  }

  /** Kafka's handleLeaderChange: renounce if this controller no longer leads that epoch, claim once it can. */
  private handleLeaderChange(leader: QuorumLeader): void {
    if (this.active !== null && (leader.id !== this.opts.nodeId || leader.epoch !== this.active.epoch)) this.renounce();
    this.maybeClaim();
  }

  /**
   * Becomes the active controller once the quorum names this node leader of epoch E and the image
   * has applied a committed batch of epoch E (the LeaderChange record that opens it: everything of
   * earlier epochs is then committed and applied). Every registered broker gets a fresh session
   * (a failover alone fences nobody), the broker epoch and producer id counters continue from the
   * committed state, the timers start, and a fresh log gets its bootstrap records first.
   */
  private maybeClaim(): void {
    if (this.quorum === null || this.active !== null || this.closed) return;
    const leader = this.quorum.leader();
    if (leader.id !== this.opts.nodeId || this.lastCommittedEpoch < leader.epoch) return;
    const active = { epoch: leader.epoch, ready: false };
    this.active = active;
    this.nextBrokerEpoch = this.committedNextBrokerEpoch;
    this.sessions.clear();
    if (this.opts.sessions) {
      const now = this.now();
      for (const b of this.image.allBrokers()) {
        this.sessions.set(b.id, { lastSeenMs: now, registerOffset: this.registerOffsets.get(b.id) ?? -1n, metadataOffset: -1n, controlledShutdownOffset: null, shutdownNow: false });
      }
    }
    this.log.info(`became the active controller in epoch ${leader.epoch} at committed offset ${this.image.lastAppliedOffset}`);
    const { features, bootstrap } = this.bootstrapPlan();
    const fresh = this.metaLog.logEndOffset === 0n;
    const records = fresh ? [...features, ...bootstrap] : features;
    if (records.length === 0) {
      active.ready = true;
      this.startTimers();
      return;
    }
    // The bootstrap batch goes first, ahead of any request (those fail until it is committed).
    void this.queue
      .run(async () => {
        if (this.active !== active) return;
        await this.commit(records);
        if (this.active !== active) return;
        active.ready = true;
        this.log.info(`wrote ${records.length} bootstrap record(s) to the ${fresh ? 'fresh' : ''} metadata log`);
        this.startTimers();
      })
      .catch((err) => this.log.info('bootstrap records not committed (leadership lost)', { err: String(err) }));
  }

  /** Kafka's renounce: stop acting as the active controller; waiting writes fail with NOT_CONTROLLER. */
  private renounce(): void {
    if (this.active === null) return;
    this.log.info(`renouncing the active controller role of epoch ${this.active.epoch}`);
    this.active = null;
    this.stopTimers();
    this.sessions.clear();
    const waiters = this.appliedWaiters;
    this.appliedWaiters = [];
    for (const w of waiters) w.reject(this.notController());
  }

  /** The offset of the last committed batch (the metadata log's end - 1). */
  get lastCommittedOffset(): bigint {
    return this.image.lastAppliedOffset;
  }

  get clusterMode(): boolean {
    return this.opts.sessions !== undefined;
  }

  /**
   * Starts the cluster-mode timers: session expiry (a quarter of broker.session.timeout.ms, so a
   * dead broker is fenced within 1.25 session timeouts) and the preferred-leader check. Both are
   * unref'd and stopped by close(). In quorum mode they run only while this controller is active:
   * started at each claim, stopped at each renounce.
   */
  start(): void {
    if (!this.opts.sessions || this.closed) return;
    this.timersWanted = true;
    if (this.isActiveController) this.startTimers();
  }

  private startTimers(): void {
    if (!this.opts.sessions || this.closed || !this.timersWanted || this.timers.length > 0) return;
    const tick = Math.max(20, Math.floor(this.opts.sessions.sessionTimeoutMs / 4));
    const t = setInterval(() => void this.fenceStaleBrokers().catch((err) => this.log.error('fencing stale brokers failed', { err })), tick);
    t.unref();
    this.timers.push(t);
    const every = this.opts.autoLeaderRebalanceIntervalMs;
    if (every && every > 0) {
      const r = setInterval(() => void this.balancePartitionLeaders().catch((err) => this.log.error('preferred leader election failed', { err })), every);
      r.unref();
      this.timers.push(r);
    }
  }

  private stopTimers(): void {
    for (const t of this.timers) clearInterval(t);
    this.timers.length = 0;
  }

  /**
   * BrokerRegistration. In cluster mode the broker starts fenced, and a registration for an id
   * whose previous incarnation still has a live session is refused (DUPLICATE_BROKER_REGISTRATION);
   * a previous incarnation that is no longer alive is fenced out of its ISRs and leaderships first.
   * A broker that cannot run at every finalized feature level is refused (UNSUPPORTED_VERSION,
   * checkBrokerFeatures); the record keeps the ranges it registered with.
   */
  registerBroker(reg: BrokerRegistration): Promise<bigint> {
    return this.run(async () => {
      const existing = this.image.broker(reg.brokerId);
      const records: MetadataRecord[] = [];
      if (this.opts.sessions && existing) {
        const session = this.sessions.get(reg.brokerId);
        const alive = !existing.fenced && session !== undefined && this.now() - session.lastSeenMs <= this.opts.sessions.sessionTimeoutMs;
        if (alive && existing.incarnationId !== reg.incarnationId) {
          throw new KafkaError(
            ErrorCode.DUPLICATE_BROKER_REGISTRATION,
            `Another broker is registered with that broker id ${reg.brokerId} and its session has not timed out.`,
          );
        }
        records.push(...this.removeFromIsrsAndLeaderships(reg.brokerId, 'a new registration'));
      }
      const features = checkBrokerFeatures(this.image.finalizedFeatures(), reg.features ?? supportedFeatureRecords());
      if (!features.ok) throw new KafkaError(ErrorCode.UNSUPPORTED_VERSION, features.message);
      const brokerEpoch = this.nextBrokerEpoch++;
      records.push({
        type: 'RegisterBrokerRecord',
        data: {
          brokerId: reg.brokerId,
          isMigratingZkBroker: false,
          incarnationId: reg.incarnationId,
          brokerEpoch,
          endPoints: reg.endpoints,
          features: features.features,
          rack: reg.rack,
          fenced: this.opts.sessions !== undefined,
          inControlledShutdown: false,
          logDirs: reg.logDirs,
        },
      });
      const offset = await this.commit(records);
      if (this.opts.sessions) {
        this.sessions.set(reg.brokerId, {
          lastSeenMs: this.now(),
          registerOffset: offset,
          metadataOffset: -1n,
          controlledShutdownOffset: null,
          shutdownNow: false,
        });
        this.log.info(`registered broker ${reg.brokerId} with epoch ${brokerEpoch} (fenced until it catches up)`);
      }
      return brokerEpoch;
    });
  }

  /** STALE_BROKER_EPOCH / BROKER_ID_NOT_REGISTERED unless `epoch` is the broker's current one. */
  private checkBrokerEpoch(brokerId: number, epoch: bigint): void {
    const b = this.image.broker(brokerId);
    if (!b) throw new KafkaError(ErrorCode.BROKER_ID_NOT_REGISTERED, `No broker with id ${brokerId} is registered.`);
    if (b.epoch !== epoch) {
      throw new KafkaError(ErrorCode.STALE_BROKER_EPOCH, `Expected broker epoch ${b.epoch}, but got broker epoch ${epoch}`);
    }
  }

  private isActive = (id: number): boolean => this.image.isActive(id);

  private hasLeaderships(brokerId: number): boolean {
    for (const t of this.image.topics()) for (const p of t.partitions.values()) if (p.leader === brokerId) return true;
    return false;
  }

  private *allPartitions(): Generator<{ topic: string; p: PartitionState }> {
    for (const t of this.image.topics()) for (const p of t.partitions.values()) yield { topic: t.name, p };
  }

  private change(data: PartitionChangeRecordData): MetadataRecord {
    return { type: 'PartitionChangeRecord', data };
  }

  private election(topic: string): Election {
    return this.uncleanLeaderElectionEnabled(topic) ? 'UNCLEAN' : 'ONLINE';
  }

  /**
   * unclean.leader.election.enable for a topic, resolved as Kafka's controller resolves a topic
   * config (ConfigurationControlManager.getTopicConfig): the topic's own value, else the dynamic
   * config of this controller's node (BROKER resource = its node id), else the dynamic cluster
   * default (BROKER resource ""), else this node's static config. A value that is not "true"
   * (case-insensitive) is false, as Boolean.parseBoolean reads it.
   */
  uncleanLeaderElectionEnabled(topic: string): boolean {
    const name = 'unclean.leader.election.enable';
    const value =
      this.image.topicConfig(topic).get(name) ??
      this.image.brokerConfig(String(this.opts.nodeId)).get(name) ??
      this.image.brokerConfig('').get(name);
    if (value !== undefined) return value.trim().toLowerCase() === 'true';
    return this.opts.staticUncleanLeaderElection?.() ?? false;
  }

  /** Removes `brokerId` from every ISR it is in and moves its leaderships (fencing, controlled shutdown). */
  private removeFromIsrsAndLeaderships(brokerId: number, why: string): MetadataRecord[] {
    const out: MetadataRecord[] = [];
    for (const { topic, p } of this.allPartitions()) {
      if (!p.isr.includes(brokerId) && p.leader !== brokerId) continue;
      const rec = buildPartitionChange(p, {
        targetIsr: p.isr.filter((r) => r !== brokerId),
        isAcceptableLeader: (r) => r !== brokerId && this.isActive(r),
        election: this.election(topic),
      });
      if (rec) out.push(this.change(rec));
    }
    if (out.length > 0) this.log.info(`${why} of broker ${brokerId}: changing ${out.length} partition(s)`);
    return out;
  }

  private fenceRecords(brokerId: number, why: string): MetadataRecord[] {
    const b = this.image.broker(brokerId)!;
    return [
      ...this.removeFromIsrsAndLeaderships(brokerId, why),
      {
        type: 'BrokerRegistrationChangeRecord',
        data: { brokerId, brokerEpoch: b.epoch, fenced: FencingChange.FENCE, inControlledShutdown: ControlledShutdownChange.NONE, logDirs: [] },
      },
    ];
  }

  private unfenceRecords(brokerId: number, brokerEpoch: bigint): MetadataRecord[] {
    const out: MetadataRecord[] = [
      {
        type: 'BrokerRegistrationChangeRecord',
        data: { brokerId, brokerEpoch, fenced: FencingChange.UNFENCE, inControlledShutdown: ControlledShutdownChange.NONE, logDirs: [] },
      },
    ];
    // Partitions without a leader may now have one (the image still shows the broker fenced).
    for (const { topic, p } of this.allPartitions()) {
      if (p.leader !== -1) continue;
      const rec = buildPartitionChange(p, { isAcceptableLeader: (r) => r === brokerId || this.isActive(r), election: this.election(topic) });
      if (rec) out.push(this.change(rec));
    }
    return out;
  }

  /**
   * BrokerHeartbeat (Kafka's BrokerHeartbeatManager states): FENCED -> UNFENCED once the broker
   * asks (wantFence false) and has applied its own registration; UNFENCED -> CONTROLLED_SHUTDOWN
   * on wantShutDown while it leads partitions (they move at once), else straight to SHUTDOWN_NOW;
   * CONTROLLED_SHUTDOWN -> SHUTDOWN_NOW (fenced, shouldShutDown) once it leads nothing and every
   * active broker has seen the leadership changes.
   */
  heartbeat(req: BrokerHeartbeatInput): Promise<BrokerHeartbeatReply> {
    return this.run(async () => {
      if (!this.opts.sessions) throw new KafkaError(ErrorCode.UNSUPPORTED_VERSION, 'broker heartbeats need a cluster-mode controller');
      this.checkBrokerEpoch(req.brokerId, req.brokerEpoch);
      const b = this.image.broker(req.brokerId)!;
      let session = this.sessions.get(req.brokerId);
      if (!session) {
        // Registered before this controller started: its registration offset is in the past.
        session = { lastSeenMs: this.now(), registerOffset: -1n, metadataOffset: -1n, controlledShutdownOffset: null, shutdownNow: false };
        this.sessions.set(req.brokerId, session);
      }
      session.lastSeenMs = this.now();
      session.metadataOffset = req.currentMetadataOffset;
      const records: MetadataRecord[] = [];
      if (b.fenced) {
        if (req.wantShutDown) session.shutdownNow = true;
        else if (!req.wantFence && req.currentMetadataOffset >= session.registerOffset) {
          records.push(...this.unfenceRecords(req.brokerId, b.epoch));
          this.log.info(`unfencing broker ${req.brokerId} (epoch ${b.epoch})`);
        }
      } else if (b.inControlledShutdown) {
        if (req.wantFence || (!this.hasLeaderships(req.brokerId) && this.lowestActiveMetadataOffset(req.brokerId) >= (session.controlledShutdownOffset ?? -1n))) {
          session.shutdownNow = true;
          records.push(...this.fenceRecords(req.brokerId, 'shutdown'));
          this.log.info(`broker ${req.brokerId} completed its controlled shutdown`);
        } else {
          // Leaderships that could not move before (no other ISR member) may be movable now.
          records.push(...this.removeFromIsrsAndLeaderships(req.brokerId, 'controlled shutdown'));
        }
      } else if (req.wantFence) {
        if (req.wantShutDown) session.shutdownNow = true;
        records.push(...this.fenceRecords(req.brokerId, 'fencing on request'));
      } else if (req.wantShutDown) {
        if (this.hasLeaderships(req.brokerId)) {
          records.push(
            {
              type: 'BrokerRegistrationChangeRecord',
              data: {
                brokerId: req.brokerId,
                brokerEpoch: b.epoch,
                fenced: FencingChange.NONE,
                inControlledShutdown: ControlledShutdownChange.IN_CONTROLLED_SHUTDOWN,
                logDirs: [],
              },
            },
            ...this.removeFromIsrsAndLeaderships(req.brokerId, 'controlled shutdown'),
          );
          this.log.info(`broker ${req.brokerId} entered controlled shutdown`);
        } else {
          session.shutdownNow = true;
          records.push(...this.fenceRecords(req.brokerId, 'shutdown'));
        }
      }
      const offset = await this.commit(records);
      if (records.length > 0 && this.image.broker(req.brokerId)?.inControlledShutdown && session.controlledShutdownOffset === null) {
        session.controlledShutdownOffset = offset;
      }
      const after = this.image.broker(req.brokerId)!;
      return {
        isCaughtUp: req.currentMetadataOffset >= session.registerOffset,
        isFenced: after.fenced,
        inControlledShutdown: after.inControlledShutdown,
        shouldShutDown: session.shutdownNow,
      };
    });
  }

  /** The smallest metadata offset reported by the other active brokers (how far the slowest has read). */
  private lowestActiveMetadataOffset(except: number): bigint {
    let lowest = this.image.lastAppliedOffset;
    for (const b of this.image.aliveBrokers()) {
      if (b.id === except || b.inControlledShutdown) continue;
      const s = this.sessions.get(b.id);
      if (s && s.metadataOffset < lowest) lowest = s.metadataOffset;
    }
    return lowest;
  }

  /** Fences every unfenced broker whose session has expired. */
  fenceStaleBrokers(): Promise<number[]> {
    return this.run(async () => {
      const timeout = this.opts.sessions?.sessionTimeoutMs;
      if (timeout === undefined || this.closed) return [];
      const now = this.now();
      const fenced: number[] = [];
      for (const b of this.image.allBrokers()) {
        if (b.fenced) continue;
        const s = this.sessions.get(b.id);
        if (s && now - s.lastSeenMs <= timeout) continue;
        if (!s) {
          // Known from the log but never heard from since this controller started: give it a session.
          this.sessions.set(b.id, { lastSeenMs: now, registerOffset: -1n, metadataOffset: -1n, controlledShutdownOffset: null, shutdownNow: false });
          continue;
        }
        this.log.info(`fencing broker ${b.id} because its session has timed out (${now - s.lastSeenMs} ms since its last heartbeat)`);
        await this.commit(this.fenceRecords(b.id, 'fencing'));
        fenced.push(b.id);
      }
      return fenced;
    });
  }

  /**
   * AlterPartition from a partition leader: every check of Kafka's validateAlterPartitionData
   * (unknown partition, a newer epoch than ours = NOT_CONTROLLER, older leader epoch =
   * FENCED_LEADER_EPOCH, not the leader = INVALID_REQUEST, older partition epoch =
   * INVALID_UPDATE_VERSION, ISR not a subset of the replicas or without the leader = INVALID_REQUEST,
   * fenced / shutting-down / stale-epoch members = INELIGIBLE_REPLICA (OPERATION_NOT_ATTEMPTED
   * before v2)), then one PartitionChangeRecord per accepted change, all committed together.
   */
  alterPartition(req: AlterPartitionInput, version: number): Promise<AlterPartitionResult> {
    return this.run(async () => {
      try {
        this.checkBrokerEpoch(req.brokerId, req.brokerEpoch);
      } catch (err) {
        return { errorCode: toErrorCode(err), topics: [] };
      }
      const records: MetadataRecord[] = [];
      const topics: AlterPartitionResult['topics'] = [];
      for (const t of req.topics) {
        const topic = version >= 2 ? this.image.topicById(t.topicId ?? '') : this.image.topic(t.topicName ?? '');
        const out = { topicName: version >= 2 ? '' : (t.topicName ?? ''), topicId: version >= 2 ? (t.topicId ?? '') : '', partitions: [] as AlterPartitionPartitionResult[] };
        topics.push(out);
        for (const pd of t.partitions) {
          const fail = (errorCode: number): void => {
            out.partitions.push({ partitionIndex: pd.partitionIndex, errorCode, leaderId: -1, leaderEpoch: -1, isr: [], leaderRecoveryState: 0, partitionEpoch: -1 });
          };
          if (!topic) {
            fail(version >= 2 ? ErrorCode.UNKNOWN_TOPIC_ID : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
            continue;
          }
          const p = topic.partitions.get(pd.partitionIndex);
          const err = this.validateAlterPartition(req.brokerId, p, pd, version);
          if (err !== ErrorCode.NONE || !p) {
            fail(err);
            continue;
          }
          const rec = buildPartitionChange(p, {
            targetIsr: pd.newIsrWithEpochs.map((b) => b.brokerId),
            isAcceptableLeader: this.isActive,
            election: this.election(topic.name),
          });
          let after = p;
          if (rec) {
            records.push(this.change(rec));
            after = this.previewChange(p, rec);
            this.log.info(`broker ${req.brokerId} altered the ISR of ${topic.name}-${p.partition} to [${after.isr.join(',')}] (partition epoch ${after.partitionEpoch})`);
          }
          out.partitions.push({
            partitionIndex: p.partition,
            errorCode: ErrorCode.NONE,
            leaderId: after.leader,
            leaderEpoch: after.leaderEpoch,
            isr: after.isr,
            leaderRecoveryState: after.leaderRecoveryState,
            partitionEpoch: after.partitionEpoch,
          });
        }
      }
      await this.commit(records);
      return { errorCode: ErrorCode.NONE, topics };
    });
  }

  private validateAlterPartition(brokerId: number, p: PartitionState | undefined, pd: AlterPartitionInput['topics'][number]['partitions'][number], version: number): number {
    if (!p) return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
    if (pd.leaderEpoch > p.leaderEpoch || pd.partitionEpoch > p.partitionEpoch) return ErrorCode.NOT_CONTROLLER;
    if (pd.leaderEpoch < p.leaderEpoch) return ErrorCode.FENCED_LEADER_EPOCH;
    if (brokerId !== p.leader) return ErrorCode.INVALID_REQUEST;
    if (pd.partitionEpoch < p.partitionEpoch) return ErrorCode.INVALID_UPDATE_VERSION;
    const newIsr = pd.newIsrWithEpochs.map((b) => b.brokerId);
    if (new Set(newIsr).size !== newIsr.length || !newIsr.every((r) => p.replicas.includes(r))) return ErrorCode.INVALID_REQUEST;
    if (!newIsr.includes(p.leader)) return ErrorCode.INVALID_REQUEST;
    for (const m of pd.newIsrWithEpochs) {
      const b = this.image.broker(m.brokerId);
      if (!b || b.inControlledShutdown || b.fenced || (m.brokerEpoch !== -1n && m.brokerEpoch !== b.epoch)) {
        return version > 1 ? ErrorCode.INELIGIBLE_REPLICA : ErrorCode.OPERATION_NOT_ATTEMPTED;
      }
    }
    return ErrorCode.NONE;
  }

  /** The partition as it will be once `rec` is applied (the response reports it before commit). */
  private previewChange(p: PartitionState, rec: PartitionChangeRecordData): PartitionState {
    return {
      ...p,
      isr: rec.isr ? [...rec.isr] : p.isr,
      leader: rec.leader !== -2 ? rec.leader : p.leader,
      leaderEpoch: rec.leader !== -2 ? p.leaderEpoch + 1 : p.leaderEpoch,
      partitionEpoch: p.partitionEpoch + 1,
    };
  }

  /**
   * ElectLeaders: PREFERRED moves leadership to the first replica if it is in the ISR and active
   * (ELECTION_NOT_NEEDED if it already leads, PREFERRED_LEADER_NOT_AVAILABLE if it cannot);
   * UNCLEAN elects a leader for a partition that has none, from outside the ISR if need be
   * (ELECTION_NOT_NEEDED if it has one, ELIGIBLE_LEADERS_NOT_AVAILABLE if no replica is active).
   * A null topic list means every partition, reporting only those where an election was needed.
   * Unknown topics and partitions (any index the topic does not have) are UNKNOWN_TOPIC_OR_PARTITION
   * with Kafka's messages; a partition listed twice is answered at each listing, as Kafka's
   * controller does, but gets one PartitionChangeRecord.
   */
  electLeaders(electionType: number, topicPartitions: { topic: string; partitions: number[] }[] | null): Promise<ElectLeadersResult[]> {
    return this.run(async () => {
      if (electionType !== ElectionType.PREFERRED && electionType !== ElectionType.UNCLEAN) {
        throw new KafkaError(ErrorCode.INVALID_REQUEST, `Unknown election type ${electionType}`);
      }
      const records: MetadataRecord[] = [];
      const results: ElectLeadersResult[] = [];
      // A partition listed twice is answered twice (as Kafka does) but changed once.
      const elected = new Map<string, { errorCode: number; errorMessage: string | null }>();
      const electOne = (topic: string, partitionId: number): { errorCode: number; errorMessage: string | null } => {
        const key = topicPartitionKey(topic, partitionId);
        const before = elected.get(key);
        if (before) return before;
        const result = electOnce(topic, partitionId);
        elected.set(key, result);
        return result;
      };
      const electOnce = (topic: string, partitionId: number): { errorCode: number; errorMessage: string | null } => {
        if (!this.image.topic(topic)) return { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: `No such topic as ${topic}` };
        const p = this.image.partition(topic, partitionId);
        if (!p) return { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: `No such partition as ${topic}-${partitionId}` };
        if ((electionType === ElectionType.PREFERRED && p.leader === p.replicas[0]) || (electionType === ElectionType.UNCLEAN && p.leader !== -1)) {
          return { errorCode: ErrorCode.ELECTION_NOT_NEEDED, errorMessage: null };
        }
        const rec = buildPartitionChange(p, {
          isAcceptableLeader: this.isActive,
          election: electionType === ElectionType.PREFERRED ? 'PREFERRED' : 'UNCLEAN',
        });
        const elected = rec && rec.leader !== -2 && (electionType === ElectionType.UNCLEAN || rec.leader === p.replicas[0]);
        if (!rec || !elected) {
          return electionType === ElectionType.PREFERRED
            ? { errorCode: ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE, errorMessage: `Failed to elect leader for partition ${topic}-${partitionId} under strategy PreferredReplicaPartitionLeaderElectionStrategy` }
            : { errorCode: ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE, errorMessage: `Failed to elect leader for partition ${topic}-${partitionId} under strategy UncleanLeaderElectionStrategy` };
        }
        records.push(this.change(rec));
        return { errorCode: ErrorCode.NONE, errorMessage: null };
      };
      if (topicPartitions === null) {
        for (const t of this.image.topics()) {
          const r: ElectLeadersResult = { topic: t.name, partitionResult: [] };
          results.push(r);
          for (const id of [...t.partitions.keys()].sort((a, b) => a - b)) {
            const e = electOne(t.name, id);
            if (e.errorCode !== ErrorCode.ELECTION_NOT_NEEDED) r.partitionResult.push({ partitionId: id, ...e });
          }
        }
      } else {
        for (const t of topicPartitions) {
          results.push({ topic: t.topic, partitionResult: t.partitions.map((id) => ({ partitionId: id, ...electOne(t.topic, id) })) });
        }
      }
      await this.commit(records);
      return results;
    });
  }

  /** auto.leader.rebalance.enable: preferred election for every partition not led by its first replica. */
  balancePartitionLeaders(): Promise<number> {
    return this.run(async () => {
      if (this.closed) return 0;
      const records: MetadataRecord[] = [];
      for (const { p } of this.allPartitions()) {
        if (p.leader === p.replicas[0]) continue;
        const rec = buildPartitionChange(p, { isAcceptableLeader: this.isActive, election: 'PREFERRED' });
        if (rec && rec.leader === p.replicas[0]) records.push(this.change(rec));
      }
      if (records.length > 0) this.log.info(`preferred leader election moved ${records.length} partition(s) back to their preferred replica`);
      await this.commit(records);
      return records.length;
    });
  }

  /**
   * CreateTopics. A request whose topics together would create more than MAX_PARTITIONS_PER_BATCH
   * partitions (Kafka's KAFKA-17870: -1 counts as num.partitions, a manual assignment as its
   * length, other non-positive counts as nothing) is refused as a whole before anything is
   * planned or allocated, validate_only or not: every topic gets POLICY_VIOLATION. Then per topic,
   * in Kafka's order: name, existence, configs, manual assignment or counts, placement. A name
   * listed twice gets INVALID_REQUEST (the request handlers answer duplicates before this).
   */
  createTopics(specs: CreateTopicSpec[], validateOnly: boolean): Promise<CreateTopicResult[]> {
    const refused = this.refuseExcessivePartitions(
      specs.map((s) => (s.assignments.length > 0 ? s.assignments.length : s.numPartitions === -1 ? this.opts.defaultNumPartitions() : s.numPartitions)),
    );
    if (refused) {
      return Promise.resolve(
        specs.map((s) => ({ name: s.name, topicId: '', errorCode: refused.code, errorMessage: refused.message, numPartitions: -1, replicationFactor: -1 })),
      );
    }
    return this.run(async () => {
      const records: MetadataRecord[] = [];
      const results: CreateTopicResult[] = [];
      const seen = new Map<string, number>();
      for (const s of specs) seen.set(s.name, (seen.get(s.name) ?? 0) + 1);
      const claimed = new Set<string>();
      for (const spec of specs) {
        const result: CreateTopicResult = {
          name: spec.name,
          topicId: '',
          errorCode: ErrorCode.NONE,
          errorMessage: null,
          numPartitions: -1,
          replicationFactor: -1,
        };
        results.push(result);
        try {
          if (seen.get(spec.name)! > 1) {
            throw new KafkaError(ErrorCode.INVALID_REQUEST, DUPLICATE_TOPIC_NAME);
          }
          const created = this.planTopic(spec, claimed);
          result.topicId = created.topicId;
          result.numPartitions = created.numPartitions;
          result.replicationFactor = created.replicationFactor;
          if (!validateOnly) records.push(...created.records);
        } catch (err) {
          result.errorCode = toErrorCode(err);
          result.errorMessage = (err as Error).message;
          if (!(err instanceof KafkaError)) this.log.error('createTopics failed', { topic: spec.name, err });
        }
      }
      await this.commit(records);
      return results;
    });
  }

  private planTopic(
    spec: CreateTopicSpec,
    claimed: Set<string>,
  ): { topicId: string; numPartitions: number; replicationFactor: number; records: MetadataRecord[] } {
    validateTopicName(spec.name);
    if (spec.name === CLUSTER_METADATA_TOPIC) {
      throw new KafkaError(ErrorCode.INVALID_REQUEST, `Creation of internal topic ${CLUSTER_METADATA_TOPIC} is prohibited.`);
    }
    if (this.image.topic(spec.name)) {
      throw new KafkaError(ErrorCode.TOPIC_ALREADY_EXISTS, `Topic '${spec.name}' already exists.`);
    }
    const unified = unifyCollisionChars(spec.name);
    for (const t of this.image.topics()) {
      if (unifyCollisionChars(t.name) === unified) {
        throw new KafkaError(
          ErrorCode.INVALID_TOPIC_EXCEPTION,
          `Topic '${spec.name}' collides with existing topic: ${t.name}`,
        );
      }
    }
    if (claimed.has(unified)) {
      throw new KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, `Topic '${spec.name}' collides with another topic in this request`);
    }
    const nullConfigs = spec.configs.filter((c) => c.value === null).map((c) => c.name);
    if (nullConfigs.length > 0) {
      throw new KafkaError(ErrorCode.INVALID_CONFIG, `Null value not supported for topic configs: ${nullConfigs.join(',')}`);
    }
    for (const c of spec.configs) this.opts.validateTopicConfig(c.name, c.value);

    let assignment: number[][];
    if (spec.assignments.length > 0) {
      // ReplicationControlManager.createTopic: the replication factor is checked before the count.
      if (spec.replicationFactor !== -1) {
        throw new KafkaError(ErrorCode.INVALID_REQUEST, 'A manual partition assignment was specified, but replication factor was not set to -1.');
      }
      if (spec.numPartitions !== -1) {
        throw new KafkaError(ErrorCode.INVALID_REQUEST, 'A manual partition assignment was specified, but numPartitions was not set to -1.');
      }
      assignment = this.checkManualAssignment(spec.assignments);
    } else {
      if (spec.replicationFactor < -1 || spec.replicationFactor === 0) {
        throw new KafkaError(ErrorCode.INVALID_REPLICATION_FACTOR, 'Replication factor must be larger than 0, or -1 to use the default value.');
      }
      if (spec.numPartitions < -1 || spec.numPartitions === 0) {
        throw new KafkaError(ErrorCode.INVALID_PARTITIONS, 'Number of partitions was set to an invalid non-positive value.');
      }
      const numPartitions = spec.numPartitions === -1 ? this.opts.defaultNumPartitions() : spec.numPartitions;
      const rf = spec.replicationFactor === -1 ? this.opts.defaultReplicationFactor() : spec.replicationFactor;
      assignment = assignReplicas(this.placeableBrokers(rf), numPartitions, rf, 0);
    }
    claimed.add(unified);
    const topicId = randomUuid();
    const records: MetadataRecord[] = [{ type: 'TopicRecord', data: { name: spec.name, topicId } }];
    for (const c of spec.configs) {
      if (c.value === null) continue;
      records.push({
        type: 'ConfigRecord',
        data: { resourceType: ConfigResourceType.TOPIC, resourceName: spec.name, name: c.name, value: c.value },
      });
    }
    assignment.forEach((replicas, partitionId) => records.push(this.partitionRecord(topicId, partitionId, replicas)));
    return { topicId, numPartitions: assignment.length, replicationFactor: assignment[0]?.length ?? 0, records };
  }

  /**
   * The active brokers new replicas go to, or INVALID_REPLICATION_FACTOR with the replica
   * placer's reasons (Kafka's StripedReplicaPlacer, wrapped as ReplicationControlManager does):
   * a non-positive factor (a bad default), no active broker, fewer active brokers than replicas.
   */
  private placeableBrokers(rf: number): number[] {
    const alive = this.activeBrokerIds();
    const fail = (why: string): never => {
      throw new KafkaError(ErrorCode.INVALID_REPLICATION_FACTOR, `Unable to replicate the partition ${rf} time(s): ${why}`);
    };
    if (rf <= 0) fail(`Invalid replication factor ${rf}: the replication factor must be positive.`);
    if (alive.length === 0) fail('All brokers are currently fenced.');
    if (rf > alive.length) fail(`The target replication factor of ${rf} cannot be reached because only ${alive.length} broker(s) are registered.`);
    return alive;
  }

  /**
   * A manual assignment, checked as ReplicationControlManager does, in request order: a partition
   * index given twice, then each replica list (validateManualPartitionAssignment: empty, a broker
   * that is not registered, a broker twice, a length unlike the previous lists), a list with no
   * active broker, and last the indexes must be 0..n-1. `expectedReplicas` is the topic's
   * replication factor when partitions are added to an existing topic.
   */
  private checkManualAssignment(assignments: { partitionIndex: number; brokerIds: number[] }[], expectedReplicas?: number, firstPartition = 0): number[][] {
    const byIndex = new Map<number, number[]>();
    let rf = expectedReplicas;
    const registered = new Set(this.image.allBrokers().map((b) => b.id));
    for (const a of assignments) {
      if (byIndex.has(a.partitionIndex)) {
        throw new KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `Found multiple manual partition assignments for partition ${a.partitionIndex}`);
      }
      this.validateManualPartitionAssignment(a.brokerIds, registered, rf);
      rf = a.brokerIds.length;
      if (!a.brokerIds.some(this.isActive)) {
        throw new KafkaError(
          ErrorCode.INVALID_REPLICA_ASSIGNMENT,
          `All brokers specified in the manual partition assignment for partition ${firstPartition + a.partitionIndex} are fenced or in controlled shutdown.`,
        );
      }
      byIndex.set(a.partitionIndex, [...a.brokerIds]);
    }
    const out: number[][] = [];
    for (let i = 0; i < byIndex.size; i++) {
      const replicas = byIndex.get(i);
      if (!replicas) throw new KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, 'partitions should be a consecutive 0-based integer sequence');
      out.push(replicas);
    }
    return out;
  }

  private validateManualPartitionAssignment(brokerIds: number[], registered: Set<number>, rf: number | undefined): void {
    if (brokerIds.length === 0) {
      throw new KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, 'The manual partition assignment includes an empty replica list.');
    }
    const sorted = [...brokerIds].sort((a, b) => a - b);
    let prev: number | undefined;
    for (const id of sorted) {
      if (!registered.has(id)) {
        throw new KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `The manual partition assignment includes broker ${id}, but no such broker is registered.`);
      }
      if (id === prev) {
        throw new KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `The manual partition assignment includes the broker ${prev} more than once.`);
      }
      prev = id;
    }
    if (rf !== undefined && sorted.length !== rf) {
      throw new KafkaError(
        ErrorCode.INVALID_REPLICA_ASSIGNMENT,
        `The manual partition assignment includes a partition with ${sorted.length} replica(s), but this is not consistent with previous partitions, which have ${rf} replica(s).`,
      );
    }
  }

  /**
   * KAFKA-17870 / KAFKA-19673: null when the partitions a request would create fit in one
   * metadata batch, else the POLICY_VIOLATION every topic of the request is answered with.
   * Counts that are not positive add nothing (they fail on their own later).
   */
  private refuseExcessivePartitions(counts: number[]): { code: number; message: string } | null {
    let total = 0;
    for (const n of counts) {
      if (n > 0) total += n;
      if (total > MAX_PARTITIONS_PER_BATCH) return { code: ErrorCode.POLICY_VIOLATION, message: EXCESSIVE_PARTITIONS_MESSAGE };
    }
    return null;
  }

  /** Brokers that may host new replicas: registered, unfenced and not shutting down. */
  private activeBrokerIds(): number[] {
    return this.image.aliveBrokers().filter((b) => !b.inControlledShutdown).map((b) => b.id);
  }

  private partitionRecord(topicId: string, partitionId: number, replicas: number[]): MetadataRecord {
    const alive = new Set(this.activeBrokerIds());
    const isr = replicas.filter((r) => alive.has(r));
    return {
      type: 'PartitionRecord',
      data: {
        partitionId,
        topicId,
        replicas,
        isr,
        removingReplicas: [],
        addingReplicas: [],
        leader: isr[0] ?? -1,
        leaderRecoveryState: 0,
        leaderEpoch: 0,
        partitionEpoch: 0,
        directories: [],
        eligibleLeaderReplicas: null,
        lastKnownElr: null,
      },
    };
  }

  deleteTopics(targets: { name: string | null; topicId: string | null }[]): Promise<DeleteTopicResult[]> {
    return this.run(async () => {
      const records: MetadataRecord[] = [];
      const removed = new Set<string>();
      const results = targets.map((t) => {
        const topic = t.name !== null ? this.image.topic(t.name) : this.image.topicById(t.topicId ?? '');
        if (!topic || removed.has(topic.topicId)) {
          return {
            name: t.name,
            topicId: t.topicId ?? '',
            errorCode: t.name !== null ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION : ErrorCode.UNKNOWN_TOPIC_ID,
            errorMessage: t.name !== null ? 'This server does not host this topic-partition.' : 'This server does not host this topic ID.',
          };
        }
        removed.add(topic.topicId);
        records.push({ type: 'RemoveTopicRecord', data: { topicId: topic.topicId } });
        return { name: topic.name, topicId: topic.topicId, errorCode: ErrorCode.NONE, errorMessage: null };
      });
      await this.commit(records);
      return results;
    });
  }

  /**
   * CreatePartitions. Like CreateTopics, a request that would add more than
   * MAX_PARTITIONS_PER_BATCH partitions in all (counted from the current partition counts before
   * anything is planned) is refused as a whole with POLICY_VIOLATION (KAFKA-19673). Per topic, in
   * Kafka's order: unknown (UNKNOWN_TOPIC_OR_PARTITION, no message), not an increase
   * (INVALID_PARTITIONS), assignments of the wrong number or shape (INVALID_REPLICA_ASSIGNMENT),
   * placement (INVALID_REPLICATION_FACTOR).
   */
  createPartitions(specs: CreatePartitionsSpec[], validateOnly: boolean): Promise<{ name: string; errorCode: number; errorMessage: string | null }[]> {
    return this.run(async () => {
      const refused = this.refuseExcessivePartitions(
        specs.map((s) => {
          const t = this.image.topic(s.name);
          return t ? s.count - t.partitions.size : 0;
        }),
      );
      if (refused) return specs.map((s) => ({ name: s.name, errorCode: refused.code, errorMessage: refused.message }));
      const records: MetadataRecord[] = [];
      const results = specs.map((s) => {
        try {
          const topic = this.image.topic(s.name);
          if (!topic) return { name: s.name, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: null };
          const current = topic.partitions.size;
          if (s.count === current) {
            throw new KafkaError(ErrorCode.INVALID_PARTITIONS, `Topic already has ${current} partition(s).`);
          }
          if (s.count < current) {
            throw new KafkaError(
              ErrorCode.INVALID_PARTITIONS,
              `The topic ${s.name} currently has ${current} partition(s); ${s.count} would not be an increase.`,
            );
          }
          const add = s.count - current;
          if (s.assignments && s.assignments.length !== add) {
            throw new KafkaError(
              ErrorCode.INVALID_REPLICA_ASSIGNMENT,
              `Attempted to add ${add} additional partition(s), but only ${s.assignments.length} assignment(s) were specified.`,
            );
          }
          const rf = topic.partitions.get(0)?.replicas.length ?? 1;
          const assignment = s.assignments
            ? this.checkManualAssignment(
                s.assignments.map((a, i) => ({ partitionIndex: i, brokerIds: a.brokerIds })),
                rf,
                current,
              )
            : assignReplicas(this.placeableBrokers(rf), add, rf, current);
          if (!validateOnly) {
            assignment.forEach((replicas, i) => records.push(this.partitionRecord(topic.topicId, current + i, replicas)));
          }
          return { name: s.name, errorCode: ErrorCode.NONE, errorMessage: null };
        } catch (err) {
          if (!(err instanceof KafkaError)) this.log.error('createPartitions failed', { topic: s.name, err });
          return { name: s.name, errorCode: toErrorCode(err), errorMessage: (err as Error).message };
        }
      });
      await this.commit(records);
      return results;
    });
  }

  /**
   * Topic config changes. `incremental` ops follow IncrementalAlterConfigs (SET/DELETE/APPEND/SUBTRACT);
   * a non-incremental AlterConfigs replaces the whole override set.
   */
  alterTopicConfigs(
    changes: { topic: string; ops: AlterConfigOp[]; incremental: boolean }[],
    validateOnly: boolean,
  ): Promise<{ topic: string; errorCode: number; errorMessage: string | null }[]> {
    return this.run(async () => {
      const records: MetadataRecord[] = [];
      const results = changes.map((c) => {
        try {
          if (!this.image.topic(c.topic)) {
            throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `Topic ${c.topic} does not exist.`);
          }
          const current = this.image.topicConfig(c.topic);
          // Like Kafka, a list config without an override starts from its default value.
          const next = applyAlterConfigOps(current, c.ops, c.incremental, (name) => this.opts.topicConfigDefault?.(name) ?? null);
          for (const [k, v] of next) this.opts.validateTopicConfig(k, v);
          if (!validateOnly) {
            const keys = new Set([...current.keys(), ...next.keys()]);
            for (const k of keys) {
              const before = current.get(k) ?? null;
              const after = next.get(k) ?? null;
              if (before === after) continue;
              records.push({
                type: 'ConfigRecord',
                data: { resourceType: ConfigResourceType.TOPIC, resourceName: c.topic, name: k, value: after },
              });
            }
          }
          return { topic: c.topic, errorCode: ErrorCode.NONE, errorMessage: null };
        } catch (err) {
          return { topic: c.topic, errorCode: toErrorCode(err), errorMessage: (err as Error).message };
        }
      });
      await this.commit(records);
      return results;
    });
  }

  /**
   * Client-metrics subscription changes (CLIENT_METRICS resources): each validated against this
   * image and planned by clientMetricsConfigRecords; the records of every accepted change are
   * committed as one batch unless validate_only.
   */
  alterClientMetricsConfigs(changes: ClientMetricsConfigChange[], validateOnly: boolean): Promise<{ name: string; errorCode: number; errorMessage: string | null }[]> {
    return this.run(async () => {
      const records: MetadataRecord[] = [];
      const results = changes.map((c) => {
        try {
          records.push(...clientMetricsConfigRecords(c, this.image.clientMetricsConfig(c.name)));
          return { name: c.name, errorCode: ErrorCode.NONE, errorMessage: null };
        } catch (err) {
          if (!(err instanceof KafkaError)) this.log.error('alterClientMetricsConfigs failed', { subscription: c.name, err });
          return { name: c.name, errorCode: toErrorCode(err), errorMessage: (err as Error).message };
        }
      });
      if (!validateOnly) await this.commit(records);
      return results;
    });
  }

  /**
   * Group config changes (GROUP resources): each validated against this image and this node's
   * group.consumer.* settings and planned by groupConfigRecords; the records of every accepted
   * change are committed as one batch unless validate_only.
   */
  alterGroupConfigs(changes: GroupConfigChange[], validateOnly: boolean): Promise<{ name: string; errorCode: number; errorMessage: string | null }[]> {
    return this.run(async () => {
      const bounds = this.opts.groupConfigBounds?.() ?? GROUP_CONFIG_BOUNDS_DEFAULTS;
      const records: MetadataRecord[] = [];
      const results = changes.map((c) => {
        try {
          records.push(...groupConfigRecords(c, this.image.groupConfig(c.name), bounds));
          return { name: c.name, errorCode: ErrorCode.NONE, errorMessage: null };
        } catch (err) {
          if (!(err instanceof KafkaError)) this.log.error('alterGroupConfigs failed', { group: c.name, err });
          return { name: c.name, errorCode: toErrorCode(err), errorMessage: (err as Error).message };
        }
      });
      if (!validateOnly) await this.commit(records);
      return results;
    });
  }

  /**
   * Dynamic broker config changes: each resource's overrides after its ops, written as the
   * ConfigRecords (BROKER, broker id or "") of the keys that change; validate_only writes nothing.
   */
  alterBrokerConfigs(changes: BrokerConfigChange[], validateOnly: boolean): Promise<{ resourceName: string; errorCode: number; errorMessage: string | null }[]> {
    return this.run(async () => {
      const records: MetadataRecord[] = [];
      const results = changes.map((c) => {
        try {
          validateBrokerResourceName(c.resourceName);
          const current = this.image.brokerConfig(c.resourceName);
          const next = applyAlterConfigOps(current, c.ops, c.incremental, (name) => this.opts.brokerConfigDefault?.(name) ?? null);
          if (!validateOnly) {
            for (const k of new Set([...current.keys(), ...next.keys()])) {
              const after = next.get(k) ?? null;
              if ((current.get(k) ?? null) === after) continue;
              records.push({ type: 'ConfigRecord', data: { resourceType: ConfigResourceType.BROKER, resourceName: c.resourceName, name: k, value: after } });
            }
          }
          return { resourceName: c.resourceName, errorCode: ErrorCode.NONE, errorMessage: null };
        } catch (err) {
          return { resourceName: c.resourceName, errorCode: toErrorCode(err), errorMessage: (err as Error).message };
        }
      });
      await this.commit(records);
      if (records.length > 0) this.log.info(`dynamic broker configs changed: ${records.length} ConfigRecord(s)`, { resources: changes.map((c) => c.resourceName) });
      return results;
    });
  }

  /**
   * AlterClientQuotas: ClientQuotaControlManager validates and plans the ClientQuotaRecords (ip
   * entities' host names are resolved first, outside the queue); they are committed as one batch
   * unless validate_only.
   */
  async alterClientQuotas(alterations: ClientQuotaAlteration[], validateOnly: boolean): Promise<ClientQuotaAlterationResult[]> {
    if (alterations.length === 0) return [];
    const validIps = await this.clientQuotaControl.validIpEntities(alterations);
    return this.run(async () => {
      const { records, results } = this.clientQuotaControl.alterClientQuotas(alterations, validIps);
      if (!validateOnly) await this.commit(records);
      return results;
    });
  }

  /**
   * AlterUserScramCredentials: ScramControlManager validates against this image and plans the
   * records; they are committed as one batch (Kafka's ControllerResult.atomicOf).
   */
  alterUserScramCredentials(deletions: ScramCredentialDeletion[], upsertions: ScramCredentialUpsertion[]): Promise<ScramAlterationResult[]> {
    return this.run(async () => {
      const { records, results } = this.scramControl.alterCredentials(deletions, upsertions);
      await this.commit(records);
      return results;
    });
  }

  /**
   * UpdateFeatures: planFeatureUpdates checks every update against this image, this controller's
   * supported ranges and those the brokers registered with; the FeatureLevelRecords are committed
   * as one batch unless validate_only. A failure is INVALID_UPDATE_VERSION for the whole request,
   * with the message QuorumController gives it.
   */
  updateFeatures(updates: FeatureUpdate[], validateOnly: boolean): Promise<{ errorCode: number; errorMessage: string | null }> {
    return this.run(async () => {
      const finalized = this.image.finalizedFeatures();
      const outcome = planFeatureUpdates(
        {
          nodeId: this.opts.nodeId,
          finalized,
          brokers: this.image.allBrokers(),
          warn: (m) => this.log.warn(m),
        },
        updates,
      );
      if (!outcome.ok) {
        return { errorCode: ErrorCode.INVALID_UPDATE_VERSION, errorMessage: `The update failed for all features since the following feature had an error: ${outcome.message}` };
      }
      if (!validateOnly && outcome.records.length > 0) await this.commit(outcome.records.map((data): MetadataRecord => ({ type: 'FeatureLevelRecord', data })));
      return { errorCode: ErrorCode.NONE, errorMessage: null };
    });
  }

  /** CreateAcls: AclControlManager validates and plans the AccessControlEntryRecords, committed as one batch. */
  createAcls(bindings: AclBinding[]): Promise<AclCreateResult[]> {
    return this.run(async () => {
      const { records, results } = this.aclControl.createAcls(bindings);
      await this.commit(records);
      return results;
    });
  }

  /** DeleteAcls: the RemoveAccessControlEntryRecords of every ACL the filters match, committed as one batch. */
  deleteAcls(filters: AclBindingFilter[]): Promise<AclDeleteResult[]> {
    return this.run(async () => {
      const { records, results } = this.aclControl.deleteAcls(filters);
      await this.commit(records);
      return results;
    });
  }

  /**
   * AlterPartitionReassignments: PartitionChangeRecords with the target replicas and the replicas
   * being added / removed (or reverted, for a cancellation), committed as one batch; the ISR
   * changes of the partition leaders complete them (partition-change-builder.ts).
   */
  alterPartitionReassignments(topics: ReassignmentRequestTopic[]): Promise<ReassignmentResultTopic[]> {
    return this.run(async () => {
      const { records, results } = planReassignments(this.image, topics, {
        isRegistered: (id) => this.image.broker(id) !== undefined,
        isActive: this.isActive,
        uncleanLeaderElection: (topic) => this.uncleanLeaderElectionEnabled(topic),
      });
      await this.commit(records.map((r) => this.change(r)));
      const done = results.reduce((n, t) => n + t.partitions.filter((p) => p.errorCode === ErrorCode.NONE).length, 0);
      const total = results.reduce((n, t) => n + t.partitions.length, 0);
      this.log.info(`Successfully altered ${done} out of ${total} partition reassignment(s).`);
      return results;
    });
  }

  /** ListPartitionReassignments from this controller's image, after the writes queued before it. */
  listPartitionReassignments(topics: readonly { name: string; partitionIndexes: number[] }[] | null): Promise<ListReassignmentsResult> {
    return this.run(() => ({ errorCode: ErrorCode.NONE, errorMessage: null, topics: ongoingReassignments(this.image, topics) }));
  }

  /** Hands out a block of producer ids (KIP-730's AllocateProducerIds, used by InitProducerId). */
  allocateProducerIds(brokerId: number, brokerEpoch: bigint, blockSize: number): Promise<{ first: bigint; size: number }> {
    return this.run(async () => {
      if (this.opts.sessions) this.checkBrokerEpoch(brokerId, brokerEpoch);
      const first = this.image.nextProducerId;
      await this.commit([
        { type: 'ProducerIdsRecord', data: { brokerId, brokerEpoch, nextProducerId: first + BigInt(blockSize) } },
      ]);
      return { first, size: blockSize };
    });
  }

  isInternal(topic: string): boolean {
    return isInternalTopic(topic);
  }

  /** Stops the timers and waits for the queued operations; the single-writer log is closed, a quorum is left to its owner. */
  async close(): Promise<void> {
    this.closed = true;
    this.renounce();
    this.stopTimers();
    await this.queue.drain();
    this.metaLog.close();
  }
}

/**
 * Round-robin replica placement without racks: partition p's first replica is broker
 * (start + p) mod n, and the followers are shifted by a per-round step so that leaders and
 * followers both spread evenly (the scheme Kafka's rack-unaware assignment uses).
 */
export function assignReplicas(brokers: number[], numPartitions: number, rf: number, firstPartition: number): number[][] {
  const n = brokers.length;
  const out: number[][] = [];
  for (let i = 0; i < numPartitions; i++) {
    const p = firstPartition + i;
    const nextReplicaShift = Math.floor(p / n);
    const firstIndex = p % n;
    const replicas = [brokers[firstIndex]];
    for (let j = 0; j < rf - 1; j++) {
      const shift = 1 + ((nextReplicaShift + j) % (n - 1));
      replicas.push(brokers[(firstIndex + shift) % n]);
    }
    out.push(replicas);
  }
  return out;
}
