/**
 * Fetch (1), v4-17.
 * Consumers read up to the high watermark (read_uncommitted) or the last stable offset
 * (read_committed); a replica (replica_id >= 0, or replica_state v15+) reads up to the log end.
 * Long polling: the response waits up to max_wait_ms for min_bytes, woken by appends (no busy
 * waiting). max_bytes (capped by fetch.max.bytes) is shared across partitions in request order and
 * partition_max_bytes bounds each; the first batch returned may exceed both (KIP-74) so consumers
 * always progress. Only whole batches are returned; a fetch offset inside a batch returns the whole
 * batch. A partition with nothing to return carries an empty (not null) record set.
 * Sessions (v7+, KIP-227): epoch 0 opens a session, -1 fetches without one, others are incremental
 * (only partitions with news are answered; FETCH_SESSION_ID_NOT_FOUND / INVALID_FETCH_SESSION_EPOCH
 * at the top level). Topic ids (v13+): an unknown id gets UNKNOWN_TOPIC_ID.
 * Per-partition errors: OFFSET_OUT_OF_RANGE, UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER,
 * FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH (current_leader_epoch v9+), KAFKA_STORAGE_ERROR.
 * Followers (replica_id >= 0, or replica_state v15+ with the broker epoch): every fetch updates
 * the follower's state on the leader (LEO, caught-up time: ISR and HWM decisions); a
 * last_fetched_epoch (v12+) that the leader's log contradicts is answered with diverging_epoch and
 * no records, so the follower truncates; a replica outside the replica set gets
 * UNKNOWN_LEADER_EPOCH.
 * read_committed (isolation_level 1): records up to the last stable offset, and aborted_transactions
 * lists the aborted transactions overlapping the returned records (producer id, first offset), in
 * order of first offset; read_uncommitted sends a null list.
 * A partition listed twice is fetched once, at the place of its first listing with the last
 * listing's offsets (FetchRequest.fetchData is a LinkedHashMap), so it is answered once; a partition
 * the metadata does not have (negative index, past the count) is UNKNOWN_TOPIC_OR_PARTITION.
 * Leader discovery (KIP-951, v16+): a partition answered NOT_LEADER_OR_FOLLOWER or
 * FENCED_LEADER_EPOCH carries current_leader (id and epoch of the leader this broker knows of) and
 * node_endpoints lists those leaders on the request's listener (current-leader.ts).
 * Quotas: a consumer's max_bytes is capped at what its consumer_byte_rate allows in one quota
 * window; a fetch over its byte or request-time quota is answered with no partitions and the
 * throttle time, and its connection is muted (KIP-219). Follower fetches are exempt.
 * Authorization (KafkaApis.handleFetchRequest): a follower fetch needs CLUSTER_ACTION on the
 * CLUSTER, else every partition (unknown topic ids too) is TOPIC_AUTHORIZATION_FAILED and nothing is
 * read (the follower's state is not touched); a consumer needs READ on each TOPIC, a partition of a
 * topic without it TOPIC_AUTHORIZATION_FAILED (after UNKNOWN_TOPIC_ID, before
 * UNKNOWN_TOPIC_OR_PARTITION). Denied partitions stay in the fetch session and are answered like
 * any partition with an error.
 * Metrics (while on): each partition of an answered (not throttled) fetch counts once in
 * BrokerTopicStats (bytes out for consumers, replication bytes out for followers).
 * Not implemented: preferred read replicas (KIP-392).
 */
import { ErrorCode } from '../../protocol/errors';
import { ZERO_UUID } from '../../protocol/primitives/uuid';
import type { Input } from '../../protocol/primitives/input';
import type { FetchRequest, FetchResponse, FetchResponsePartitionData } from '../../protocol/generated/fetch';
import { ApiKey } from '../../protocol/generated';
import type { FetchPartitionRequest, FetchPartitionResult } from '../../replication/replica-manager';
import { FetchSessionCache, type PartitionFetchSpec, type SessionPartition } from '../fetch-session';
import { defineHandler } from './define-handler';
import { PartitionMap } from './request-partitions';
import { LeaderDiscovery } from './current-leader';
import { authHelper } from '../security/authorize';
import { AclOperation, ResourceType } from '../../metadata/authorizer/authorizer';

const EMPTY = Buffer.alloc(0);

export const fetchHandler = defineHandler<FetchRequest, FetchResponse>({
  apiKey: ApiKey.Fetch,
  name: 'Fetch',
  minVersion: 4,
  maxVersion: 17,
  requestQuotaExempt: (req) => req.replicaId >= 0 || (req.replicaState?.replicaId ?? -1) >= 0,
  async handle(broker, ctx, req) {
    const v = ctx.apiVersion;
    const md = broker.metadata;
    const replicaId = v >= 15 ? req.replicaState.replicaId : req.replicaId;
    const isFollower = replicaId >= 0;
    const readCommitted = req.isolationLevel === 1;

    // Resolve topic ids (v13+); partitions of unknown ids are answered with UNKNOWN_TOPIC_ID.
    const byPartition = new PartitionMap<PartitionFetchSpec>();
    const unknownIdPartitions = new PartitionMap<{ topicId: string; partition: number }>();
    for (const t of req.topics) {
      let name = t.topic;
      if (v >= 13) {
        const topic = md.topicById(t.topicId);
        if (!topic) {
          for (const p of t.partitions) unknownIdPartitions.set(t.topicId, p.partition, { topicId: t.topicId, partition: p.partition });
          continue;
        }
        name = topic.name;
      }
      for (const p of t.partitions) {
        byPartition.set(name, p.partition, {
          topic: name,
          topicId: v >= 13 ? t.topicId : (md.topic(name)?.topicId ?? ZERO_UUID),
          partition: p.partition,
          fetchOffset: p.fetchOffset,
          partitionMaxBytes: p.partitionMaxBytes,
          currentLeaderEpoch: v >= 9 ? p.currentLeaderEpoch : -1,
          logStartOffset: v >= 5 ? p.logStartOffset : -1n,
          lastFetchedEpoch: v >= 12 ? p.lastFetchedEpoch : -1,
        });
      }
    }
    const specs = byPartition.values().map((e) => e.value);
    const unknownIds = unknownIdPartitions.values().map((e) => e.value);
    const forgotten: { topic: string; partition: number }[] = [];
    if (v >= 7) {
      for (const f of req.forgottenTopicsData) {
        const name = v >= 13 ? md.topicById(f.topicId)?.name : f.topic;
        if (name === undefined) continue;
        for (const p of f.partitions) forgotten.push({ topic: name, partition: p });
      }
    }

    const context =
      v >= 7
        ? broker.fetchSessions.newContext(req.sessionId, req.sessionEpoch, specs, forgotten, Date.now())
        : ({ kind: 'full', session: null, partitions: specs } as const);
    if (context.kind === 'error') return { errorCode: context.errorCode, sessionId: 0, responses: [] };

    const toFetch = context.partitions;
    const auth = authHelper(broker.authorizer, ctx);
    // Followers need CLUSTER_ACTION; consumers READ on each topic. Denied partitions are not read.
    const followerDenied = isFollower && !auth.authorizeCluster(AclOperation.CLUSTER_ACTION);
    const readable = isFollower ? null : auth.filterByAuthorized(AclOperation.READ, ResourceType.TOPIC, toFetch, (p) => p.topic);
    const allowed = (topic: string): boolean => (isFollower ? !followerDenied : readable!.has(topic));
    const fetchable = toFetch.every((p) => allowed(p.topic)) ? toFetch : toFetch.filter((p) => allowed(p.topic));
    // A consumer never asks for more than its quota lets it take in one window (Kafka's
    // getMaxValueInQuotaWindow): more would be throttled for sure.
    const principal = ctx.principal.name;
    const clientId = ctx.clientId ?? '';
    const quotaWindowBytes = isFollower ? Infinity : broker.quotas.fetch.maxValueInQuotaWindow(principal, clientId);
    const maxBytes = Math.max(0, Math.floor(Math.min(req.maxBytes, broker.config.getInt('fetch.max.bytes'), quotaWindowBytes)));
    const fetching = fetchable.length === 0 && toFetch.length > 0 ? Promise.resolve([] as FetchPartitionResult[]) : broker.replicaManager.fetchMessages({
      replicaId,
      replicaEpoch: v >= 15 ? req.replicaState.replicaEpoch : -1n,
      maxWaitMs: req.maxWaitMs,
      minBytes: Math.min(req.minBytes, maxBytes),
      maxBytes,
      isolation: isFollower ? 'LOG_END' : readCommitted ? 'TXN_COMMITTED' : 'HIGH_WATERMARK',
      partitions: fetchable.map(
        (p): FetchPartitionRequest => ({
          topic: p.topic,
          partition: p.partition,
          fetchOffset: p.fetchOffset,
          partitionMaxBytes: p.partitionMaxBytes,
          currentLeaderEpoch: p.currentLeaderEpoch,
          lastFetchedEpoch: p.lastFetchedEpoch,
          logStartOffset: p.logStartOffset,
        }),
      ),
    });
    // A long poll waits on purpose: it does not hold a queued.max.requests slot meanwhile.
    if (req.maxWaitMs > 0 && req.minBytes > 0 && fetchable.length > 0) ctx.parked();
    const fetched = await fetching;
    // One result per partition of toFetch, in its order: the denied ones answered without a read.
    let results = fetched;
    if (fetchable !== toFetch) {
      let next = 0;
      results = toFetch.map((p) =>
        allowed(p.topic)
          ? fetched[next++]
          : { topic: p.topic, partition: p.partition, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, highWatermark: -1n, lastStableOffset: -1n, logStartOffset: -1n, records: [], recordsSize: 0 },
      );
    }

    // Pooled read buffers go back once the response carrying them is on the socket.
    for (const r of results) if (r.release) ctx.onResponseSent(r.release);

    // Quotas (KafkaApis.handleFetchRequest): the request time and the response's bytes are recorded;
    // if either is over its quota the answer is empty, carries the throttle time, the bytes are taken
    // back (they were not sent), and the connection is muted. Follower fetches are exempt.
    if (!isFollower) {
      let responseBytes = 0;
      for (const r of results) for (const b of r.records) responseBytes += b.length;
      const now = Date.now();
      const requestThrottle = ctx.requestThrottleMs();
      const bandwidthThrottle = broker.quotas.fetch.recordAndGetThrottleTimeMs(principal, clientId, responseBytes, now);
      if (Math.max(requestThrottle, bandwidthThrottle) > 0) {
        broker.quotas.fetch.unrecord(principal, clientId, responseBytes, now);
        ctx.throttle(bandwidthThrottle);
        // A session this full fetch would have opened is not opened (Kafka's FullFetchContext).
        if (context.kind === 'full' && context.session) broker.fetchSessions.remove(context.session.id);
        return { errorCode: ErrorCode.NONE, sessionId: context.kind === 'incremental' ? context.session.id : 0, responses: [] };
      }
    }

    const stats = broker.topicStats;
    if (stats) {
      for (const r of results) {
        // Only partitions the metadata has: a bad request's made-up names do not become series.
        if (r.errorCode !== ErrorCode.NONE && !broker.metadata.partition(r.topic, r.partition)) continue;
        stats.recordFetch(r.topic, r.recordsSize, r.errorCode !== ErrorCode.NONE, isFollower);
      }
    }

    // Group by topic in request (or session) order.
    const byTopic = new Map<string, { topicId: string; partitions: Input<FetchResponsePartitionData>[] }>();
    const incremental = context.kind === 'incremental';
    // KIP-951 (v16+): where this broker is not (or no longer) the leader, who is, and how to reach it.
    const leaders = v >= 16 ? new LeaderDiscovery(broker, ctx.connection.listenerName) : null;
    results.forEach((r: FetchPartitionResult, i) => {
      const spec = toFetch[i];
      if (context.session) {
        const sp: SessionPartition | undefined = broker.fetchSessions.sessionPartition(context.session, spec.topic, spec.partition);
        if (sp && !FetchSessionCache.noteResponse(sp, r, incremental)) return;
      }
      let entry = byTopic.get(spec.topic);
      if (!entry) byTopic.set(spec.topic, (entry = { topicId: spec.topicId, partitions: [] }));
      entry.partitions.push({
        partitionIndex: r.partition,
        errorCode: r.errorCode,
        highWatermark: r.highWatermark,
        lastStableOffset: r.lastStableOffset,
        logStartOffset: r.logStartOffset,
        abortedTransactions: readCommitted ? (r.abortedTransactions ?? []).map((t) => ({ producerId: t.producerId, firstOffset: t.firstOffset })) : null,
        preferredReadReplica: -1,
        divergingEpoch: v >= 12 && r.divergingEpoch ? r.divergingEpoch : undefined,
        currentLeader:
          leaders && (r.errorCode === ErrorCode.NOT_LEADER_OR_FOLLOWER || r.errorCode === ErrorCode.FENCED_LEADER_EPOCH) ? leaders.leaderOf(spec.topic, spec.partition) : undefined,
        records: r.records.length === 0 ? EMPTY : r.records.length === 1 ? r.records[0] : Buffer.concat(r.records),
      });
    });
    const responses = [...byTopic].map(([topic, e]) => ({ topic, topicId: e.topicId, partitions: e.partitions }));
    for (const u of unknownIds) {
      responses.push({
        topic: '',
        topicId: u.topicId,
        partitions: [{ partitionIndex: u.partition, errorCode: followerDenied ? ErrorCode.TOPIC_AUTHORIZATION_FAILED : ErrorCode.UNKNOWN_TOPIC_ID, highWatermark: -1n, lastStableOffset: -1n, logStartOffset: -1n, records: EMPTY }],
      });
    }
    return { errorCode: ErrorCode.NONE, sessionId: context.session?.id ?? 0, responses, nodeEndpoints: leaders ? leaders.nodeEndpoints() : [] };
  },
});
