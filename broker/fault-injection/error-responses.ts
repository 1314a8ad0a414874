/**
 * Error responses for fault injection: the response a Kafka broker would send if it failed the
 * whole request with one error, for a given request at a given version. It is a real response of
 * that API and version, encoded by the generated codecs like any handler's answer.
 *
 * Shape rules (Kafka's `AbstractRequest.getErrorResponse` of each API):
 * - APIs that answer per entry (partition, topic, group, resource, marker) get one entry per entry
 *   of the request, each carrying the error, with "unknown" values for the rest (offsets -1, ...).
 * - APIs whose response has only a top-level error code (Heartbeat, EndTxn, ...) get that code.
 *   Which ones qualify is read from the schema descriptors: the root has `errorCode` at this
 *   version and no struct below it carries one.
 * - Metadata: REBOOTSTRAP_REQUIRED at v13+ is the top-level error code (KIP-1102) with no topics;
 *   any other error (or any version before 13) goes in each requested topic.
 * - Fetch: a session-level error (FETCH_SESSION_ID_NOT_FOUND, INVALID_FETCH_SESSION_EPOCH,
 *   FETCH_SESSION_TOPIC_ID_ERROR, CLUSTER_AUTHORIZATION_FAILED) is the top-level error code, with no
 *   partitions from v13 and every partition carrying it before (Kafka's FetchRequest); any other
 *   error is a per-partition error, as a leader reports NOT_LEADER_OR_FOLLOWER for one partition.
 *
 * Fields a version lacks are removed with the descriptors (`fitToVersion`), so the builders can
 * name every field once; `fitResponseToVersion` does the same for a response a test builds. `errorResponseSupported` tells whether an API has an error response at
 * all, so a rule can be refused when it is created rather than when a request arrives.
 */
import { ErrorCode } from '../../protocol/errors';
import { MESSAGE_DESCRIPTORS, type FieldDescriptor, type MessageDescriptor } from '../../protocol/generated/descriptors';
import type * as G from '../../protocol/generated';

type Builder = (req: any, version: number, error: number) => Record<string, unknown>;

const SESSION_LEVEL_FETCH_ERRORS: ReadonlySet<number> = new Set([
  ErrorCode.FETCH_SESSION_ID_NOT_FOUND,
  ErrorCode.INVALID_FETCH_SESSION_EPOCH,
  ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR,
  ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
]);

/** topics[].partitions[] of a request -> the same grouping in the response, one entry per partition. */
function perPartition<T extends { name?: string; topic?: string }, P>(
  topics: readonly T[] | null | undefined,
  partitionsOf: (t: T) => readonly P[],
  topicEntry: (t: T, partitions: Record<string, unknown>[]) => Record<string, unknown>,
  partitionEntry: (p: P) => Record<string, unknown>,
): Record<string, unknown>[] {
  return (topics ?? []).map((t) => topicEntry(t, partitionsOf(t).map(partitionEntry)));
}

const BUILDERS: { readonly [apiKey: number]: Builder } = {
  0: (req: G.ProduceRequest, _v, error) => ({
    responses: perPartition(req.topicData, (t) => t.partitionData, (t, partitionResponses) => ({ name: t.name, partitionResponses }), (p) => ({
      index: p.index,
      errorCode: error,
      baseOffset: -1n,
      logAppendTimeMs: -1n,
      logStartOffset: -1n,
    })),
  }),
  1: (req: G.FetchRequest, v, error) => {
    const sessionLevel = SESSION_LEVEL_FETCH_ERRORS.has(error);
    const partitions = sessionLevel && v >= 13 ? [] : req.topics;
    return {
      errorCode: sessionLevel ? error : ErrorCode.NONE,
      sessionId: 0,
      responses: perPartition(partitions, (t) => t.partitions, (t, ps) => ({ topic: t.topic, topicId: t.topicId, partitions: ps }), (p) => ({
        partitionIndex: p.partition,
        errorCode: error,
        highWatermark: -1n,
        lastStableOffset: -1n,
        logStartOffset: -1n,
        abortedTransactions: null,
        preferredReadReplica: -1,
        records: null,
      })),
    };
  },
  2: (req: G.ListOffsetsRequest, _v, error) => ({
    topics: perPartition(req.topics, (t) => t.partitions, (t, partitions) => ({ name: t.name, partitions }), (p) => ({
      partitionIndex: p.partitionIndex,
      errorCode: error,
      oldStyleOffsets: [],
      timestamp: -1n,
      offset: -1n,
      leaderEpoch: -1,
    })),
  }),
  3: (req: G.MetadataRequest, v, error) => {
    // REBOOTSTRAP_REQUIRED is a whole-response signal (KIP-1102): from v13 it is the top-level
    // error code and the topics are left out; other errors (and older versions) go per topic.
    const topLevel = error === ErrorCode.REBOOTSTRAP_REQUIRED && v >= 13;
    return {
      brokers: [],
      clusterId: null,
      controllerId: -1,
      errorCode: topLevel ? error : ErrorCode.NONE,
      topics: topLevel ? [] : (req.topics ?? []).map((t) => ({ errorCode: error, name: t.name, topicId: t.topicId, isInternal: false, partitions: [] })),
    };
  },
  8: (req: G.OffsetCommitRequest, _v, error) => ({
    topics: perPartition(req.topics, (t) => t.partitions, (t, partitions) => ({ name: t.name, partitions }), (p) => ({ partitionIndex: p.partitionIndex, errorCode: error })),
  }),
  9: (req: G.OffsetFetchRequest, _v, error) => {
    const partition = (p: number) => ({ partitionIndex: p, committedOffset: -1n, committedLeaderEpoch: -1, metadata: '', errorCode: error });
    return {
      errorCode: error,
      topics: (req.topics ?? []).map((t) => ({ name: t.name, partitions: t.partitionIndexes.map(partition) })),
      groups: req.groups.map((g) => ({
        groupId: g.groupId,
        errorCode: error,
        topics: (g.topics ?? []).map((t) => ({ name: t.name, partitions: t.partitionIndexes.map(partition) })),
      })),
    };
  },
  10: (req: G.FindCoordinatorRequest, _v, error) => ({
    errorCode: error,
    errorMessage: null,
    nodeId: -1,
    host: '',
    port: -1,
    coordinators: req.coordinatorKeys.map((key) => ({ key, nodeId: -1, host: '', port: -1, errorCode: error, errorMessage: null })),
  }),
  11: (_req: G.JoinGroupRequest, v, error) => ({
    errorCode: error,
    generationId: -1,
    protocolType: null,
    protocolName: v >= 7 ? null : '',
    leader: '',
    memberId: '',
    members: [],
  }),
  // Kafka answers a failed LeaveGroup with the top-level error only (no per-member results).
  13: (_req: G.LeaveGroupRequest, _v, error) => ({ errorCode: error, members: [] }),
  15: (req: G.DescribeGroupsRequest, _v, error) => ({
    groups: req.groups.map((groupId) => ({ errorCode: error, groupId, groupState: '', protocolType: '', protocolData: '', members: [] })),
  }),
  19: (req: G.CreateTopicsRequest, _v, error) => ({
    topics: req.topics.map((t) => ({ name: t.name, errorCode: error, errorMessage: null, numPartitions: -1, replicationFactor: -1 })),
  }),
  20: (req: G.DeleteTopicsRequest, v, error) => ({
    responses:
      v >= 6
        ? req.topics.map((t) => ({ name: t.name, topicId: t.topicId, errorCode: error, errorMessage: null }))
        : req.topicNames.map((name) => ({ name, errorCode: error, errorMessage: null })),
  }),
  21: (req: G.DeleteRecordsRequest, _v, error) => ({
    topics: perPartition(req.topics, (t) => t.partitions, (t, partitions) => ({ name: t.name, partitions }), (p) => ({ partitionIndex: p.partitionIndex, lowWatermark: -1n, errorCode: error })),
  }),
  22: (_req: G.InitProducerIdRequest, _v, error) => ({ errorCode: error, producerId: -1n, producerEpoch: -1 }),
  23: (req: G.OffsetForLeaderEpochRequest, _v, error) => ({
    topics: perPartition(req.topics, (t) => t.partitions, (t, partitions) => ({ topic: t.topic, partitions }), (p) => ({ partition: p.partition, errorCode: error, leaderEpoch: -1, endOffset: -1n })),
  }),
  // v4+ (batched, broker-to-broker verification): the top-level error, as Kafka answers it.
  24: (req: G.AddPartitionsToTxnRequest, v, error) =>
    v >= 4
      ? { errorCode: error, resultsByTransaction: [] }
      : {
          resultsByTopicV3AndBelow: req.v3AndBelowTopics.map((t) => ({
            name: t.name,
            resultsByPartition: t.partitions.map((p) => ({ partitionIndex: p, partitionErrorCode: error })),
          })),
        },
  27: (req: G.WriteTxnMarkersRequest, _v, error) => ({
    markers: req.markers.map((m) => ({
      producerId: m.producerId,
      topics: m.topics.map((t) => ({ name: t.name, partitions: t.partitionIndexes.map((p) => ({ partitionIndex: p, errorCode: error })) })),
    })),
  }),
  28: (req: G.TxnOffsetCommitRequest, _v, error) => ({
    topics: perPartition(req.topics, (t) => t.partitions, (t, partitions) => ({ name: t.name, partitions }), (p) => ({ partitionIndex: p.partitionIndex, errorCode: error })),
  }),
  32: (req: G.DescribeConfigsRequest, _v, error) => ({
    results: req.resources.map((r) => ({ errorCode: error, errorMessage: null, resourceType: r.resourceType, resourceName: r.resourceName, configs: [] })),
  }),
  33: (req: G.AlterConfigsRequest, _v, error) => ({
    responses: req.resources.map((r) => ({ errorCode: error, errorMessage: null, resourceType: r.resourceType, resourceName: r.resourceName })),
  }),
  // Kafka's AlterReplicaLogDirsRequest.getErrorResponse: one result per directory's topic, every partition with the error.
  34: (req: G.AlterReplicaLogDirsRequest, _v, error) => ({
    results: req.dirs.flatMap((d) => d.topics.map((t) => ({ topicName: t.name, partitions: t.partitions.map((partitionIndex) => ({ partitionIndex, errorCode: error })) }))),
  }),
  37: (req: G.CreatePartitionsRequest, _v, error) => ({
    results: req.topics.map((t) => ({ name: t.name, errorCode: error, errorMessage: null })),
  }),
  42: (req: G.DeleteGroupsRequest, _v, error) => ({
    results: req.groupsNames.map((groupId) => ({ groupId, errorCode: error })),
  }),
  44: (req: G.IncrementalAlterConfigsRequest, _v, error) => ({
    responses: req.resources.map((r) => ({ errorCode: error, errorMessage: null, resourceType: r.resourceType, resourceName: r.resourceName })),
  }),
  // Kafka answers a failed OffsetDelete with the top-level error and no topics.
  47: (_req: G.OffsetDeleteRequest, _v, error) => ({ errorCode: error, topics: [] }),
  // Likewise AlterPartition (the controller's answer to a leader's ISR change).
  56: (_req: G.AlterPartitionRequest, _v, error) => ({ errorCode: error, topics: [] }),
};

const RESPONSES = new Map<number, MessageDescriptor>(
  MESSAGE_DESCRIPTORS.filter((d) => d.type === 'response' && d.apiKey !== undefined).map((d) => [d.apiKey!, d]),
);

const inRange = (r: readonly [number, number] | undefined, v: number) => r !== undefined && v >= r[0] && v <= r[1];

function rootFields(d: MessageDescriptor): readonly FieldDescriptor[] {
  return d.structs[d.name];
}

/** Whether any struct reachable from `fields` (at version v) has an errorCode field. */
function nestedErrorCode(d: MessageDescriptor, fields: readonly FieldDescriptor[], v: number, seen = new Set<string>()): boolean {
  for (const f of fields) {
    if (!inRange(f.versions, v) || f.struct === undefined || seen.has(f.struct)) continue;
    seen.add(f.struct);
    const inner = d.structs[f.struct] ?? [];
    if (inner.some((g) => g.name === 'errorCode' && inRange(g.versions, v))) return true;
    if (nestedErrorCode(d, inner, v, seen)) return true;
  }
  return false;
}

/** Whether a request of this API and version can be answered with an error by `errorResponse`. */
export function errorResponseSupported(apiKey: number, version: number): boolean {
  if (BUILDERS[apiKey] !== undefined) return true;
  const d = RESPONSES.get(apiKey);
  if (!d || !inRange(d.validVersions, version)) return false;
  const root = rootFields(d);
  return root.some((f) => f.name === 'errorCode' && inRange(f.versions, version)) && !nestedErrorCode(d, root, version);
}

/** Which versions of an API `errorResponse` can answer ([] when none). */
export function errorResponseVersions(apiKey: number): number[] {
  const d = RESPONSES.get(apiKey);
  if (!d) return [];
  const out: number[] = [];
  for (let v = d.validVersions[0]; v <= d.validVersions[1]; v++) if (errorResponseSupported(apiKey, v)) out.push(v);
  return out;
}

/**
 * The whole-request error response (see the header) for a decoded request; throws for an API
 * without one (check `errorResponseSupported` first).
 */
export function errorResponse(apiKey: number, version: number, request: unknown, error: number): Record<string, unknown> {
  const d = RESPONSES.get(apiKey);
  if (!d || !errorResponseSupported(apiKey, version)) throw new Error(`no error response for API key ${apiKey} v${version}`);
  const build = BUILDERS[apiKey];
  const body = build ? build(request, version, error) : { errorCode: error };
  return fitToVersion(d, d.name, body, version);
}

/**
 * A response body with the fields this version of the API's response lacks removed (at any
 * depth), so one body can serve every version (custom responses of the control API).
 */
export function fitResponseToVersion(apiKey: number, version: number, body: object): Record<string, unknown> {
  const d = RESPONSES.get(apiKey);
  if (!d) throw new Error(`no response schema for API key ${apiKey}`);
  return fitToVersion(d, d.name, body as Record<string, unknown>, version);
}

/** Drops the fields (at any depth) that this version of the message does not have. */
function fitToVersion(d: MessageDescriptor, struct: string, value: Record<string, unknown>, v: number): Record<string, unknown> {
  const fields = d.structs[struct];
  const out: Record<string, unknown> = {};
  for (const f of fields) {
    if (!inRange(f.versions, v) || !(f.name in value)) continue;
    const x = value[f.name];
    if (f.struct !== undefined && x !== null && x !== undefined) {
      out[f.name] = Array.isArray(x)
        ? x.map((e) => fitToVersion(d, f.struct!, e as Record<string, unknown>, v))
        : fitToVersion(d, f.struct, x as Record<string, unknown>, v);
    } else {
      out[f.name] = x;
    }
  }
  return out;
}
