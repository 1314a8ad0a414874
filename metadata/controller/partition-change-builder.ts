/**
 * PartitionChangeBuilder: the controller's one place that turns "what should change" (a target ISR,
 * an election kind, a broker that must not lead) into a PartitionChangeRecord, or into nothing when
 * nothing would change. Every leadership and ISR change the controller makes goes through here, so
 * the election rules live in one function:
 *
 * - The current leader stays if it is still acceptable (in the target ISR and active), except for a
 *   preferred election, where the first replica that is in the ISR and active wins.
 * - Otherwise the first replica (in replica order) that is in the target ISR and active leads.
 * - If none qualifies and unclean election is allowed, the first active replica leads, and the ISR
 *   becomes just that replica (records may be lost: that is what unclean means).
 * - Otherwise there is no leader (-1). The ISR never becomes empty: when the last member is
 *   removed it stays, so that replica can lead again when it returns (as Kafka does without ELR).
 *
 * - Reassignment (KIP-455, Kafka's PartitionReassignmentReplicas.maybeCompleteReassignment): with
 *   replicas being added or removed, once the target ISR holds every replica that stays (and at
 *   least one does), the record completes it: replicas become the target (the removing ones
 *   dropped), the removing ones leave the ISR, adding / removing are cleared, and a leader that was
 *   being removed is replaced from what remains. Any change (AlterPartition, fencing, a new
 *   reassignment) can complete one.
 *
 * Only a leader change bumps the leader epoch (record.leader set); every record bumps the partition
 * epoch when applied. Kafka's RECOVERING leader recovery state after an unclean election is not
 * modelled: the state stays RECOVERED (docs/replication.md).
 */
import type { PartitionChangeRecordData } from '../metadata-records';
import type { PartitionState } from '../metadata-cache';

export const NO_LEADER = -1;
export const NO_LEADER_CHANGE = -2;

export type Election = 'ONLINE' | 'PREFERRED' | 'UNCLEAN';

export interface PartitionChangeOptions {
  /** The ISR wanted; default the current one. The leader election uses it. */
  targetIsr?: number[];
  /** Whether a replica may lead (registered, unfenced, not shutting down, not being removed). */
  isAcceptableLeader: (replica: number) => boolean;
  election?: Election;
  /** The replica list wanted (a reassignment: target first, then the replicas being removed); default the current one. */
  targetReplicas?: number[];
  /** The replicas being added / removed by a reassignment; default the current ones. */
  targetAdding?: number[];
  targetRemoving?: number[];
}

export interface ElectionResult {
  leader: number;
  unclean: boolean;
}

export function electLeader(p: PartitionState, targetIsr: readonly number[], election: Election, acceptable: (r: number) => boolean): ElectionResult {
  const isValid = (r: number): boolean => targetIsr.includes(r) && acceptable(r);
  if (election === 'PREFERRED') {
    const preferred = p.replicas[0];
    if (preferred !== undefined && isValid(preferred)) return { leader: preferred, unclean: false };
  }
  if (p.leader !== NO_LEADER && isValid(p.leader)) return { leader: p.leader, unclean: false };
  const online = p.replicas.find(isValid);
  if (online !== undefined) return { leader: online, unclean: false };
  if (election === 'UNCLEAN') {
    const unclean = p.replicas.find((r) => acceptable(r));
    if (unclean !== undefined) return { leader: unclean, unclean: true };
  }
  return { leader: NO_LEADER, unclean: false };
}

const sameSet = (a: readonly number[], b: readonly number[]): boolean => a.length === b.length && a.every((x) => b.includes(x));

const sameList = (a: readonly number[], b: readonly number[]): boolean => a.length === b.length && a.every((x, i) => b[i] === x);

/**
 * Kafka's maybeCompleteReassignment: the replicas and ISR once a reassignment in progress can
 * complete with `targetIsr`, or undefined while it cannot (or none is in progress).
 */
export function completedReassignment(
  replicas: readonly number[],
  adding: readonly number[],
  removing: readonly number[],
  targetIsr: readonly number[],
): { replicas: number[]; isr: number[] } | undefined {
  if (adding.length === 0 && removing.length === 0) return undefined;
  const isr = targetIsr.filter((r) => !removing.includes(r));
  const remaining = replicas.filter((r) => !removing.includes(r));
  if (isr.length === 0 || remaining.length === 0) return undefined;
  if (!remaining.every((r) => isr.includes(r))) return undefined;
  return { replicas: remaining, isr };
}

/** The record for the change, or undefined when it would change nothing. */
export function buildPartitionChange(p: PartitionState, opts: PartitionChangeOptions): PartitionChangeRecordData | undefined {
  const election = opts.election ?? 'ONLINE';
  let targetReplicas = opts.targetReplicas ?? p.replicas;
  let targetAdding = opts.targetAdding ?? p.addingReplicas;
  let targetRemoving = opts.targetRemoving ?? p.removingReplicas;
  // Keep replica order in the ISR, as Kafka's Replicas helpers do for lists built from the assignment.
  let targetIsr = targetReplicas.filter((r) => (opts.targetIsr ?? p.isr).includes(r));
  const completed = completedReassignment(targetReplicas, targetAdding, targetRemoving, targetIsr);
  if (completed) {
    targetReplicas = completed.replicas;
    targetIsr = completed.isr;
    targetAdding = [];
    targetRemoving = [];
  }
  const record: PartitionChangeRecordData = {
    partitionId: p.partition,
    topicId: p.topicId,
    isr: null,
    leader: NO_LEADER_CHANGE,
    replicas: sameList(targetReplicas, p.replicas) ? null : [...targetReplicas],
    removingReplicas: sameList(targetRemoving, p.removingReplicas) ? null : [...targetRemoving],
    addingReplicas: sameList(targetAdding, p.addingReplicas) ? null : [...targetAdding],
    leaderRecoveryState: -1,
    directories: null,
    eligibleLeaderReplicas: null,
    lastKnownElr: null,
  };
  const result = electLeader({ ...p, replicas: targetReplicas }, targetIsr, election, opts.isAcceptableLeader);
  if (result.leader !== p.leader) {
    record.leader = result.leader;
    if (result.unclean) {
      targetIsr = [result.leader];
      record.isr = targetIsr;
    }
  }
  if (record.isr === null && targetIsr.length > 0 && !sameSet(targetIsr, p.isr)) record.isr = targetIsr;
  if (record.isr === null && record.leader === NO_LEADER_CHANGE && record.replicas === null && record.addingReplicas === null && record.removingReplicas === null) return undefined;
  return record;
}
