/**
 * Partition reassignment (KIP-455), as Kafka's ReplicationControlManager plans it in KRaft:
 * AlterPartitionReassignments turns each (topic, partition, target replicas) into at most one
 * PartitionChangeRecord, and ListPartitionReassignments reads the ones in progress from an image.
 *
 * - A target: checked as validateManualPartitionAssignment (non-empty, every broker registered, no
 *   broker twice: INVALID_REPLICA_ASSIGNMENT with Kafka's messages). The record sets replicas to
 *   target + (current - target), adding_replicas to target - current and removing_replicas to
 *   current - target (PartitionReassignmentReplicas); PartitionChangeBuilder completes it at once
 *   when the ISR already holds the target (a reorder or a pure removal), otherwise an ISR change
 *   that brings every adding replica in completes it later (partition-change-builder.ts).
 * - A cancellation (replicas null): NO_REASSIGNMENT_IN_PROGRESS when none is; otherwise the
 *   replicas go back to the original ones (those not being added), the adding ones leave the ISR,
 *   and if that would empty the ISR the first original replica is put in it, which is an unclean
 *   election refused (INVALID_REPLICA_ASSIGNMENT) unless the topic allows one
 *   (PartitionReassignmentRevert).
 * - Unknown topic or partition: UNKNOWN_TOPIC_OR_PARTITION with Kafka's messages.
 *
 * Invariant: planning reads the image only; the caller commits the records of one request as one
 * batch, or none of them.
 */
import { ErrorCode, KafkaError, toErrorCode } from '../../protocol/errors';
import type { MetadataCache, PartitionState } from '../metadata-cache';
import type { PartitionChangeRecordData } from '../metadata-records';
import { buildPartitionChange, type Election } from './partition-change-builder';

export interface ReassignmentRequestTopic {
  name: string;
  partitions: { partitionIndex: number; replicas: number[] | null }[];
}

export interface ReassignmentResultTopic {
  name: string;
  partitions: { partitionIndex: number; errorCode: number; errorMessage: string | null }[];
}

export interface OngoingReassignmentTopic {
  name: string;
  partitions: { partitionIndex: number; replicas: number[]; addingReplicas: number[]; removingReplicas: number[] }[];
}

/** A ListPartitionReassignments answer: a top-level error (the controller's, or none) and the reassignments in progress. */
export interface ListReassignmentsResult {
  errorCode: number;
  errorMessage: string | null;
  topics: OngoingReassignmentTopic[];
}

export interface ReassignmentDeps {
  isRegistered(brokerId: number): boolean;
  /** Unfenced and not shutting down (Kafka's LeaderAcceptor). */
  isActive(brokerId: number): boolean;
  uncleanLeaderElection(topic: string): boolean;
}

export const isReassigning = (p: PartitionState): boolean => p.addingReplicas.length > 0 || p.removingReplicas.length > 0;

/** validateManualPartitionAssignment, with Kafka's messages. */
function validateTarget(replicas: readonly number[], deps: ReassignmentDeps): void {
  if (replicas.length === 0) throw new KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, 'The manual partition assignment includes an empty replica list.');
  const sorted = [...replicas].sort((a, b) => a - b);
  let prev: number | undefined;
  for (const id of sorted) {
    if (!deps.isRegistered(id)) {
      throw new KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `The manual partition assignment includes broker ${id}, but no such broker is registered.`);
    }
    if (id === prev) throw new KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `The manual partition assignment includes the broker ${prev} more than once.`);
    prev = id;
  }
}

function change(p: PartitionState, target: number[], deps: ReassignmentDeps): PartitionChangeRecordData | undefined {
  validateTarget(target, deps);
  const removing = [...new Set(p.replicas.filter((r) => !target.includes(r)))].sort((a, b) => a - b);
  const adding = [...new Set(target.filter((r) => !p.replicas.includes(r)))].sort((a, b) => a - b);
  return buildPartitionChange(p, {
    targetReplicas: [...target, ...removing],
    targetAdding: adding,
    targetRemoving: removing,
    isAcceptableLeader: deps.isActive,
  });
}

function cancel(topic: string, p: PartitionState, deps: ReassignmentDeps): PartitionChangeRecordData | undefined {
  if (!isReassigning(p)) throw new KafkaError(ErrorCode.NO_REASSIGNMENT_IN_PROGRESS, 'No partition reassignment is in progress.');
  const replicas = p.replicas.filter((r) => !p.addingReplicas.includes(r));
  if (replicas.length === 0) throw new KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, 'Invalid replica assignment: addingReplicas contains all replicas.');
  let isr = p.isr.filter((r) => !p.addingReplicas.includes(r));
  const unclean = deps.uncleanLeaderElection(topic);
  if (isr.length === 0) {
    if (!unclean) {
      throw new KafkaError(
        ErrorCode.INVALID_REPLICA_ASSIGNMENT,
        `Unable to revert partition assignment for ${topic}:${p.partition} because it would require an unclean leader election.`,
      );
    }
    isr = [replicas[0]];
  }
  const election: Election = unclean ? 'UNCLEAN' : 'ONLINE';
  return buildPartitionChange(p, { targetIsr: isr, targetReplicas: replicas, targetAdding: [], targetRemoving: [], isAcceptableLeader: deps.isActive, election });
}

/** The records and the per-partition answers of one AlterPartitionReassignments request. */
export function planReassignments(
  image: MetadataCache,
  topics: readonly ReassignmentRequestTopic[],
  deps: ReassignmentDeps,
): { records: PartitionChangeRecordData[]; results: ReassignmentResultTopic[] } {
  const records: PartitionChangeRecordData[] = [];
  const results = topics.map((t): ReassignmentResultTopic => ({
    name: t.name,
    partitions: t.partitions.map((target) => {
      try {
        const topic = image.topic(t.name);
        if (!topic) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `Unable to find a topic named ${t.name}.`);
        const p = topic.partitions.get(target.partitionIndex);
        if (!p) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `Unable to find partition ${t.name}:${target.partitionIndex}.`);
        const rec = target.replicas === null ? cancel(t.name, p, deps) : change(p, target.replicas, deps);
        if (rec) records.push(rec);
        return { partitionIndex: target.partitionIndex, errorCode: ErrorCode.NONE, errorMessage: null };
      } catch (err) {
        return { partitionIndex: target.partitionIndex, errorCode: toErrorCode(err), errorMessage: (err as Error).message };
      }
    }),
  }));
  return { records, results };
}

/** ListPartitionReassignments: every reassigning partition (topics null) or those of the listed ones; unknown names are skipped. */
export function ongoingReassignments(image: MetadataCache, topics: readonly { name: string; partitionIndexes: number[] }[] | null): OngoingReassignmentTopic[] {
  const wanted = topics ?? [...image.topics()].map((t) => ({ name: t.name, partitionIndexes: [...t.partitions.keys()].sort((a, b) => a - b) }));
  const out: OngoingReassignmentTopic[] = [];
  for (const w of wanted) {
    const t = image.topic(w.name);
    if (!t) continue;
    const partitions = [];
    for (const i of w.partitionIndexes) {
      const p = t.partitions.get(i);
      if (p && isReassigning(p)) partitions.push({ partitionIndex: i, replicas: [...p.replicas], addingReplicas: [...p.addingReplicas], removingReplicas: [...p.removingReplicas] });
    }
    if (partitions.length > 0) out.push({ name: t.name, partitions });
  }
  return out;
}
