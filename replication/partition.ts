/**
 * One partition as this broker sees it: its local log, whether this broker leads it and at which
 * leader epoch, the replica set and ISR as last committed by the controller, and the high
 * watermark decision (HWM = the smallest log end offset among the ISR). Produce appends and
 * consumer reads go through here so the leader checks (NOT_LEADER_OR_FOLLOWER, epoch fencing,
 * min.insync.replicas) sit in one place.
 *
 * With a single broker the ISR is {this broker}, so the HWM follows the LEO on every append; the
 * follower bookkeeping (replica LEOs, caught-up times, ISR expand/shrink via AlterPartition) plugs
 * into `maybeIncrementHighWatermark` when replication arrives.
 */
import { ErrorCode, KafkaError } from '../protocol/errors';
import type { UnifiedLog, LogAppendInfo, LogReadResult } from '../storage/unified-log';
import type { PartitionState } from './metadata-cache';

export type FetchIsolation = 'LOG_END' | 'HIGH_WATERMARK' | 'TXN_COMMITTED';

export interface PartitionReadResult {
  read: LogReadResult;
  highWatermark: bigint;
  lastStableOffset: bigint;
  logStartOffset: bigint;
  logEndOffset: bigint;
}

export class Partition {
  leaderEpoch = -1;
  partitionEpoch = -1;
  leaderId = -1;
  replicas: number[] = [];
  isr: number[] = [];

  constructor(
    readonly topic: string,
    readonly partition: number,
    readonly topicId: string,
    readonly localBrokerId: number,
    readonly log: UnifiedLog,
  ) {}

  get key(): string {
    return `${this.topic}-${this.partition}`;
  }

  get isLeader(): boolean {
    return this.leaderId === this.localBrokerId;
  }

  /** Applies the controller's committed state for this partition. */
  applyState(state: PartitionState): void {
    this.leaderId = state.leader;
    this.leaderEpoch = state.leaderEpoch;
    this.partitionEpoch = state.partitionEpoch;
    this.replicas = [...state.replicas];
    this.isr = [...state.isr];
    this.maybeIncrementHighWatermark();
  }

  /**
   * Checks the leader epoch a client sent (-1 = not sent): older than ours is FENCED_LEADER_EPOCH,
   * newer is UNKNOWN_LEADER_EPOCH (this broker has not caught up with the controller yet).
   */
  checkLeaderEpoch(requestEpoch: number): void {
    if (requestEpoch === -1) return;
    if (requestEpoch < this.leaderEpoch) {
      throw new KafkaError(ErrorCode.FENCED_LEADER_EPOCH, `leader epoch ${requestEpoch} is older than the current ${this.leaderEpoch}`);
    }
    if (requestEpoch > this.leaderEpoch) {
      throw new KafkaError(ErrorCode.UNKNOWN_LEADER_EPOCH, `leader epoch ${requestEpoch} is newer than the current ${this.leaderEpoch}`);
    }
  }

  private ensureLeader(): void {
    if (!this.isLeader) {
      throw new KafkaError(
        ErrorCode.NOT_LEADER_OR_FOLLOWER,
        `broker ${this.localBrokerId} is not the leader of ${this.key} (leader ${this.leaderId})`,
      );
    }
  }

  appendRecordsToLeader(
    records: Buffer,
    requiredAcks: number,
    minInsyncReplicas: number,
    opts: { origin?: 'client' | 'coordinator'; requestVersion?: number } = {},
  ): LogAppendInfo {
    this.ensureLeader();
    if (requiredAcks === -1 && this.isr.length < minInsyncReplicas) {
      throw new KafkaError(
        ErrorCode.NOT_ENOUGH_REPLICAS,
        `The size of the current ISR ${JSON.stringify(this.isr)} is insufficient to satisfy the min.isr requirement of ${minInsyncReplicas} for partition ${this.key}`,
      );
    }
    const info = this.log.appendAsLeader(records, { leaderEpoch: this.leaderEpoch, ...opts });
    this.maybeIncrementHighWatermark();
    return info;
  }

  /** HWM = min LEO over the ISR; only this broker's LEO is known until followers exist. */
  maybeIncrementHighWatermark(): boolean {
    if (!this.isLeader) return false;
    const before = this.log.highWatermark;
    const onlySelf = this.isr.length === 1 && this.isr[0] === this.localBrokerId;
    if (!onlySelf) return false;
    const leo = this.log.logEndOffset;
    if (leo > before) {
      this.log.updateHighWatermark(leo);
      return true;
    }
    return false;
  }

  /** Whether an acks=-1 produce that ended at `requiredOffset` is now committed. */
  checkEnoughReplicasReachOffset(requiredOffset: bigint, minInsyncReplicas: number): { done: boolean; errorCode: number } {
    if (!this.isLeader) return { done: true, errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER };
    if (this.log.highWatermark >= requiredOffset) {
      return {
        done: true,
        errorCode: this.isr.length >= minInsyncReplicas ? ErrorCode.NONE : ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
      };
    }
    return { done: false, errorCode: ErrorCode.NONE };
  }

  read(fetchOffset: bigint, maxBytes: number, isolation: FetchIsolation, minOneMessage: boolean, currentLeaderEpoch: number): PartitionReadResult {
    this.ensureLeader();
    this.checkLeaderEpoch(currentLeaderEpoch);
    const hw = this.log.highWatermark;
    const lso = this.log.lastStableOffset;
    const leo = this.log.logEndOffset;
    const maxOffset = isolation === 'LOG_END' ? leo : isolation === 'HIGH_WATERMARK' ? hw : lso;
    const read = this.log.read(fetchOffset, maxBytes, { maxOffset, minOneMessage });
    return { read, highWatermark: hw, lastStableOffset: lso, logStartOffset: this.log.logStartOffset, logEndOffset: leo };
  }
}
