/**
 * DescribeTopicPartitions (75), v0 (KIP-966), as Kafka's DescribeTopicPartitionsRequestHandler and
 * KRaftMetadataCache.getTopicMetadataForDescribeTopicResponse.
 * Topics: an empty list means every topic; names are taken once and answered in name order (Java's
 * String order: UTF-16 code units), starting at the cursor's topic (names before it are left out)
 * and, in that topic, at the cursor's partition. At most min(response_partition_limit,
 * max.request.partition.size.limit), and at least 1, partitions are answered; when a topic is cut
 * short, or the limit is used up before the next topic, next_cursor names where to go on (the
 * topic need not exist), else it is null.
 * Bad input: a cursor partition below 0, or a topic list that does not contain the cursor's topic,
 * is INVALID_REQUEST for every listed topic (Kafka's getErrorResponse), and is logged.
 * Per partition: leader (-1 when the leader is not registered with an endpoint on the request's
 * listener), leader epoch, replicas, ISR, offline replicas (not registered, fenced, or without the
 * listener), and the eligible leader replicas / last known ELR, which are empty lists: krill does
 * not run ELR (eligible.leader.replicas.enable off, no ELR in its partition records), which is what
 * Kafka answers then. A listed topic that does not exist is UNKNOWN_TOPIC_OR_PARTITION (or
 * INVALID_TOPIC_EXCEPTION for an invalid name) with a zero id; with the all-topics form none can be.
 * Authorization: DESCRIBE on each TOPIC. With the all-topics form the topics without it are left
 * out; a listed one is TOPIC_AUTHORIZATION_FAILED with a zero id after the others (its existence is
 * not disclosed). topic_authorized_operations is always filled for the topics answered.
 */
import { ErrorCode } from '../../protocol/errors';
import { ZERO_UUID } from '../../protocol/primitives/uuid';
import type { Input } from '../../protocol/primitives/input';
import type {
  DescribeTopicPartitionsRequest,
  DescribeTopicPartitionsResponse,
  DescribeTopicPartitionsResponsePartition,
  DescribeTopicPartitionsResponseTopic,
} from '../../protocol/generated/describe-topic-partitions';
import { ApiKey } from '../../protocol/generated';
import { isInternalTopic, validateTopicName } from '../../metadata/topic-name';
import type { Broker } from '../broker';
import { defineHandler } from './define-handler';
import { authHelper } from '../security/authorize';
import { AclOperation, ResourceType } from '../../metadata/authorizer/authorizer';

/** Java's String.compareTo order (UTF-16 code units), which is also JavaScript's < on strings. */
const byName = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

export const describeTopicPartitionsHandler = defineHandler<DescribeTopicPartitionsRequest, DescribeTopicPartitionsResponse>({
  apiKey: ApiKey.DescribeTopicPartitions,
  name: 'DescribeTopicPartitions',
  minVersion: 0,
  maxVersion: 0,
  handle(broker, ctx, req) {
    const md = broker.metadata;
    const fetchAll = req.topics.length === 0;
    const cursor = req.cursor;
    const cursorTopic = cursor ? cursor.topicName : '';
    const invalid = (message: string): Input<DescribeTopicPartitionsResponse> => {
      broker.logger.info(`Invalid DescribeTopicPartitions request from client ${ctx.clientId ?? ''}: ${message}`, { conn: ctx.connection.id });
      return {
        topics: req.topics.map((t) => ({ errorCode: ErrorCode.INVALID_REQUEST, name: t.name, topicId: ZERO_UUID, isInternal: false, partitions: [] })),
        nextCursor: null,
      };
    };

    const names = new Set<string>();
    if (fetchAll) {
      for (const t of md.topics()) if (t.name >= cursorTopic) names.add(t.name);
    } else {
      for (const t of req.topics) if (t.name >= cursorTopic) names.add(t.name);
      if (cursor && !names.has(cursor.topicName)) {
        return invalid(`the topic list should contain the cursor topic: ${cursor.topicName}`);
      }
    }
    if (cursor && cursor.partitionIndex < 0) return invalid(`the cursor partition must be valid: ${cursor.topicName}-${cursor.partitionIndex}`);

    const auth = authHelper(broker.authorizer, ctx);
    const unauthorized: Input<DescribeTopicPartitionsResponseTopic>[] = [];
    const authorized: string[] = [];
    for (const name of [...names].sort(byName)) {
      if (auth.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, name)) authorized.push(name);
      else if (!fetchAll) unauthorized.push({ errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, name, topicId: ZERO_UUID, isInternal: false, partitions: [] });
    }

    const limit = Math.max(Math.min(broker.config.getInt('max.request.partition.size.limit'), req.responsePartitionLimit), 1);
    const listener = ctx.connection.listenerName;
    const topics: Input<DescribeTopicPartitionsResponseTopic>[] = [];
    let nextCursor: { topicName: string; partitionIndex: number } | null = null;
    let remaining = limit;
    for (const name of authorized) {
      if (remaining === 0) {
        // The limit is used up exactly at a topic boundary: go on from this topic's start.
        nextCursor = { topicName: name, partitionIndex: 0 };
        break;
      }
      const topic = md.topic(name);
      if (!topic) {
        if (!fetchAll) topics.push({ errorCode: unknownTopicError(name), name, topicId: ZERO_UUID, isInternal: isInternalTopic(name), partitions: [] });
        continue;
      }
      const start = name === cursorTopic && cursor ? cursor.partitionIndex : 0;
      const end = Math.min(topic.partitions.size, start + remaining);
      const partitions: Input<DescribeTopicPartitionsResponsePartition>[] = [];
      for (let i = start; i < end; i++) {
        const p = topic.partitions.get(i);
        if (p) partitions.push(describePartition(broker, listener, p));
      }
      topics.push({
        errorCode: ErrorCode.NONE,
        name,
        topicId: topic.topicId,
        isInternal: isInternalTopic(name),
        partitions,
        topicAuthorizedOperations: auth.authorizedOperations(ResourceType.TOPIC, name),
      });
      if (end < topic.partitions.size) {
        nextCursor = { topicName: name, partitionIndex: end };
        break;
      }
      remaining -= partitions.length;
    }
    return { topics: [...topics, ...unauthorized], nextCursor };
  },
});

function unknownTopicError(name: string): number {
  try {
    validateTopicName(name);
    return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
  } catch {
    return ErrorCode.INVALID_TOPIC_EXCEPTION;
  }
}

function describePartition(
  broker: Broker,
  listener: string,
  p: { partition: number; leader: number; leaderEpoch: number; replicas: number[]; isr: number[] },
): Input<DescribeTopicPartitionsResponsePartition> {
  const md = broker.metadata;
  const hasListener = (id: number): boolean => md.broker(id)?.endpoints.some((e) => e.name === listener) ?? false;
  const offline = p.replicas.filter((id) => {
    const b = md.broker(id);
    return !b || b.fenced || !b.endpoints.some((e) => e.name === listener);
  });
  return {
    errorCode: ErrorCode.NONE,
    partitionIndex: p.partition,
    leaderId: p.leader >= 0 && hasListener(p.leader) ? p.leader : -1,
    leaderEpoch: p.leaderEpoch,
    replicaNodes: p.replicas,
    isrNodes: p.isr,
    eligibleLeaderReplicas: [],
    lastKnownElr: [],
    offlineReplicas: offline,
  };
}
