/**
 * The topics and partitions a decoded request names, for matching fault-injection rules and for
 * request recordings. Covers the APIs that name topics (Produce, Fetch, ListOffsets, Metadata,
 * offsets, transactions, topic admin); any other API names none. Fetch v13+ names topics by id:
 * `topicName` turns an id into a name (the broker's metadata), an unknown id stays unnamed.
 *
 * `partition` is absent when the request names the topic as a whole (Metadata, CreateTopics, ...).
 */
import type * as G from '../../protocol/generated';

export interface RequestTopicPartition {
  readonly topic: string;
  readonly partition?: number;
}

type Extract = (req: any, topicName: (id: string) => string | undefined) => RequestTopicPartition[];

const each = <T, P>(topics: readonly T[] | null | undefined, name: (t: T) => string | null | undefined, parts: (t: T) => readonly P[], index: (p: P) => number): RequestTopicPartition[] => {
  const out: RequestTopicPartition[] = [];
  for (const t of topics ?? []) {
    const topic = name(t);
    if (topic === null || topic === undefined || topic === '') continue;
    for (const p of parts(t)) out.push({ topic, partition: index(p) });
  }
  return out;
};

const whole = (names: readonly (string | null | undefined)[]): RequestTopicPartition[] =>
  names.filter((n): n is string => typeof n === 'string' && n !== '').map((topic) => ({ topic }));

const EXTRACTORS: { readonly [apiKey: number]: Extract } = {
  0: (r: G.ProduceRequest) => each(r.topicData, (t) => t.name, (t) => t.partitionData, (p) => p.index),
  1: (r: G.FetchRequest, topicName) => each(r.topics, (t) => (t.topic !== '' ? t.topic : topicName(t.topicId)), (t) => t.partitions, (p) => p.partition),
  2: (r: G.ListOffsetsRequest) => each(r.topics, (t) => t.name, (t) => t.partitions, (p) => p.partitionIndex),
  3: (r: G.MetadataRequest, topicName) => whole((r.topics ?? []).map((t) => t.name ?? topicName(t.topicId))),
  8: (r: G.OffsetCommitRequest) => each(r.topics, (t) => t.name, (t) => t.partitions, (p) => p.partitionIndex),
  9: (r: G.OffsetFetchRequest) => [
    ...each(r.topics, (t) => t.name, (t) => t.partitionIndexes, (p) => p),
    ...r.groups.flatMap((g) => each(g.topics, (t) => t.name, (t) => t.partitionIndexes, (p) => p)),
  ],
  19: (r: G.CreateTopicsRequest) => whole(r.topics.map((t) => t.name)),
  20: (r: G.DeleteTopicsRequest, topicName) => whole([...r.topicNames, ...r.topics.map((t) => t.name ?? topicName(t.topicId))]),
  21: (r: G.DeleteRecordsRequest) => each(r.topics, (t) => t.name, (t) => t.partitions, (p) => p.partitionIndex),
  23: (r: G.OffsetForLeaderEpochRequest) => each(r.topics, (t) => t.topic, (t) => t.partitions, (p) => p.partition),
  24: (r: G.AddPartitionsToTxnRequest) => [
    ...each(r.v3AndBelowTopics, (t) => t.name, (t) => t.partitions, (p) => p),
    ...r.transactions.flatMap((x) => each(x.topics, (t) => t.name, (t) => t.partitions, (p) => p)),
  ],
  27: (r: G.WriteTxnMarkersRequest) => r.markers.flatMap((m) => each(m.topics, (t) => t.name, (t) => t.partitionIndexes, (p) => p)),
  28: (r: G.TxnOffsetCommitRequest) => each(r.topics, (t) => t.name, (t) => t.partitions, (p) => p.partitionIndex),
  37: (r: G.CreatePartitionsRequest) => whole(r.topics.map((t) => t.name)),
  47: (r: G.OffsetDeleteRequest) => each(r.topics, (t) => t.name, (t) => t.partitions, (p) => p.partitionIndex),
  56: (r: G.AlterPartitionRequest, topicName) => each(r.topics, (t) => (t.topicName !== '' ? t.topicName : topicName(t.topicId)), (t) => t.partitions, (p) => p.partitionIndex),
};

export function requestTopics(apiKey: number, request: unknown, topicName: (id: string) => string | undefined = () => undefined): RequestTopicPartition[] {
  const x = EXTRACTORS[apiKey];
  return x ? x(request, topicName) : [];
}
