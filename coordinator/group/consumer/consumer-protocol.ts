/**
 * The embedded consumer protocol of classic groups (Kafka's ConsumerProtocol) as a consumer group
 * needs it for its classic members: the ConsumerProtocolSubscription a member sends in JoinGroup
 * (topics, owned partitions, rack) and the ConsumerProtocolAssignment it gets back in SyncGroup,
 * converted between topic names (the classic protocol's) and topic ids (the consumer group's).
 *
 * Invariants: a version above the newest one this code knows (3 for both) is read and written as the
 * newest, as Kafka does, and a negative version is refused; bytes after the known fields are
 * ignored (newer clients may add fields); every failure to decode is a `MalformedConsumerProtocol`,
 * never a partial result. An assignment of zero bytes (a classic member that has none yet) is empty.
 */
import { Reader } from '../../../protocol/primitives/reader';
import { Writer } from '../../../protocol/primitives/writer';
import { readConsumerProtocolAssignment, writeConsumerProtocolAssignment } from '../../../protocol/generated/message-data/consumer-protocol-assignment';
import { readConsumerProtocolSubscription, type ConsumerProtocolSubscription } from '../../../protocol/generated/message-data/consumer-protocol-subscription';
import type { Assignment, TopicId } from './assignor';
import type { OwnedTopicPartitions } from './current-assignment-builder';

export const CONSUMER_PROTOCOL_HIGHEST_VERSION = 3;

export class MalformedConsumerProtocol extends Error {}

/** What the consumer group reads of topics to translate between names and ids. */
export interface TopicNames {
  topic(name: string): { id: TopicId } | undefined;
  topicById(id: TopicId): { name: string } | undefined;
}

/** The version a ConsumerProtocol message starts with (Kafka's deserializeVersion). */
export function consumerProtocolVersion(bytes: Buffer): number {
  if (bytes.length < 2) throw new MalformedConsumerProtocol('the embedded consumer protocol has no version');
  const v = bytes.readInt16BE(0);
  if (v < 0) throw new MalformedConsumerProtocol(`the embedded consumer protocol has version ${v}`);
  return v;
}

export function deserializeSubscription(bytes: Buffer): ConsumerProtocolSubscription {
  const version = consumerProtocolVersion(bytes);
  try {
    const r = new Reader(bytes.subarray(2));
    return readConsumerProtocolSubscription(r, Math.min(version, CONSUMER_PROTOCOL_HIGHEST_VERSION));
  } catch (err) {
    throw new MalformedConsumerProtocol(`malformed ConsumerProtocolSubscription v${version}: ${(err as Error).message}`);
  }
}

/** Topic name -> partitions of an assignment, empty for zero bytes. */
export function deserializeAssignment(bytes: Buffer): { topic: string; partitions: number[] }[] {
  if (bytes.length === 0) return [];
  const version = consumerProtocolVersion(bytes);
  try {
    const r = new Reader(bytes.subarray(2));
    return readConsumerProtocolAssignment(r, Math.min(version, CONSUMER_PROTOCOL_HIGHEST_VERSION)).assignedPartitions;
  } catch (err) {
    throw new MalformedConsumerProtocol(`malformed ConsumerProtocolAssignment v${version}: ${(err as Error).message}`);
  }
}

/** The assignment (topic ids) as ConsumerProtocolAssignment bytes of `version`; unknown topic ids are left out. */
export function serializeAssignment(assignment: Assignment, topics: TopicNames, version: number): Buffer {
  const v = Math.min(Math.max(version, 0), CONSUMER_PROTOCOL_HIGHEST_VERSION);
  const assignedPartitions: { topic: string; partitions: number[] }[] = [];
  for (const [topicId, partitions] of assignment) {
    const t = topics.topicById(topicId);
    if (t !== undefined && partitions.size > 0) assignedPartitions.push({ topic: t.name, partitions: [...partitions].sort((a, b) => a - b) });
  }
  const w = new Writer(64);
  w.int16(v);
  writeConsumerProtocolAssignment(w, v, { assignedPartitions, userData: null });
  return w.toBuffer();
}

/** Topic-name partitions as an assignment by topic id; topics that do not exist are left out. */
export function toAssignment(byName: readonly { topic: string; partitions: readonly number[] }[], topics: TopicNames): Assignment {
  const out = new Map<TopicId, Set<number>>();
  for (const { topic, partitions } of byName) {
    const t = topics.topic(topic);
    if (t === undefined || partitions.length === 0) continue;
    let set = out.get(t.id);
    if (set === undefined) out.set(t.id, (set = new Set()));
    for (const p of partitions) set.add(p);
  }
  return out;
}

/** A subscription's owned partitions in the shape the reconciliation takes. */
export function ownedTopicPartitions(subscription: ConsumerProtocolSubscription, topics: TopicNames): OwnedTopicPartitions[] {
  return [...toAssignment(subscription.ownedPartitions, topics)].map(([topicId, partitions]) => ({ topicId, partitions: [...partitions] }));
}
