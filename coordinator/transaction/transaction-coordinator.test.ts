/**
 * TransactionCoordinator (with its TransactionStateManager and TransactionMarkerChannelManager)
 * driven without a network: __transaction_state is a real UnifiedLog per partition behind a fake
 * replica manager that can be told to fail an append; WriteTxnMarkers go to a fake transport that
 * answers per partition with chosen error codes, holds a broker's answers, or throws (a lost
 * connection); the cluster is a MetadataCache built by applying metadata records; the clock and
 * producer ids are fakes. Marker retries are checked on Jest's fake timers, so "after the backoff"
 * is exact and nothing sleeps. The last block runs transaction.version 2 (KIP-890 part 2): the epoch
 * bump per EndTxn v5, the roll-over to a new producer id, retries, coordinator aborts, and reloads.
 */
import * as path from 'node:path';
import { ErrorCode } from '../../protocol/errors';
import type { WriteTxnMarkersRequest, WriteTxnMarkersResponse } from '../../protocol/generated/write-txn-markers';
import { buildRecordBatch, type SimpleRecord } from '../../protocol/records/memory-records-builder';
import { CompressionType, splitBatches } from '../../protocol/records/record-batch';
import { readRecords } from '../../protocol/records/record';
import { MetadataCache, type MetadataDelta } from '../../metadata/metadata-cache';
import { FencingChange, type MetadataRecord } from '../../metadata/metadata-records';
import { ConnectionError } from '../../client/network-client';
import type { Partition } from '../../replication/partition';
import type { ProducePartitionResult } from '../../replication/replica-manager';
import { logConfig } from '../../storage/log-config';
import { MockScheduler, MockTime } from '../../common/testing/mock-time';
import { removeTempDirs, tempDir } from '../../storage/testing/temp-dir';
import { UnifiedLog } from '../../storage/unified-log';
import { TRANSACTION_STATE_TOPIC } from '../../config/kafka-config';
import { Logger } from '../../common/logger';
import type { CoordinatorReplicaManager } from '../group/group-coordinator';
import type { ProducerIdManager } from '../producer/producer-id-manager';
import { TransactionCoordinator } from './transaction-coordinator';
import type { TransactionCoordinatorConfig } from './transaction-coordinator-config';
import type { MarkerTransport } from './transaction-marker-channel-manager';
import { readTransactionLogKeyId, readTransactionLogMetadata, transactionLogKey, transactionLogValue } from './transaction-log';
import { NO_PRODUCER_EPOCH, NO_PRODUCER_ID, type TopicPartition, type TransactionMetadata, type TxnTransitMetadata } from './transaction-metadata';
import { TransactionState, transactionStateName } from './transaction-state';

const E = ErrorCode;
const TXN = TRANSACTION_STATE_TOPIC;
const NODE = 1;
const OTHER = 2;
const BACKOFF = 50;
const T0 = 1_700_000_000_000;
const TOPIC_IDS = { [TXN]: 'AAAAAAAAAAAAAAAAAAAAAA', a: 'AAAAAAAAAAAAAAAAAAAAAQ', b: 'AAAAAAAAAAAAAAAAAAAAAg' } as const;

// Captured before any test installs fake timers: the bounded waits below run on real time.
const realSetImmediate = setImmediate;
const realSetTimeout = setTimeout;
const realClearTimeout = clearTimeout;

/** One turn of the event loop: every promise continuation queued so far has run. */
const flush = () => new Promise<void>((r) => realSetImmediate(r));

async function until(cond: () => boolean, what: string, turns = 5000): Promise<void> {
  for (let i = 0; i < turns; i++) {
    if (cond()) return;
    await flush();
  }
  throw new Error(`gave up waiting for ${what}`);
}

function bounded<T>(p: Promise<T>, what: string, ms = 5000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = realSetTimeout(() => reject(new Error(`gave up waiting for ${what}`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => realClearTimeout(timer));
}

// ---- the cluster ------------------------------------------------------------------------------

function brokerRecord(id: number): MetadataRecord {
  return {
    type: 'RegisterBrokerRecord',
    data: {
      brokerId: id,
      isMigratingZkBroker: false,
      incarnationId: `broker-${id}-incarnation`,
      brokerEpoch: 10n,
      endPoints: [{ name: 'PLAINTEXT', host: '127.0.0.1', port: 9090 + id, securityProtocol: 0 }],
      features: [],
      rack: null,
      fenced: false,
      inControlledShutdown: false,
      logDirs: [],
    },
  };
}

function topicRecords(name: keyof typeof TOPIC_IDS, leaders: number[], leaderEpoch = 0): MetadataRecord[] {
  const topicId = TOPIC_IDS[name];
  return [
    { type: 'TopicRecord', data: { name, topicId } },
    ...leaders.map(
      (leader, partitionId): MetadataRecord => ({
        type: 'PartitionRecord',
        data: {
          partitionId,
          topicId,
          replicas: [leader],
          isr: [leader],
          removingReplicas: [],
          addingReplicas: [],
          leader,
          leaderRecoveryState: 0,
          leaderEpoch,
          partitionEpoch: leaderEpoch,
          directories: [],
          eligibleLeaderReplicas: null,
          lastKnownElr: null,
        },
      }),
    ),
  ];
}

/** A new leader for a partition (the leader epoch goes up by one). */
function leaderChange(name: keyof typeof TOPIC_IDS, partitionId: number, leader: number): MetadataRecord {
  return {
    type: 'PartitionChangeRecord',
    data: {
      partitionId,
      topicId: TOPIC_IDS[name],
      isr: leader >= 0 ? [leader] : [],
      leader,
      replicas: null,
      removingReplicas: null,
      addingReplicas: null,
      leaderRecoveryState: -1,
      directories: null,
      eligibleLeaderReplicas: null,
      lastKnownElr: null,
    },
  };
}

const removeTopic = (name: keyof typeof TOPIC_IDS): MetadataRecord => ({ type: 'RemoveTopicRecord', data: { topicId: TOPIC_IDS[name] } });

const a0: TopicPartition = { topic: 'a', partition: 0 }; // led by this broker
const a1: TopicPartition = { topic: 'a', partition: 1 }; // led by broker 2
const b0: TopicPartition = { topic: 'b', partition: 0 }; // led by broker 2

// ---- __transaction_state ----------------------------------------------------------------------

interface Written {
  partition: number;
  offset: bigint;
  /** One appendRecords call: the tombstones of one batch share it. */
  append: number;
  /** Size of the batch the record came in. */
  batchBytes: number;
  transactionalId: string;
  /** null for a tombstone. */
  md: TransactionMetadata | null;
}

/** The coordinator's replica manager: real logs for __transaction_state, appends that can be failed or held. */
class TxnLogReplicaManager implements CoordinatorReplicaManager {
  readonly logs = new Map<number, UnifiedLog>();
  readonly written: Written[] = [];
  readonly time = new MockTime(T0);
  private readonly dir = tempDir('krill-txn-coordinator-');

  constructor(private readonly logOverrides: { maxMessageBytes?: number } = {}) {}
  private readonly failures: { code: number | 'throw'; match?: (id: string, md: TransactionMetadata | null) => boolean }[] = [];
  private readonly holds: { promise: Promise<void>; release: () => void }[] = [];
  private readonly waiters: { pred: (w: Written) => boolean; resolve: (w: Written) => void }[] = [];
  private appends = 0;
  appendCalls = 0;

  log(partition: number): UnifiedLog {
    let log = this.logs.get(partition);
    if (!log) {
      log = UnifiedLog.load({
        dir: path.join(this.dir, `${TXN}-${partition}`),
        tp: { topic: TXN, partition },
        config: logConfig({ segmentIndexBytes: 64 * 1024, ...this.logOverrides }),
        time: this.time,
        scheduler: new MockScheduler(this.time),
      });
      this.logs.set(partition, log);
    }
    return log;
  }

  /** Appends records to a partition's log as the coordinator would (used to prepare a log to load). */
  appendDirect(partition: number, records: SimpleRecord[]): void {
    this.log(partition).appendAsLeader(buildRecordBatch(records, { compression: CompressionType.NONE, now: T0 }), { leaderEpoch: 0, origin: 'coordinator' });
  }

  getPartition(topic: string, partition: number): Partition | undefined {
    const log = topic === TXN ? this.logs.get(partition) : undefined;
    return log ? ({ log } as unknown as Partition) : undefined;
  }

  /** The next appends fail with these codes ('throw': appendRecords rejects), one each. */
  failNext(...codes: (number | 'throw')[]): void {
    for (const code of codes) this.failures.push({ code });
  }

  /** The next append of a record of `transactionalId` in `state` fails with `code`. */
  failRecord(code: number, transactionalId: string, state: TransactionState): void {
    this.failures.push({ code, match: (id, md) => id === transactionalId && md?.state === state });
  }

  /** The next appendRecords call is written at once but answers only when the returned function is called (replication). */
  hold(): () => void {
    let release!: () => void;
    const promise = new Promise<void>((r) => (release = r));
    this.holds.push({ promise, release });
    return release;
  }

  releaseAll(): void {
    for (const h of this.holds.splice(0)) h.release();
  }

  async appendRecords(opts: Parameters<CoordinatorReplicaManager['appendRecords']>[0]): Promise<ProducePartitionResult[]> {
    this.appendCalls++;
    // Kafka's TransactionLog.EnforcedRequiredAcks, and the internal topic must be writable.
    expect(opts.requiredAcks).toBe(-1);
    expect(opts.internalTopicsAllowed).toBe(true);
    // As the real replica manager: the local append happens at once, the acks=-1 wait comes after.
    const hold = this.holds.shift();
    const append = ++this.appends;
    const results = opts.entries.map((e) => {
      expect(e.topic).toBe(TXN);
      const decoded = splitBatches(e.records).flatMap((batch) =>
        readRecords(batch).map((rec) => {
          const transactionalId = readTransactionLogKeyId(rec.key!)!;
          return { transactionalId, md: readTransactionLogMetadata(transactionalId, rec.value) };
        }),
      );
      const i = this.failures.findIndex((f) => !f.match || decoded.some((d) => f.match!(d.transactionalId, d.md)));
      const failure = i >= 0 ? this.failures.splice(i, 1)[0].code : undefined;
      if (failure === 'throw') throw new Error('the replica manager fell over');
      const result = (errorCode: number, baseOffset = -1n): ProducePartitionResult => ({
        topic: e.topic,
        partition: e.partition,
        errorCode,
        errorMessage: null,
        baseOffset,
        logAppendTimeMs: -1n,
        logStartOffset: 0n,
        recordErrors: [],
      });
      if (failure !== undefined) return result(failure);
      const log = this.log(e.partition);
      const base = log.logEndOffset;
      log.appendAsLeader(e.records, { leaderEpoch: 0, origin: 'coordinator' });
      decoded.forEach((d, n) => {
        const w: Written = { partition: e.partition, offset: base + BigInt(n), append, batchBytes: e.records.length, ...d };
        this.written.push(w);
        for (const waiter of this.waiters.filter((x) => x.pred(w))) {
          this.waiters.splice(this.waiters.indexOf(waiter), 1);
          waiter.resolve(w);
        }
      });
      return result(ErrorCode.NONE, base);
    });
    if (hold) await hold.promise;
    return results;
  }

  /** The first record (already written or still to come) that matches. */
  waitFor(pred: (w: Written) => boolean, what: string): Promise<Written> {
    const found = this.written.find(pred);
    if (found) return Promise.resolve(found);
    return bounded(new Promise<Written>((resolve) => this.waiters.push({ pred, resolve })), what);
  }

  /** The state names written for an id, in log order ('tombstone' for a tombstone). */
  states(transactionalId: string): string[] {
    return this.written.filter((w) => w.transactionalId === transactionalId).map((w) => (w.md ? transactionStateName(w.md.state) : 'tombstone'));
  }

  last(transactionalId: string): TransactionMetadata | null | undefined {
    return this.written.filter((w) => w.transactionalId === transactionalId).pop()?.md;
  }

  /** The last record written for an id in a state. */
  record(transactionalId: string, state: TransactionState): TransactionMetadata | undefined {
    return this.written.filter((w) => w.transactionalId === transactionalId && w.md?.state === state).pop()?.md ?? undefined;
  }

  close(): void {
    this.releaseAll();
    for (const log of this.logs.values()) log.close();
    this.logs.clear();
  }
}

/** A __transaction_state record as the coordinator writes it. */
function txnRecord(transactionalId: string, over: Partial<TxnTransitMetadata> | null): SimpleRecord {
  if (over === null) return { key: transactionLogKey(transactionalId), value: null, timestamp: T0 };
  const t: TxnTransitMetadata = {
    producerId: 10n,
    lastProducerId: 10n,
    nextProducerId: -1n,
    nextProducerEpoch: -1,
    clientTransactionVersion: 0,
    producerEpoch: 0,
    lastProducerEpoch: NO_PRODUCER_EPOCH,
    txnTimeoutMs: 60_000,
    txnState: TransactionState.Empty,
    topicPartitions: [],
    txnStartTimestamp: -1,
    txnLastUpdateTimestamp: T0,
    ...over,
  };
  return { key: transactionLogKey(transactionalId), value: transactionLogValue(t), timestamp: T0 };
}

// ---- WriteTxnMarkers --------------------------------------------------------------------------

interface SentMarker {
  brokerId: number;
  producerId: bigint;
  producerEpoch: number;
  commit: boolean;
  coordinatorEpoch: number;
  tp: string;
}

/** Answers WriteTxnMarkers per partition: NONE unless scripted; can hold a broker's answers or fail the connection. */
class FakeMarkerTransport implements MarkerTransport {
  readonly sent: { brokerId: number; request: WriteTxnMarkersRequest }[] = [];
  closed = false;
  /** Error codes the next answers for a partition ('a-0') get, one per answer. */
  private readonly scripts = new Map<string, number[]>();
  private readonly connectionFailures = new Map<number, number>();
  private readonly gates = new Map<number, { promise: Promise<void>; release: () => void }>();
  private readonly waiters: { n: number; resolve: () => void }[] = [];

  script(tp: TopicPartition, ...codes: number[]): void {
    const k = `${tp.topic}-${tp.partition}`;
    this.scripts.set(k, [...(this.scripts.get(k) ?? []), ...codes]);
  }

  /** The next `n` requests to `brokerId` fail as a lost connection does. */
  failConnection(brokerId: number, n = 1): void {
    this.connectionFailures.set(brokerId, (this.connectionFailures.get(brokerId) ?? 0) + n);
  }

  /** Requests to `brokerId` are answered only once the returned function is called. */
  hold(brokerId: number): () => void {
    let release!: () => void;
    const promise = new Promise<void>((r) => (release = r));
    const gate = { promise, release: () => (this.gates.delete(brokerId), release()) };
    this.gates.set(brokerId, gate);
    return gate.release;
  }

  async send(brokerId: number, request: WriteTxnMarkersRequest): Promise<WriteTxnMarkersResponse> {
    if (this.closed) throw new ConnectionError('the marker transport is closed');
    this.sent.push({ brokerId, request });
    for (const w of this.waiters.filter((x) => this.sent.length >= x.n)) {
      this.waiters.splice(this.waiters.indexOf(w), 1);
      w.resolve();
    }
    const gate = this.gates.get(brokerId);
    if (gate) await gate.promise;
    if (this.closed) throw new ConnectionError('the marker transport is closed');
    const failures = this.connectionFailures.get(brokerId) ?? 0;
    if (failures > 0) {
      this.connectionFailures.set(brokerId, failures - 1);
      throw new ConnectionError(`connection to broker ${brokerId} lost`);
    }
    return {
      markers: request.markers.map((m) => ({
        producerId: m.producerId,
        topics: m.topics.map((t) => ({
          name: t.name,
          partitions: t.partitionIndexes.map((p) => ({ partitionIndex: p, errorCode: this.scripts.get(`${t.name}-${p}`)?.shift() ?? ErrorCode.NONE })),
        })),
      })),
    };
  }

  /** Resolves once `n` requests have been sent in all. */
  waitForSends(n: number): Promise<void> {
    if (this.sent.length >= n) return Promise.resolve();
    return bounded(new Promise<void>((resolve) => this.waiters.push({ n, resolve })), `${n} WriteTxnMarkers requests`);
  }

  /** Every marker sent (from request `from` on), one per partition, sorted by partition. */
  markers(from = 0): SentMarker[] {
    return this.sent
      .slice(from)
      .flatMap(({ brokerId, request }) =>
        request.markers.flatMap((m) =>
          m.topics.flatMap((t) =>
            t.partitionIndexes.map((p) => ({
              brokerId,
              producerId: m.producerId,
              producerEpoch: m.producerEpoch,
              commit: m.transactionResult,
              coordinatorEpoch: m.coordinatorEpoch,
              tp: `${t.name}-${p}`,
            })),
          ),
        ),
      )
      .sort((x, y) => (x.tp < y.tp ? -1 : x.tp > y.tp ? 1 : x.brokerId - y.brokerId));
  }

  close(): void {
    this.closed = true;
    for (const g of [...this.gates.values()]) g.release();
  }
}

// ---- the coordinator --------------------------------------------------------------------------

class FakeProducerIds {
  next = 1000n;
  failure: Error | null = null;
  async generateProducerId(): Promise<bigint> {
    if (this.failure) throw this.failure;
    return this.next++;
  }
}

const BASE_CONFIG: TransactionCoordinatorConfig = {
  transactionalIdExpirationMs: 7 * 24 * 3600_000,
  transactionMaxTimeoutMs: 900_000,
  transactionLogNumPartitions: 50,
  loadBufferSize: 5 * 1024 * 1024,
  abortTimedOutTransactionsIntervalMs: 3600_000,
  removeExpiredTransactionalIdsIntervalMs: 3600_000,
  requestTimeoutMs: 30_000,
  markerRetryBackoffMs: BACKOFF,
};

interface HarnessOptions {
  txnPartitions?: number;
  /** The __transaction_state leader epoch, i.e. the coordinator epoch. */
  coordinatorEpoch?: number;
  rm?: TxnLogReplicaManager;
  config?: Partial<TransactionCoordinatorConfig>;
}

interface Harness {
  c: TransactionCoordinator;
  rm: TxnLogReplicaManager;
  transport: FakeMarkerTransport;
  metadata: MetadataCache;
  pids: FakeProducerIds;
  clock: { now: number };
  lines: string[];
  /** Applies metadata records and hands the delta to the coordinator, as the broker does. */
  apply(...records: MetadataRecord[]): MetadataDelta;
  /** Resolves once every owned __transaction_state partition is loaded. */
  loaded(): Promise<void>;
}

const running: Harness[] = [];

afterEach(async () => {
  for (const h of running.splice(0)) {
    h.transport.close();
    h.rm.releaseAll();
    await h.c.shutdown();
    h.rm.close();
  }
  jest.useRealTimers();
});

afterAll(removeTempDirs);

/**
 * Brokers 1 (this one) and 2; topic a (a-0 led here, a-1 by broker 2), topic b (b-0 by broker 2);
 * __transaction_state led here. The coordinator is elected on return; a non-empty log is still
 * loading (the caller awaits `loaded()`).
 */
function harness(o: HarnessOptions = {}): Harness {
  const rm = o.rm ?? new TxnLogReplicaManager();
  const metadata = new MetadataCache('txn-test');
  // As a krill cluster finalizes it: flexible TransactionLogValue v1 records.
  metadata.apply([{ type: 'FeatureLevelRecord', data: { name: 'transaction.version', featureLevel: 1 } }]);
  const transport = new FakeMarkerTransport();
  const pids = new FakeProducerIds();
  const clock = { now: T0 };
  const lines: string[] = [];
  const txnPartitions = o.txnPartitions ?? 1;
  for (let p = 0; p < txnPartitions; p++) rm.log(p);
  const c = new TransactionCoordinator({
    nodeId: NODE,
    config: { ...BASE_CONFIG, ...o.config },
    logger: new Logger('txn', 'warn', (line) => lines.push(line)),
    replicaManager: rm,
    metadata,
    producerIds: pids as unknown as ProducerIdManager,
    markerTransport: transport,
    createTransactionTopic: async () => ErrorCode.NONE,
    now: () => clock.now,
  });
  const h: Harness = {
    c,
    rm,
    transport,
    metadata,
    pids,
    clock,
    lines,
    apply(...records) {
      const delta = metadata.apply(records);
      c.onMetadataDelta(delta);
      return delta;
    },
    loaded: () => until(() => c.stateManager.ownedPartitions().every((p) => p.loaded), 'the __transaction_state load'),
  };
  running.push(h);
  c.startup();
  c.startMarkerDelivery();
  h.apply(
    brokerRecord(NODE),
    brokerRecord(OTHER),
    ...topicRecords(TXN, Array(txnPartitions).fill(NODE), o.coordinatorEpoch ?? 3),
    ...topicRecords('a', [NODE, OTHER]),
    ...topicRecords('b', [OTHER]),
  );
  return h;
}

async function loadedHarness(o: HarnessOptions = {}): Promise<Harness> {
  const h = harness(o);
  await h.loaded();
  return h;
}

interface Producer {
  transactionalId: string;
  producerId: bigint;
  producerEpoch: number;
}

async function init(h: Harness, transactionalId: string, timeoutMs = 60_000): Promise<Producer> {
  const r = await h.c.handleInitProducerId(transactionalId, timeoutMs);
  expect(r.errorCode).toBe(E.NONE);
  return { transactionalId, producerId: r.producerId, producerEpoch: r.producerEpoch };
}

/** InitProducerId then AddPartitionsToTxn: an Ongoing transaction. */
async function begin(h: Harness, transactionalId: string, partitions: TopicPartition[] = [a0, a1, b0], timeoutMs = 60_000): Promise<Producer> {
  const p = await init(h, transactionalId, timeoutMs);
  expect(await h.c.handleAddPartitionsToTransaction(transactionalId, p.producerId, p.producerEpoch, partitions)).toBe(E.NONE);
  return p;
}

const endTxn = async (h: Harness, p: Producer, commit: boolean) => (await h.c.handleEndTransaction(p.transactionalId, p.producerId, p.producerEpoch, commit)).errorCode;

/** Waits until a Complete* record of the id is written and applied in memory. */
async function completed(h: Harness, transactionalId: string, state: 'CompleteCommit' | 'CompleteAbort'): Promise<TransactionMetadata> {
  const w = await h.rm.waitFor((x) => x.transactionalId === transactionalId && x.md !== null && transactionStateName(x.md.state) === state, `${state} of ${transactionalId}`);
  await until(() => h.c.handleDescribeTransaction(transactionalId).transactionState === state, `${transactionalId} in memory ${state}`);
  return w.md!;
}

const metadataOf = (h: Harness, id: string): TransactionMetadata => {
  const st = h.c.stateManager.getTransactionState(id);
  expect(st.errorCode).toBe(E.NONE);
  return st.metadata!;
};

const topicsOf = (h: Harness, id: string): string[] =>
  h.c
    .handleDescribeTransaction(id)
    .topics.flatMap((t) => t.partitions.map((p) => `${t.topic}-${p}`))
    .sort();

/** Transactional ids that fall in each __transaction_state partition. */
function idsByPartition(h: Harness, count: number): string[][] {
  const out: string[][] = Array.from({ length: count }, () => []);
  for (let i = 0; out.some((l) => l.length < 2); i++) {
    const id = `txn-${i}`;
    const list = out[h.c.partitionFor(id)];
    if (list.length < 2) list.push(id);
  }
  return out;
}

const marker = (brokerId: number, p: Producer | { producerId: bigint; producerEpoch: number }, commit: boolean, coordinatorEpoch: number, tp: string): SentMarker => ({
  brokerId,
  producerId: p.producerId,
  producerEpoch: p.producerEpoch,
  commit,
  coordinatorEpoch,
  tp,
});

const useFakeTimers = () => jest.useFakeTimers({ doNotFake: ['setImmediate', 'clearImmediate', 'nextTick', 'queueMicrotask'] });

// ---- tests ------------------------------------------------------------------------------------

describe('TransactionCoordinator: commit and abort', () => {
  test('commit: PrepareCommit is written before EndTxn answers, COMMIT markers go to every leader, CompleteCommit once all answered NONE', async () => {
    const h = await loadedHarness({ coordinatorEpoch: 3 });
    const p = await begin(h, 't1');
    expect(p).toEqual({ transactionalId: 't1', producerId: 1000n, producerEpoch: 0 });
    expect(topicsOf(h, 't1')).toEqual(['a-0', 'a-1', 'b-0']);
    const releaseBroker2 = h.transport.hold(OTHER);

    expect(await endTxn(h, p, true)).toBe(E.NONE);
    expect(h.rm.states('t1')).toEqual(['Empty', 'Ongoing', 'PrepareCommit']);
    expect(h.rm.last('t1')).toMatchObject({ producerId: 1000n, producerEpoch: 0, state: TransactionState.PrepareCommit });
    // One request per destination broker, this broker included, carrying the coordinator epoch.
    expect(h.transport.sent.map((s) => s.brokerId).sort()).toEqual([NODE, OTHER]);
    expect(h.transport.markers()).toEqual([marker(NODE, p, true, 3, 'a-0'), marker(OTHER, p, true, 3, 'a-1'), marker(OTHER, p, true, 3, 'b-0')]);

    // Broker 1 answered; broker 2 has not: a-0 no longer waits, nothing is completed yet.
    await flush();
    expect(topicsOf(h, 't1')).toEqual(['a-1', 'b-0']);
    expect(h.rm.states('t1')).toEqual(['Empty', 'Ongoing', 'PrepareCommit']);
    expect(h.c.handleDescribeTransaction('t1').transactionState).toBe('PrepareCommit');
    expect(h.c.markerManager.numTxnsWithPendingMarkers).toBe(1);
    // While the markers are written the CompleteCommit transition is pending: every EndTxn (either
    // result, as in Kafka, whose pending check comes first) and every other request waits.
    expect(await endTxn(h, p, true)).toBe(E.CONCURRENT_TRANSACTIONS);
    expect(await endTxn(h, p, false)).toBe(E.CONCURRENT_TRANSACTIONS);
    expect(await h.c.handleAddPartitionsToTransaction('t1', p.producerId, p.producerEpoch, [a0])).toBe(E.CONCURRENT_TRANSACTIONS);
    expect((await h.c.handleInitProducerId('t1', 60_000)).errorCode).toBe(E.CONCURRENT_TRANSACTIONS);

    releaseBroker2();
    const done = await completed(h, 't1', 'CompleteCommit');
    expect(done).toMatchObject({ producerId: 1000n, producerEpoch: 0, txnTimeoutMs: 60_000 });
    expect(done.topicPartitions.size).toBe(0);
    expect(h.rm.states('t1')).toEqual(['Empty', 'Ongoing', 'PrepareCommit', 'CompleteCommit']);
    expect(h.c.handleDescribeTransaction('t1')).toMatchObject({ errorCode: E.NONE, transactionState: 'CompleteCommit', topics: [] });
    expect(h.c.markerManager.numTxnsWithPendingMarkers).toBe(0);
    expect(h.transport.sent).toHaveLength(2); // nothing sent twice
    // A retried EndTxn of the completed transaction is NONE; the other result is INVALID_TXN_STATE.
    expect(await endTxn(h, p, true)).toBe(E.NONE);
    expect(await endTxn(h, p, false)).toBe(E.INVALID_TXN_STATE);
    // The next transaction starts from CompleteCommit.
    expect(await h.c.handleAddPartitionsToTransaction('t1', p.producerId, p.producerEpoch, [b0])).toBe(E.NONE);
    expect(topicsOf(h, 't1')).toEqual(['b-0']);
    expect(h.lines.filter((l) => l.includes(' ERROR '))).toEqual([]);
  });

  test('abort: PrepareAbort, ABORT markers, CompleteAbort', async () => {
    const h = await loadedHarness({ coordinatorEpoch: 7 });
    const p = await begin(h, 't1', [a0, b0]);
    expect(await endTxn(h, p, false)).toBe(E.NONE);
    expect(h.transport.markers()).toEqual([marker(NODE, p, false, 7, 'a-0'), marker(OTHER, p, false, 7, 'b-0')]);
    await completed(h, 't1', 'CompleteAbort');
    expect(h.rm.states('t1')).toEqual(['Empty', 'Ongoing', 'PrepareAbort', 'CompleteAbort']);
    expect(await endTxn(h, p, false)).toBe(E.NONE);
    expect(await endTxn(h, p, true)).toBe(E.INVALID_TXN_STATE);
  });

  test('EndTxn: unknown id, another producer id, another epoch, no transaction, empty id', async () => {
    const h = await loadedHarness();
    const p = await init(h, 't1');
    expect((await h.c.handleEndTransaction('nope', p.producerId, 0, true)).errorCode).toBe(E.INVALID_PRODUCER_ID_MAPPING);
    expect((await h.c.handleEndTransaction('t1', p.producerId + 1n, 0, true)).errorCode).toBe(E.INVALID_PRODUCER_ID_MAPPING);
    expect((await h.c.handleEndTransaction('t1', p.producerId, 1, true)).errorCode).toBe(E.PRODUCER_FENCED);
    expect(await endTxn(h, p, true)).toBe(E.INVALID_TXN_STATE); // Empty: nothing to end
    expect(await endTxn(h, p, false)).toBe(E.INVALID_TXN_STATE);
    expect((await h.c.handleEndTransaction('', p.producerId, 0, true)).errorCode).toBe(E.INVALID_REQUEST);
    expect(h.rm.states('t1')).toEqual(['Empty']);
  });

  test('a transition being written blocks every other one with CONCURRENT_TRANSACTIONS', async () => {
    const h = await loadedHarness();
    const p = await init(h, 't1');
    const release = h.rm.hold();
    const adding = h.c.handleAddPartitionsToTransaction('t1', p.producerId, p.producerEpoch, [a0]);
    expect(metadataOf(h, 't1').pendingState).toBe(TransactionState.Ongoing);
    expect(await h.c.handleAddPartitionsToTransaction('t1', p.producerId, p.producerEpoch, [a1])).toBe(E.CONCURRENT_TRANSACTIONS);
    expect(await endTxn(h, p, true)).toBe(E.CONCURRENT_TRANSACTIONS);
    expect((await h.c.handleInitProducerId('t1', 60_000)).errorCode).toBe(E.CONCURRENT_TRANSACTIONS);
    expect(await h.c.stateManager.removeExpiredTransactionalIds(T0 + BASE_CONFIG.transactionalIdExpirationMs * 2)).toBe(0);
    release();
    expect(await adding).toBe(E.NONE);
    expect(metadataOf(h, 't1')).toMatchObject({ state: TransactionState.Ongoing, pendingState: null });
    // Partitions already in the transaction are answered at once, without a write.
    expect(await h.c.handleAddPartitionsToTransaction('t1', p.producerId, p.producerEpoch, [a0])).toBe(E.NONE);
    expect(h.rm.states('t1')).toEqual(['Empty', 'Ongoing']);
  });
});

describe('TransactionCoordinator: marker delivery', () => {
  beforeEach(useFakeTimers);

  test('NOT_LEADER_OR_FOLLOWER and KAFKA_STORAGE_ERROR are sent again after the backoff, to the leader of the moment; then CompleteCommit', async () => {
    const h = await loadedHarness({ coordinatorEpoch: 3 });
    const p = await begin(h, 't1');
    h.transport.script(a0, E.NOT_LEADER_OR_FOLLOWER);
    h.transport.script(a1, E.KAFKA_STORAGE_ERROR);
    expect(await endTxn(h, p, true)).toBe(E.NONE);
    await flush();
    expect(h.transport.sent).toHaveLength(2);
    expect(topicsOf(h, 't1')).toEqual(['a-0', 'a-1']); // b-0 succeeded
    // a-0 moved to broker 2 meanwhile.
    h.apply(leaderChange('a', 0, OTHER));

    await jest.advanceTimersByTimeAsync(BACKOFF - 1);
    expect(h.transport.sent).toHaveLength(2);
    expect(h.rm.states('t1')).not.toContain('CompleteCommit');
    await jest.advanceTimersByTimeAsync(1);
    // Only the failed partitions, both to broker 2 now (one request in flight per broker, so the
    // second follows the first).
    await h.transport.waitForSends(4);
    expect(h.transport.markers(2)).toEqual([marker(OTHER, p, true, 3, 'a-0'), marker(OTHER, p, true, 3, 'a-1')]);
    expect(h.transport.sent.slice(2).map((s) => s.brokerId)).toEqual([OTHER, OTHER]);
    await completed(h, 't1', 'CompleteCommit');
    expect(h.transport.sent).toHaveLength(4);
  });

  test.each([
    ['UNKNOWN_TOPIC_OR_PARTITION', E.UNKNOWN_TOPIC_OR_PARTITION],
    ['NOT_ENOUGH_REPLICAS', E.NOT_ENOUGH_REPLICAS],
    ['NOT_ENOUGH_REPLICAS_AFTER_APPEND', E.NOT_ENOUGH_REPLICAS_AFTER_APPEND],
    ['REQUEST_TIMED_OUT', E.REQUEST_TIMED_OUT],
  ])('%s is retriable: resent after the backoff until it succeeds', async (_name, code) => {
    const h = await loadedHarness();
    const p = await begin(h, 't1', [a0, b0]);
    h.transport.script(b0, code, code);
    expect(await endTxn(h, p, false)).toBe(E.NONE);
    await flush();
    await jest.advanceTimersByTimeAsync(BACKOFF);
    expect(h.transport.markers(2)).toEqual([marker(OTHER, p, false, 3, 'b-0')]);
    expect(h.rm.states('t1')).not.toContain('CompleteAbort');
    await jest.advanceTimersByTimeAsync(BACKOFF);
    await completed(h, 't1', 'CompleteAbort');
    expect(h.transport.sent).toHaveLength(4);
  });

  test('an unexpected error is logged as an internal error and retried', async () => {
    const h = await loadedHarness();
    const p = await begin(h, 't1', [a0]);
    h.transport.script(a0, E.CORRUPT_MESSAGE);
    expect(await endTxn(h, p, true)).toBe(E.NONE);
    await flush();
    expect(h.lines.some((l) => l.includes(' ERROR ') && l.includes('CORRUPT_MESSAGE'))).toBe(true);
    await jest.advanceTimersByTimeAsync(BACKOFF);
    await completed(h, 't1', 'CompleteCommit');
    expect(h.transport.sent).toHaveLength(2);
  });

  test.each([
    ['UNSUPPORTED_FOR_MESSAGE_FORMAT', E.UNSUPPORTED_FOR_MESSAGE_FORMAT],
    ['UNSUPPORTED_VERSION', E.UNSUPPORTED_VERSION],
  ])('%s: the partition no longer waits for a marker, and the transaction completes', async (_name, code) => {
    const h = await loadedHarness();
    const p = await begin(h, 't1', [a0, b0]);
    h.transport.script(b0, code);
    expect(await endTxn(h, p, true)).toBe(E.NONE);
    await completed(h, 't1', 'CompleteCommit');
    await jest.advanceTimersByTimeAsync(BACKOFF * 3);
    expect(h.transport.sent).toHaveLength(2);
  });

  test.each([
    ['INVALID_PRODUCER_EPOCH', E.INVALID_PRODUCER_EPOCH],
    ['TRANSACTION_COORDINATOR_FENCED', E.TRANSACTION_COORDINATOR_FENCED],
  ])('%s: a newer producer or coordinator owns the partition, so the markers are given up', async (_name, code) => {
    const h = await loadedHarness();
    const p = await begin(h, 't1', [a0, a1, b0]);
    h.transport.script(a0, code);
    h.transport.script(b0, E.NOT_LEADER_OR_FOLLOWER); // would be retried, but the transaction is given up
    const releaseBroker2 = h.transport.hold(OTHER);
    expect(await endTxn(h, p, true)).toBe(E.NONE);
    await flush();
    expect(h.c.markerManager.numTxnsWithPendingMarkers).toBe(0);
    releaseBroker2();
    await flush();
    await jest.advanceTimersByTimeAsync(BACKOFF * 5);
    expect(h.transport.sent).toHaveLength(2);
    expect(h.rm.states('t1')).toEqual(['Empty', 'Ongoing', 'PrepareCommit']);
    // The transaction stays PrepareCommit (a reload of the partition resends its markers).
    expect(h.c.handleDescribeTransaction('t1').transactionState).toBe('PrepareCommit');
    expect(await endTxn(h, p, true)).toBe(E.CONCURRENT_TRANSACTIONS);
  });

  test('two retries of one transaction that go out in one request are both matched to their answers', async () => {
    const h = await loadedHarness();
    const x = await begin(h, 'x', [a0, a1]);
    const y = await begin(h, 'y', [b0]);
    h.transport.script(a0, E.NOT_LEADER_OR_FOLLOWER);
    h.transport.script(a1, E.NOT_LEADER_OR_FOLLOWER);
    expect(await endTxn(h, x, true)).toBe(E.NONE);
    await flush();
    h.apply(leaderChange('a', 0, OTHER));
    // Broker 2 is busy with y's markers when x's retries are queued for it: they share the next request.
    const releaseBroker2 = h.transport.hold(OTHER);
    expect(await endTxn(h, y, true)).toBe(E.NONE);
    await jest.advanceTimersByTimeAsync(BACKOFF);
    expect(h.transport.sent).toHaveLength(3);
    releaseBroker2();
    await h.transport.waitForSends(4);
    expect(h.transport.sent[3].request.markers.map((m) => [m.producerId, m.topics.map((t) => `${t.name}-${t.partitionIndexes.join(',')}`)])).toEqual([
      [x.producerId, ['a-0']],
      [x.producerId, ['a-1']],
    ]);
    await completed(h, 'x', 'CompleteCommit');
    await completed(h, 'y', 'CompleteCommit');
    expect(h.transport.sent).toHaveLength(4); // no partition was taken for unanswered and sent again
    expect(h.lines.filter((l) => l.includes('has no result'))).toEqual([]);
  });

  test('a lost connection sends the same markers again after the backoff', async () => {
    const h = await loadedHarness();
    const p = await begin(h, 't1', [a0, a1, b0]);
    h.transport.failConnection(OTHER, 2);
    expect(await endTxn(h, p, true)).toBe(E.NONE);
    await flush();
    expect(topicsOf(h, 't1')).toEqual(['a-1', 'b-0']);
    await jest.advanceTimersByTimeAsync(BACKOFF - 1);
    expect(h.transport.sent).toHaveLength(2);
    await jest.advanceTimersByTimeAsync(1);
    expect(h.transport.markers(2)).toEqual([marker(OTHER, p, true, 3, 'a-1'), marker(OTHER, p, true, 3, 'b-0')]);
    await flush();
    expect(h.rm.states('t1')).not.toContain('CompleteCommit'); // the second attempt failed too
    await jest.advanceTimersByTimeAsync(BACKOFF);
    await completed(h, 't1', 'CompleteCommit');
    expect(h.transport.sent).toHaveLength(4);
  });

  test('a deleted topic’s partitions are skipped, before the markers are sent and while a retry waits', async () => {
    const h = await loadedHarness();
    const p = await begin(h, 't1', [a0, b0]);
    h.apply(removeTopic('b'));
    expect(await endTxn(h, p, true)).toBe(E.NONE);
    expect(h.transport.markers()).toEqual([marker(NODE, p, true, 3, 'a-0')]);
    await completed(h, 't1', 'CompleteCommit');

    const q = await begin(h, 't2', [a0, a1]);
    h.transport.script(a1, E.NOT_LEADER_OR_FOLLOWER);
    expect(await endTxn(h, q, false)).toBe(E.NONE);
    await flush();
    h.apply(removeTopic('a'));
    await jest.advanceTimersByTimeAsync(BACKOFF);
    await completed(h, 't2', 'CompleteAbort');
    expect(h.transport.sent).toHaveLength(3); // t1's one request, t2's two; no resend to a deleted topic
  });

  test('a partition without a leader waits until the metadata names one', async () => {
    const h = await loadedHarness();
    const p = await begin(h, 't1', [a0, a1]);
    h.apply(leaderChange('a', 1, -1));
    expect(await endTxn(h, p, true)).toBe(E.NONE);
    expect(h.transport.markers()).toEqual([marker(NODE, p, true, 3, 'a-0')]);
    await jest.advanceTimersByTimeAsync(BACKOFF * 3);
    expect(h.transport.sent).toHaveLength(1);
    expect(topicsOf(h, 't1')).toEqual(['a-1']);
    h.apply(leaderChange('a', 1, OTHER));
    expect(h.transport.markers(1)).toEqual([marker(OTHER, p, true, 3, 'a-1')]);
    await completed(h, 't1', 'CompleteCommit');

    // A fenced leader is no leader either: the marker waits until the broker is unfenced.
    const q = await begin(h, 't2', [a0, b0]);
    h.apply({ type: 'BrokerRegistrationChangeRecord', data: { brokerId: OTHER, brokerEpoch: 10n, fenced: FencingChange.FENCE, inControlledShutdown: 0, logDirs: [] } });
    expect(await endTxn(h, q, false)).toBe(E.NONE);
    expect(h.transport.markers(2)).toEqual([marker(NODE, q, false, 3, 'a-0')]);
    await jest.advanceTimersByTimeAsync(BACKOFF * 2);
    expect(h.transport.sent).toHaveLength(3);
    h.apply({ type: 'BrokerRegistrationChangeRecord', data: { brokerId: OTHER, brokerEpoch: 10n, fenced: FencingChange.UNFENCE, inControlledShutdown: 0, logDirs: [] } });
    expect(h.transport.markers(3)).toEqual([marker(OTHER, q, false, 3, 'b-0')]);
    await completed(h, 't2', 'CompleteAbort');
  });

  test('a Complete* write that fails with COORDINATOR_NOT_AVAILABLE keeps its pending state and is retried after the backoff', async () => {
    const h = await loadedHarness();
    const p = await begin(h, 't1', [a0]);
    h.rm.failRecord(E.NOT_ENOUGH_REPLICAS, 't1', TransactionState.CompleteCommit);
    expect(await endTxn(h, p, true)).toBe(E.NONE);
    await until(() => h.rm.appendCalls === 4, 'the CompleteCommit append');
    await flush();
    expect(h.rm.states('t1')).toEqual(['Empty', 'Ongoing', 'PrepareCommit']);
    expect(metadataOf(h, 't1')).toMatchObject({ state: TransactionState.PrepareCommit, pendingState: TransactionState.CompleteCommit });
    expect(await endTxn(h, p, true)).toBe(E.CONCURRENT_TRANSACTIONS);
    await jest.advanceTimersByTimeAsync(BACKOFF);
    await completed(h, 't1', 'CompleteCommit');
    expect(h.transport.sent).toHaveLength(1); // the markers are not sent again
  });
});

describe('TransactionCoordinator: __transaction_state appends', () => {
  test.each([
    ['NOT_ENOUGH_REPLICAS', 'COORDINATOR_NOT_AVAILABLE'],
    ['NOT_ENOUGH_REPLICAS_AFTER_APPEND', 'COORDINATOR_NOT_AVAILABLE'],
    ['REQUEST_TIMED_OUT', 'COORDINATOR_NOT_AVAILABLE'],
    ['UNKNOWN_TOPIC_OR_PARTITION', 'COORDINATOR_NOT_AVAILABLE'],
    ['NOT_LEADER_OR_FOLLOWER', 'NOT_COORDINATOR'],
    ['KAFKA_STORAGE_ERROR', 'NOT_COORDINATOR'],
    ['MESSAGE_TOO_LARGE', 'UNKNOWN_SERVER_ERROR'],
    ['RECORD_LIST_TOO_LARGE', 'UNKNOWN_SERVER_ERROR'],
    ['INVALID_REQUIRED_ACKS', 'INVALID_REQUIRED_ACKS'], // anything else passes through
  ] as const)('an append failing with %s answers %s: the pending state is cleared and a retry works', async (appendErrorName, answerName) => {
    const appendError = E[appendErrorName];
    const answer = E[answerName];
    const h = await loadedHarness();
    // InitProducerId of a new id.
    h.rm.failNext(appendError);
    expect(await h.c.handleInitProducerId('t1', 60_000)).toEqual({ errorCode: answer, producerId: NO_PRODUCER_ID, producerEpoch: NO_PRODUCER_EPOCH });
    expect(metadataOf(h, 't1')).toMatchObject({ state: TransactionState.Empty, pendingState: null, producerEpoch: NO_PRODUCER_EPOCH });
    const p = await init(h, 't1');
    expect(p).toMatchObject({ producerId: 1000n, producerEpoch: 0 });
    // AddPartitionsToTxn.
    h.rm.failNext(appendError);
    expect(await h.c.handleAddPartitionsToTransaction('t1', p.producerId, p.producerEpoch, [a0])).toBe(answer);
    expect(metadataOf(h, 't1')).toMatchObject({ state: TransactionState.Empty, pendingState: null });
    expect(topicsOf(h, 't1')).toEqual([]);
    expect(await h.c.handleAddPartitionsToTransaction('t1', p.producerId, p.producerEpoch, [a0])).toBe(E.NONE);
    // EndTxn: no markers are sent for a PrepareCommit that was not written.
    h.rm.failNext(appendError);
    expect(await endTxn(h, p, true)).toBe(answer);
    expect(metadataOf(h, 't1')).toMatchObject({ state: TransactionState.Ongoing, pendingState: null });
    expect(h.transport.sent).toHaveLength(0);
    expect(await endTxn(h, p, true)).toBe(E.NONE);
    await completed(h, 't1', 'CompleteCommit');
    expect(h.rm.states('t1')).toEqual(['Empty', 'Ongoing', 'PrepareCommit', 'CompleteCommit']);
  });

  test('a Complete* write answered NOT_COORDINATOR is not retried: the next coordinator of the partition finishes it', async () => {
    useFakeTimers();
    const h = await loadedHarness();
    const p = await begin(h, 't1', [a0]);
    h.rm.failRecord(E.NOT_LEADER_OR_FOLLOWER, 't1', TransactionState.CompleteCommit);
    expect(await endTxn(h, p, true)).toBe(E.NONE);
    await until(() => h.rm.appendCalls === 4, 'the CompleteCommit append');
    await jest.advanceTimersByTimeAsync(BACKOFF * 3);
    expect(h.rm.appendCalls).toBe(4);
    expect(metadataOf(h, 't1')).toMatchObject({ state: TransactionState.PrepareCommit, pendingState: null });
    // Nothing pending: EndTxn answers by the state (Kafka's PrepareCommit case).
    expect(await endTxn(h, p, true)).toBe(E.CONCURRENT_TRANSACTIONS);
    expect(await endTxn(h, p, false)).toBe(E.INVALID_TXN_STATE);
    // Re-elected, the load finds PrepareCommit and completes it.
    h.apply(leaderChange(TXN, 0, OTHER));
    h.apply(leaderChange(TXN, 0, NODE));
    await h.loaded();
    await completed(h, 't1', 'CompleteCommit');
    expect(h.transport.markers(1)).toEqual([marker(NODE, p, true, 5, 'a-0')]);
  });

  test('an append that throws answers UNKNOWN_SERVER_ERROR and clears the pending state', async () => {
    const h = await loadedHarness();
    const p = await init(h, 't1');
    h.rm.failNext('throw');
    expect(await h.c.handleAddPartitionsToTransaction('t1', p.producerId, p.producerEpoch, [a0])).toBe(E.UNKNOWN_SERVER_ERROR);
    expect(metadataOf(h, 't1').pendingState).toBeNull();
    expect(await h.c.handleAddPartitionsToTransaction('t1', p.producerId, p.producerEpoch, [a0])).toBe(E.NONE);
  });
});

describe('TransactionCoordinator: InitProducerId', () => {
  test('new ids, epoch bumps, KIP-360 resumption and fencing, argument checks', async () => {
    const h = await loadedHarness();
    const a = await init(h, 'k');
    expect(a).toMatchObject({ producerId: 1000n, producerEpoch: 0 });
    expect(await init(h, 'k')).toMatchObject({ producerId: 1000n, producerEpoch: 1 });
    const resume = await h.c.handleInitProducerId('k', 60_000, { producerId: 1000n, producerEpoch: 1 });
    expect(resume).toEqual({ errorCode: E.NONE, producerId: 1000n, producerEpoch: 2 });
    // The producer missed that answer and retries with the epoch it had: no second bump.
    expect(await h.c.handleInitProducerId('k', 60_000, { producerId: 1000n, producerEpoch: 1 })).toEqual({ errorCode: E.NONE, producerId: 1000n, producerEpoch: 2 });
    // An older epoch, or another producer id: another producer took over.
    expect((await h.c.handleInitProducerId('k', 60_000, { producerId: 1000n, producerEpoch: 0 })).errorCode).toBe(E.PRODUCER_FENCED);
    expect((await h.c.handleInitProducerId('k', 60_000, { producerId: 5n, producerEpoch: 2 })).errorCode).toBe(E.PRODUCER_FENCED);
    // A producer recovering (UNKNOWN_PRODUCER_ID) with an id the coordinator never saw gets a fresh one.
    expect(await h.c.handleInitProducerId('fresh', 60_000, { producerId: 77n, producerEpoch: 3 })).toEqual({ errorCode: E.NONE, producerId: 1001n, producerEpoch: 0 });
    // The new timeout is taken.
    await init(h, 'k', 5000);
    expect(metadataOf(h, 'k')).toMatchObject({ producerEpoch: 3, txnTimeoutMs: 5000 });
    expect(h.rm.last('k')).toMatchObject({ producerEpoch: 3, txnTimeoutMs: 5000, state: TransactionState.Empty });

    expect((await h.c.handleInitProducerId('k', 0)).errorCode).toBe(E.INVALID_TRANSACTION_TIMEOUT);
    expect((await h.c.handleInitProducerId('k', BASE_CONFIG.transactionMaxTimeoutMs + 1)).errorCode).toBe(E.INVALID_TRANSACTION_TIMEOUT);
    expect((await h.c.handleInitProducerId('', 60_000)).errorCode).toBe(E.INVALID_REQUEST);
    // No transactional id: an idempotent producer gets a new id, nothing is written.
    const before = h.rm.written.length;
    expect(await h.c.handleInitProducerId(null, 60_000)).toEqual({ errorCode: E.NONE, producerId: 1002n, producerEpoch: 0 });
    expect(h.rm.written).toHaveLength(before);
  });

  test('two InitProducerId for a new id at once: the first creates it, the second waits (CONCURRENT_TRANSACTIONS)', async () => {
    const h = await loadedHarness();
    const [first, second] = await Promise.all([h.c.handleInitProducerId('t1', 60_000), h.c.handleInitProducerId('t1', 60_000)]);
    expect(first).toEqual({ errorCode: E.NONE, producerId: 1000n, producerEpoch: 0 });
    expect(second.errorCode).toBe(E.CONCURRENT_TRANSACTIONS);
    expect(h.rm.states('t1')).toEqual(['Empty']);
    expect(await init(h, 't1')).toMatchObject({ producerId: 1000n, producerEpoch: 1 });
  });

  test('a failed producer id allocation is retriable and leaves nothing behind', async () => {
    const h = await loadedHarness();
    h.pids.failure = new Error('no block from the controller');
    expect((await h.c.handleInitProducerId('t1', 60_000)).errorCode).toBe(E.COORDINATOR_LOAD_IN_PROGRESS);
    expect(h.c.stateManager.getTransactionState('t1')).toMatchObject({ errorCode: E.NONE, metadata: undefined });
    h.pids.failure = null;
    expect(await init(h, 't1')).toMatchObject({ producerId: 1000n, producerEpoch: 0 });
  });

  test('with a transaction open: it is aborted under epoch + 1, CONCURRENT_TRANSACTIONS; the retry gets its own bump', async () => {
    const h = await loadedHarness({ coordinatorEpoch: 4 });
    const p = await begin(h, 't1', [a0, b0]);
    const releaseBroker2 = h.transport.hold(OTHER);
    expect(await h.c.handleInitProducerId('t1', 60_000)).toEqual({ errorCode: E.CONCURRENT_TRANSACTIONS, producerId: NO_PRODUCER_ID, producerEpoch: NO_PRODUCER_EPOCH });
    expect(h.rm.states('t1')).toEqual(['Empty', 'Ongoing', 'PrepareAbort']);
    expect(h.rm.last('t1')).toMatchObject({ producerId: p.producerId, producerEpoch: 1, state: TransactionState.PrepareAbort });
    const fenced = { producerId: p.producerId, producerEpoch: 1 };
    expect(h.transport.markers()).toEqual([marker(NODE, fenced, false, 4, 'a-0'), marker(OTHER, fenced, false, 4, 'b-0')]);
    // The old producer is fenced; the retry waits for the abort.
    expect(await endTxn(h, p, true)).toBe(E.PRODUCER_FENCED);
    expect(await h.c.handleAddPartitionsToTransaction('t1', p.producerId, 0, [a1])).toBe(E.PRODUCER_FENCED);
    expect((await h.c.handleInitProducerId('t1', 60_000)).errorCode).toBe(E.CONCURRENT_TRANSACTIONS);
    releaseBroker2();
    const done = await completed(h, 't1', 'CompleteAbort');
    expect(done.producerEpoch).toBe(1);
    expect(await init(h, 't1')).toMatchObject({ producerId: p.producerId, producerEpoch: 2 });
  });

  test('a failed epoch-fence write sets hasFailedEpochFence, so the next fence does not bump again', async () => {
    const h = await loadedHarness();
    const p = await begin(h, 't1', [a0]);
    h.rm.failNext(E.NOT_ENOUGH_REPLICAS);
    expect((await h.c.handleInitProducerId('t1', 60_000)).errorCode).toBe(E.COORDINATOR_NOT_AVAILABLE);
    const md = metadataOf(h, 't1');
    // The epoch was raised in memory (never written, never returned): the old producer is fenced.
    expect(md).toMatchObject({ state: TransactionState.Ongoing, pendingState: null, producerEpoch: 1, hasFailedEpochFence: true });
    expect(await endTxn(h, p, true)).toBe(E.PRODUCER_FENCED);
    expect(h.rm.states('t1')).toEqual(['Empty', 'Ongoing']);

    expect((await h.c.handleInitProducerId('t1', 60_000)).errorCode).toBe(E.CONCURRENT_TRANSACTIONS);
    expect(h.rm.record('t1', TransactionState.PrepareAbort)).toMatchObject({ producerEpoch: 1 }); // not 2
    expect(h.transport.markers()).toEqual([marker(NODE, { producerId: p.producerId, producerEpoch: 1 }, false, 3, 'a-0')]);
    await completed(h, 't1', 'CompleteAbort');
    expect(md.hasFailedEpochFence).toBe(false); // settled once PrepareAbort was written
    expect(await init(h, 't1')).toMatchObject({ producerId: p.producerId, producerEpoch: 2 });
  });

  test('an exhausted epoch rotates the producer id; KIP-360 retries of the rotation get the same id', async () => {
    const rm = new TxnLogReplicaManager();
    rm.appendDirect(0, [
      txnRecord('plain', { producerId: 10n, producerEpoch: 32766, txnState: TransactionState.CompleteCommit, txnStartTimestamp: T0 - 10 }),
      txnRecord('resume', { producerId: 20n, producerEpoch: 32766, txnState: TransactionState.Empty }),
      txnRecord('open', { producerId: 30n, producerEpoch: 32766, txnState: TransactionState.Ongoing, topicPartitions: [a0], txnStartTimestamp: T0 - 10 }),
    ]);
    const h = await loadedHarness({ rm });

    // No expected epoch: a new producer id at epoch 0; the old one is recorded as the previous one.
    expect(await init(h, 'plain')).toMatchObject({ producerId: 1000n, producerEpoch: 0 });
    expect(h.rm.last('plain')).toMatchObject({ producerId: 1000n, lastProducerId: 10n, producerEpoch: 0 });
    expect(metadataOf(h, 'plain').lastProducerEpoch).toBe(NO_PRODUCER_EPOCH);

    // The producer sends its exhausted id and epoch: rotation remembers the epoch, so a retry gets the same answer.
    const expected = { producerId: 20n, producerEpoch: 32766 };
    expect(await h.c.handleInitProducerId('resume', 60_000, expected)).toEqual({ errorCode: E.NONE, producerId: 1001n, producerEpoch: 0 });
    expect(metadataOf(h, 'resume')).toMatchObject({ producerId: 1001n, lastProducerId: 20n, lastProducerEpoch: 32766 });
    expect(await h.c.handleInitProducerId('resume', 60_000, expected)).toEqual({ errorCode: E.NONE, producerId: 1001n, producerEpoch: 0 });
    // The old id with an epoch that is not exhausted is someone else.
    expect((await h.c.handleInitProducerId('resume', 60_000, { producerId: 20n, producerEpoch: 5 })).errorCode).toBe(E.PRODUCER_FENCED);

    // An open transaction at the last usable epoch is fenced at Short.MaxValue, then the retry rotates.
    expect((await h.c.handleInitProducerId('open', 60_000)).errorCode).toBe(E.CONCURRENT_TRANSACTIONS);
    expect(h.transport.markers()).toEqual([marker(NODE, { producerId: 30n, producerEpoch: 32767 }, false, 3, 'a-0')]);
    await completed(h, 'open', 'CompleteAbort');
    expect(await init(h, 'open')).toMatchObject({ producerId: 1002n, producerEpoch: 0 });
  });
});

describe('TransactionCoordinator: timeouts and expiry', () => {
  test('abortTimedOutTransactions aborts an Ongoing transaction older than its timeout under a bumped epoch', async () => {
    const h = await loadedHarness();
    const p = await begin(h, 't1', [a0, b0], 1000);
    h.clock.now = T0 + 500;
    const other = await begin(h, 't2', [a1], 1000); // started later
    await init(h, 'idle'); // Empty: nothing to time out

    h.clock.now = T0 + 1000;
    expect(await h.c.abortTimedOutTransactions()).toBe(0); // not older than its timeout yet
    h.clock.now = T0 + 1001;
    expect(await h.c.abortTimedOutTransactions()).toBe(1);
    expect(h.rm.record('t1', TransactionState.PrepareAbort)).toMatchObject({ producerEpoch: 1 });
    const bumped = { producerId: p.producerId, producerEpoch: 1 };
    expect(h.transport.markers()).toEqual([marker(NODE, bumped, false, 3, 'a-0'), marker(OTHER, bumped, false, 3, 'b-0')]);
    expect((await completed(h, 't1', 'CompleteAbort')).producerEpoch).toBe(1);
    expect(h.c.handleDescribeTransaction('t2').transactionState).toBe('Ongoing');

    // The producer that let it time out is fenced everywhere.
    expect(await endTxn(h, p, true)).toBe(E.PRODUCER_FENCED);
    expect(await endTxn(h, p, false)).toBe(E.PRODUCER_FENCED);
    expect(await h.c.handleAddPartitionsToTransaction('t1', p.producerId, p.producerEpoch, [a0])).toBe(E.PRODUCER_FENCED);
    expect(h.c.handleVerifyPartitionsInTransaction('t1', p.producerId, p.producerEpoch, [a0]).get(a0)).toBe(E.PRODUCER_FENCED);
    expect(await init(h, 't1')).toMatchObject({ producerId: p.producerId, producerEpoch: 2 });

    // A transaction whose transition is being written is left alone.
    h.clock.now = T0 + 1501;
    const release = h.rm.hold();
    const adding = h.c.handleAddPartitionsToTransaction('t2', other.producerId, other.producerEpoch, [b0]);
    expect(await h.c.abortTimedOutTransactions()).toBe(0);
    release();
    expect(await adding).toBe(E.NONE);
    expect(await h.c.abortTimedOutTransactions()).toBe(1);
    await completed(h, 't2', 'CompleteAbort');
  });

  test('a failed fence write of a timeout keeps the epoch for the next attempt', async () => {
    const h = await loadedHarness();
    const p = await begin(h, 't1', [a0], 1000);
    h.clock.now = T0 + 2000;
    h.rm.failNext(E.NOT_LEADER_OR_FOLLOWER);
    expect(await h.c.abortTimedOutTransactions()).toBe(1);
    expect(metadataOf(h, 't1')).toMatchObject({ state: TransactionState.Ongoing, producerEpoch: 1, hasFailedEpochFence: true, pendingState: null });
    expect(await h.c.abortTimedOutTransactions()).toBe(1);
    expect(h.rm.record('t1', TransactionState.PrepareAbort)).toMatchObject({ producerEpoch: 1 });
    await completed(h, 't1', 'CompleteAbort');
    expect(h.transport.markers()).toEqual([marker(NODE, { producerId: p.producerId, producerEpoch: 1 }, false, 3, 'a-0')]);
  });

  test('removeExpiredTransactionalIds writes tombstones only for idle Empty/Complete* ids older than transactional.id.expiration.ms', async () => {
    const h = await loadedHarness({ config: { transactionalIdExpirationMs: 10_000 } });
    await init(h, 'idle-empty');
    const done = await begin(h, 'idle-commit', [a0]);
    expect(await endTxn(h, done, true)).toBe(E.NONE);
    await completed(h, 'idle-commit', 'CompleteCommit');
    const aborted = await begin(h, 'idle-abort', [a0]);
    expect(await endTxn(h, aborted, false)).toBe(E.NONE);
    await completed(h, 'idle-abort', 'CompleteAbort');
    await begin(h, 'ongoing', [a0]);
    const busy = await init(h, 'busy');
    h.clock.now = T0 + 5000;
    await init(h, 'fresh');

    h.clock.now = T0 + 9999;
    expect(await h.c.stateManager.removeExpiredTransactionalIds()).toBe(0);
    expect(h.rm.written.filter((w) => w.md === null)).toEqual([]);

    h.clock.now = T0 + 10_000;
    // 'busy' has a transition being written: not expired under it.
    const release = h.rm.hold();
    const bumping = h.c.handleInitProducerId('busy', 60_000);
    // The tombstone write fails first: nothing is removed, nothing stays pending.
    h.rm.failNext(E.NOT_ENOUGH_REPLICAS);
    const failedRun = h.c.stateManager.removeExpiredTransactionalIds();
    release();
    expect(await failedRun).toBe(0);
    expect((await bumping).producerEpoch).toBe(busy.producerEpoch + 1);
    for (const id of ['idle-empty', 'idle-commit', 'idle-abort']) expect(metadataOf(h, id).pendingState).toBeNull();

    expect(await h.c.stateManager.removeExpiredTransactionalIds()).toBe(3);
    const tombstones = h.rm.written.filter((w) => w.md === null);
    expect(tombstones.map((w) => w.transactionalId).sort()).toEqual(['idle-abort', 'idle-commit', 'idle-empty']);
    expect(new Set(tombstones.map((w) => w.append)).size).toBe(1); // one append for the partition
    for (const id of ['idle-empty', 'idle-commit', 'idle-abort']) {
      expect(h.c.handleDescribeTransaction(id).errorCode).toBe(E.TRANSACTIONAL_ID_NOT_FOUND);
      expect(h.c.stateManager.getTransactionState(id)).toMatchObject({ errorCode: E.NONE, metadata: undefined });
    }
    for (const id of ['ongoing', 'busy', 'fresh']) expect(h.c.handleDescribeTransaction(id).errorCode).toBe(E.NONE);
    // An expired id starts over with a new producer id.
    expect(await init(h, 'idle-empty')).toMatchObject({ producerId: h.pids.next - 1n, producerEpoch: 0 });

    // The tombstones are what a new coordinator of the partition loads.
    h.apply(leaderChange(TXN, 0, OTHER));
    h.apply(leaderChange(TXN, 0, NODE));
    await h.loaded();
    expect(h.c.handleDescribeTransaction('idle-commit').errorCode).toBe(E.TRANSACTIONAL_ID_NOT_FOUND);
    expect(h.c.handleDescribeTransaction('idle-empty')).toMatchObject({ errorCode: E.NONE, producerEpoch: 0 });
    expect(h.c.handleDescribeTransaction('ongoing').transactionState).toBe('Ongoing');
  });

  test('expired ids of a busy partition are tombstoned in batches within its max.message.bytes (Kafka fills each batch up to it)', async () => {
    const rm = new TxnLogReplicaManager({ maxMessageBytes: 400 });
    const h = await loadedHarness({ rm, config: { transactionalIdExpirationMs: 10_000 } });
    const ids = Array.from({ length: 40 }, (_, i) => `an-expiring-transactional-id-${i}`);
    for (const id of ids) await init(h, id);
    h.clock.now = T0 + 10_000;
    expect(await h.c.stateManager.removeExpiredTransactionalIds()).toBe(ids.length);
    const tombstones = rm.written.filter((w) => w.md === null);
    expect(tombstones.map((w) => w.transactionalId).sort()).toEqual([...ids].sort());
    expect(new Set(tombstones.map((w) => w.append)).size).toBeGreaterThanOrEqual(5);
    expect(Math.max(...tombstones.map((w) => w.batchBytes))).toBeLessThanOrEqual(400);
    for (const id of ids) expect(h.c.handleDescribeTransaction(id).errorCode).toBe(E.TRANSACTIONAL_ID_NOT_FOUND);
    expect(h.lines.filter((l) => l.includes('failed to remove'))).toEqual([]);
  });
});

describe('TransactionCoordinator: ownership and loading', () => {
  test('loading a real log restores ids (last record wins, a tombstone removes one); a PrepareCommit found gets its markers and completes', async () => {
    const rm = new TxnLogReplicaManager();
    rm.appendDirect(0, [
      txnRecord('keep', { producerId: 10n, producerEpoch: 2, txnTimeoutMs: 30_000 }),
      txnRecord('gone', { producerId: 11n, producerEpoch: 0, txnState: TransactionState.CompleteCommit, txnStartTimestamp: T0 - 100 }),
    ]);
    rm.appendDirect(0, [
      txnRecord('later', { producerId: 13n, producerEpoch: 1, txnState: TransactionState.Ongoing, topicPartitions: [a0], txnStartTimestamp: T0 - 50 }),
      txnRecord('gone', null),
    ]);
    rm.appendDirect(0, [
      { key: Buffer.concat([Buffer.from([0, 1]), Buffer.from([0, 1, 0x78])]), value: Buffer.from('from a future key version'), timestamp: T0 },
      { key: transactionLogKey('garbled'), value: Buffer.from([0, 1, 2]), timestamp: T0 },
      txnRecord('later', { producerId: 13n, producerEpoch: 1, txnState: TransactionState.CompleteAbort, txnStartTimestamp: T0 - 50 }),
      txnRecord('pending', {
        producerId: 12n,
        producerEpoch: 4,
        txnState: TransactionState.PrepareCommit,
        topicPartitions: [a0, a1],
        txnStartTimestamp: T0 - 20,
        txnLastUpdateTimestamp: T0 - 10,
      }),
    ]);
    rm.appendDirect(0, [txnRecord('open', { producerId: 14n, producerEpoch: 0, txnState: TransactionState.Ongoing, topicPartitions: [b0], txnStartTimestamp: T0 - 5 })]);
    const h = harness({ rm, coordinatorEpoch: 5, config: { loadBufferSize: 1 } });

    // Until the load is done, every request for the partition's ids waits.
    expect(h.c.stateManager.isLoading(0)).toBe(true);
    expect(h.c.stateManager.getTransactionState('keep').errorCode).toBe(E.COORDINATOR_LOAD_IN_PROGRESS);
    expect((await h.c.handleInitProducerId('keep', 60_000)).errorCode).toBe(E.COORDINATOR_LOAD_IN_PROGRESS);
    expect(await h.c.handleAddPartitionsToTransaction('open', 14n, 0, [a0])).toBe(E.COORDINATOR_LOAD_IN_PROGRESS);
    expect((await h.c.handleEndTransaction('open', 14n, 0, true)).errorCode).toBe(E.COORDINATOR_LOAD_IN_PROGRESS);
    expect(h.c.handleVerifyPartitionsInTransaction('open', 14n, 0, [b0]).get(b0)).toBe(E.COORDINATOR_LOAD_IN_PROGRESS);
    expect(h.c.handleDescribeTransaction('keep').errorCode).toBe(E.COORDINATOR_LOAD_IN_PROGRESS);
    expect(h.c.handleListTransactions([], [], -1n)).toEqual({ errorCode: E.COORDINATOR_LOAD_IN_PROGRESS, unknownStateFilters: [], transactionStates: [] });
    await h.loaded();

    expect(h.c.handleDescribeTransaction('keep')).toMatchObject({ errorCode: E.NONE, transactionState: 'Empty', producerId: 10n, producerEpoch: 2, transactionTimeoutMs: 30_000 });
    expect(h.c.handleDescribeTransaction('gone').errorCode).toBe(E.TRANSACTIONAL_ID_NOT_FOUND);
    expect(h.c.handleDescribeTransaction('garbled').errorCode).toBe(E.TRANSACTIONAL_ID_NOT_FOUND);
    expect(h.c.handleDescribeTransaction('later')).toMatchObject({ transactionState: 'CompleteAbort', producerId: 13n, topics: [] });
    expect(h.c.handleDescribeTransaction('open')).toMatchObject({ transactionState: 'Ongoing', transactionStartTimeMs: BigInt(T0 - 5), topics: [{ topic: 'b', partitions: [0] }] });
    expect(h.lines.some((l) => l.includes('unknown key version'))).toBe(true);
    expect(h.lines.some((l) => l.includes('unreadable record'))).toBe(true);

    // The PrepareCommit found: its markers are sent again under the new coordinator epoch, then CompleteCommit.
    await h.transport.waitForSends(2);
    const pending = { producerId: 12n, producerEpoch: 4 };
    expect(h.transport.markers()).toEqual([marker(NODE, pending, true, 5, 'a-0'), marker(OTHER, pending, true, 5, 'a-1')]);
    const done = await completed(h, 'pending', 'CompleteCommit');
    expect(done).toMatchObject({ producerId: 12n, producerEpoch: 4, txnStartTimestamp: T0 - 20 });
    expect(h.rm.written.map((w) => w.transactionalId)).toEqual(['pending']); // the only write
    expect(h.rm.written[0].offset).toBe(9n); // appended after the 9 records loaded

    // The loaded ids work as before.
    expect(await init(h, 'keep', 30_000)).toMatchObject({ producerId: 10n, producerEpoch: 3 });
    expect(h.c.handleVerifyPartitionsInTransaction('open', 14n, 0, [b0]).get(b0)).toBe(E.NONE);
    expect((await h.c.handleEndTransaction('open', 14n, 0, false)).errorCode).toBe(E.NONE);
    await completed(h, 'open', 'CompleteAbort');
  });

  test('a load of an empty log is immediate; an id the log never named is unknown', async () => {
    const h = harness();
    expect(h.c.stateManager.ownedPartitions()).toEqual([{ partition: 0, coordinatorEpoch: 3, loaded: true }]);
    expect(h.c.stateManager.getTransactionState('x')).toMatchObject({ errorCode: E.NONE, coordinatorEpoch: 3, metadata: undefined });
    expect(await h.c.handleAddPartitionsToTransaction('x', 1n, 0, [a0])).toBe(E.INVALID_PRODUCER_ID_MAPPING);
  });

  test('resignation drops the partition’s ids (NOT_COORDINATOR) and stops its markers; re-election reloads and finishes them', async () => {
    const h = await loadedHarness({ txnPartitions: 2, coordinatorEpoch: 3 });
    const [[lost, lost2], [kept]] = idsByPartition(h, 2);
    const p = await begin(h, lost, [a0, b0]);
    const q = await init(h, lost2);
    const k = await init(h, kept);
    const releaseBroker2 = h.transport.hold(OTHER);
    expect(await endTxn(h, p, true)).toBe(E.NONE);
    await flush();
    expect(topicsOf(h, lost)).toEqual(['b-0']);

    h.apply(leaderChange(TXN, 0, OTHER));
    expect(h.c.stateManager.ownedPartitions().map((o) => o.partition)).toEqual([1]);
    expect(h.c.stateManager.getTransactionState(lost).errorCode).toBe(E.NOT_COORDINATOR);
    expect((await h.c.handleInitProducerId(lost2, 60_000)).errorCode).toBe(E.NOT_COORDINATOR);
    expect(await h.c.handleAddPartitionsToTransaction(lost2, q.producerId, q.producerEpoch, [a0])).toBe(E.NOT_COORDINATOR);
    expect(await endTxn(h, p, true)).toBe(E.NOT_COORDINATOR);
    expect(h.c.handleDescribeTransaction(lost).errorCode).toBe(E.NOT_COORDINATOR);
    expect(h.c.handleVerifyPartitionsInTransaction(lost, p.producerId, p.producerEpoch, [a0]).get(a0)).toBe(E.NOT_COORDINATOR);
    expect(h.c.markerManager.numTxnsWithPendingMarkers).toBe(0);
    // The other partition's ids are untouched.
    expect(h.c.handleDescribeTransaction(kept)).toMatchObject({ errorCode: E.NONE, producerId: k.producerId });
    expect(h.c.handleListTransactions([], [], -1n).transactionStates.map((t) => t.transactionalId)).toEqual([kept]);

    // Broker 2's answer arrives after the resignation: no CompleteCommit is written by this broker.
    releaseBroker2();
    await flush();
    await flush();
    expect(h.rm.states(lost)).toEqual(['Empty', 'Ongoing', 'PrepareCommit']);

    // Elected again (leader epoch 5): the log is loaded, the PrepareCommit's markers are sent under epoch 5.
    const sentBefore = h.transport.sent.length;
    h.apply(leaderChange(TXN, 0, NODE));
    await h.loaded();
    expect(h.c.stateManager.coordinatorEpochOf(0)).toBe(5);
    await h.transport.waitForSends(sentBefore + 2);
    expect(h.transport.markers(sentBefore)).toEqual([marker(NODE, p, true, 5, 'a-0'), marker(OTHER, p, true, 5, 'b-0')]);
    await completed(h, lost, 'CompleteCommit');
    expect(h.c.handleDescribeTransaction(lost2)).toMatchObject({ errorCode: E.NONE, transactionState: 'Empty', producerId: q.producerId, producerEpoch: 0 });
  });

  test('a transition whose write completes after a resignation answers NOT_COORDINATOR and changes no memory', async () => {
    const h = await loadedHarness();
    const p = await init(h, 't1');
    const release = h.rm.hold();
    const adding = h.c.handleAddPartitionsToTransaction('t1', p.producerId, p.producerEpoch, [a0]);
    const mdBefore = metadataOf(h, 't1');
    h.apply(leaderChange(TXN, 0, OTHER));
    release();
    expect(await adding).toBe(E.NOT_COORDINATOR);
    expect(mdBefore.state).toBe(TransactionState.Empty); // the dropped object was not completed either
    expect(mdBefore.pendingState).toBe(TransactionState.Ongoing);

    // Elected again while a second write is in flight: the lookup after the write answers for the
    // reloading partition (Kafka's getTransactionState error), and nothing old is completed.
    h.apply(leaderChange(TXN, 0, NODE));
    await h.loaded();
    const md2 = metadataOf(h, 't1');
    expect(md2.state).toBe(TransactionState.Ongoing); // the first write reached the log
    const release2 = h.rm.hold();
    const adding2 = h.c.handleAddPartitionsToTransaction('t1', p.producerId, p.producerEpoch, [a1]);
    h.apply(leaderChange(TXN, 0, OTHER));
    h.apply(leaderChange(TXN, 0, NODE));
    release2();
    expect(await adding2).toBe(E.COORDINATOR_LOAD_IN_PROGRESS);
    expect(md2.containsPartition('a', 1)).toBe(false);
    await h.loaded();
    // The records did reach the log, so the new coordinator loads them: a client retry finds the partitions added.
    expect(topicsOf(h, 't1')).toEqual(['a-0', 'a-1']);
    expect(await h.c.handleAddPartitionsToTransaction('t1', p.producerId, p.producerEpoch, [a0, a1])).toBe(E.NONE);
    expect(h.rm.states('t1')).toEqual(['Empty', 'Ongoing', 'Ongoing']);
  });

  test('a metadata delta that repeats the same leader epoch does not reload', async () => {
    const h = await loadedHarness();
    const p = await begin(h, 't1', [a0]);
    h.c.onMetadataDelta({ changedPartitions: [h.metadata.partition(TXN, 0)!], removedTopics: [], changedTopicConfigs: new Set(), changedBrokers: new Set() });
    expect(h.c.stateManager.ownedPartitions()).toEqual([{ partition: 0, coordinatorEpoch: 3, loaded: true }]);
    expect(metadataOf(h, 't1').producerId).toBe(p.producerId);
  });

  test('a shut-down coordinator answers COORDINATOR_NOT_AVAILABLE', async () => {
    const h = await loadedHarness();
    const p = await begin(h, 't1', [a0]);
    await h.c.shutdown();
    expect(h.transport.closed).toBe(true);
    expect((await h.c.handleInitProducerId('t1', 60_000)).errorCode).toBe(E.COORDINATOR_NOT_AVAILABLE);
    expect(await h.c.handleAddPartitionsToTransaction('t1', p.producerId, p.producerEpoch, [a0])).toBe(E.COORDINATOR_NOT_AVAILABLE);
    expect(await endTxn(h, p, true)).toBe(E.COORDINATOR_NOT_AVAILABLE);
    expect(h.c.handleDescribeTransaction('t1').errorCode).toBe(E.COORDINATOR_NOT_AVAILABLE);
    expect(h.c.handleListTransactions([], [], -1n).errorCode).toBe(E.COORDINATOR_NOT_AVAILABLE);
    expect(h.c.handleVerifyPartitionsInTransaction('t1', p.producerId, p.producerEpoch, [a0]).get(a0)).toBe(E.COORDINATOR_NOT_AVAILABLE);
  });
});

describe('TransactionCoordinator: ListTransactions, DescribeTransactions, verification', () => {
  test('listTransactionStates filters by state names (unknown ones reported), producer ids and duration', async () => {
    const h = await loadedHarness();
    const o1 = await begin(h, 'o1', [a0]); // producer 1000, started T0
    const c1 = await begin(h, 'c1', [a0]); // producer 1001, started T0
    expect(await endTxn(h, c1, true)).toBe(E.NONE);
    await completed(h, 'c1', 'CompleteCommit');
    h.clock.now = T0 + 8000;
    await begin(h, 'o2', [a1]); // producer 1002, started T0 + 8000
    h.clock.now = T0 + 10_000;
    const list = (pids: bigint[], states: string[], duration: bigint) => {
      const r = h.c.handleListTransactions(pids, states, duration);
      return { ...r, transactionStates: [...r.transactionStates].sort((x, y) => x.transactionalId.localeCompare(y.transactionalId)) };
    };

    expect(list([], [], -1n)).toEqual({
      errorCode: E.NONE,
      unknownStateFilters: [],
      transactionStates: [
        { transactionalId: 'c1', producerId: 1001n, transactionState: 'CompleteCommit' },
        { transactionalId: 'o1', producerId: 1000n, transactionState: 'Ongoing' },
        { transactionalId: 'o2', producerId: 1002n, transactionState: 'Ongoing' },
      ],
    });
    expect(list([], ['Ongoing'], -1n).transactionStates.map((t) => t.transactionalId)).toEqual(['o1', 'o2']);
    const unknown = list([], ['Ongoing', 'Bogus', 'ongoing'], -1n);
    expect(unknown.unknownStateFilters).toEqual(['Bogus', 'ongoing']);
    expect(unknown.transactionStates.map((t) => t.transactionalId)).toEqual(['o1', 'o2']);
    // Only unknown states named: nothing matches (Kafka filters by the names given, known or not).
    expect(list([], ['Bogus'], -1n)).toEqual({ errorCode: E.NONE, unknownStateFilters: ['Bogus'], transactionStates: [] });
    expect(list([o1.producerId, 1001n, 999n], [], -1n).transactionStates.map((t) => t.transactionalId)).toEqual(['c1', 'o1']);
    expect(list([o1.producerId], ['CompleteCommit'], -1n).transactionStates).toEqual([]);
    // Duration (KIP-994): only transactions running longer than it.
    expect(list([], ['Ongoing', 'CompleteCommit'], 5000n).transactionStates.map((t) => t.transactionalId)).toEqual(['c1', 'o1']);
    expect(list([], ['Ongoing'], 10_000n).transactionStates).toEqual([]); // exactly 10 s is not longer
    expect(list([], ['Ongoing'], 9999n).transactionStates.map((t) => t.transactionalId)).toEqual(['o1']);
    expect(list([], ['Ongoing'], 0n).transactionStates.map((t) => t.transactionalId)).toEqual(['o1', 'o2']);
  });

  test('DescribeTransactions reports the state, timeout, start time and partitions', async () => {
    const h = await loadedHarness();
    const p = await begin(h, 't1', [a0, a1, b0], 45_000);
    const d = h.c.handleDescribeTransaction('t1');
    expect(d).toMatchObject({
      transactionalId: 't1',
      errorCode: E.NONE,
      transactionState: 'Ongoing',
      transactionTimeoutMs: 45_000,
      transactionStartTimeMs: BigInt(T0),
      producerId: p.producerId,
      producerEpoch: 0,
    });
    expect(topicsOf(h, 't1')).toEqual(['a-0', 'a-1', 'b-0']);
    expect(h.c.handleDescribeTransaction('nope').errorCode).toBe(E.TRANSACTIONAL_ID_NOT_FOUND);
    expect(h.c.handleDescribeTransaction('').errorCode).toBe(E.INVALID_REQUEST);
  });

  test('handleVerifyPartitionsInTransaction: NONE / TRANSACTION_ABORTABLE / CONCURRENT_TRANSACTIONS / PRODUCER_FENCED / INVALID_PRODUCER_ID_MAPPING', async () => {
    const h = await loadedHarness();
    const p = await begin(h, 't1', [a0, a1]);
    const verify = (id: string, pid: bigint, epoch: number, tps: TopicPartition[]) => {
      const r = h.c.handleVerifyPartitionsInTransaction(id, pid, epoch, tps);
      expect([...r.keys()]).toEqual(tps); // every partition answered
      return tps.map((tp) => r.get(tp));
    };
    expect(verify('t1', p.producerId, p.producerEpoch, [a0, a1, b0])).toEqual([E.NONE, E.NONE, E.TRANSACTION_ABORTABLE]);
    expect(verify('t1', p.producerId, p.producerEpoch + 1, [a0, b0])).toEqual([E.PRODUCER_FENCED, E.PRODUCER_FENCED]);
    expect(verify('t1', p.producerId + 1n, p.producerEpoch, [a0])).toEqual([E.INVALID_PRODUCER_ID_MAPPING]);
    expect(verify('unknown', p.producerId, p.producerEpoch, [a0])).toEqual([E.INVALID_PRODUCER_ID_MAPPING]);
    expect(verify('', p.producerId, p.producerEpoch, [a0])).toEqual([E.INVALID_REQUEST]);

    // No transaction open: nothing is part of one.
    const q = await init(h, 't2');
    expect(verify('t2', q.producerId, q.producerEpoch, [a0])).toEqual([E.TRANSACTION_ABORTABLE]);

    // Pending transitions are not checked (the leader's append re-checks): a write in flight still answers by the partitions.
    const release = h.rm.hold();
    const adding = h.c.handleAddPartitionsToTransaction('t1', p.producerId, p.producerEpoch, [b0]);
    expect(verify('t1', p.producerId, p.producerEpoch, [a0, b0])).toEqual([E.NONE, E.TRANSACTION_ABORTABLE]);
    release();
    expect(await adding).toBe(E.NONE);
    expect(verify('t1', p.producerId, p.producerEpoch, [b0])).toEqual([E.NONE]);

    // While the markers are written: CONCURRENT_TRANSACTIONS.
    const releaseBroker2 = h.transport.hold(OTHER);
    expect(await endTxn(h, p, true)).toBe(E.NONE);
    expect(verify('t1', p.producerId, p.producerEpoch, [a0, b0])).toEqual([E.CONCURRENT_TRANSACTIONS, E.CONCURRENT_TRANSACTIONS]);
    releaseBroker2();
    await completed(h, 't1', 'CompleteCommit');
    expect(verify('t1', p.producerId, p.producerEpoch, [a0, a1, b0])).toEqual([E.TRANSACTION_ABORTABLE, E.TRANSACTION_ABORTABLE, E.TRANSACTION_ABORTABLE]);
  });
});

describe('TransactionCoordinator: transaction.version 2 (KIP-890 part 2)', () => {
  const TV2 = 2;
  /** A coordinator whose cluster finalized transaction.version 2 (a fresh cluster's level). */
  async function tv2Harness(o: HarnessOptions = {}): Promise<Harness> {
    const h = await loadedHarness(o);
    h.metadata.apply([{ type: 'FeatureLevelRecord', data: { name: 'transaction.version', featureLevel: TV2 } }]);
    return h;
  }
  /** EndTxn v5 (client transaction.version 2). */
  const endTxnV2 = (h: Harness, p: { transactionalId: string; producerId: bigint; producerEpoch: number }, commit: boolean) =>
    h.c.handleEndTransaction(p.transactionalId, p.producerId, p.producerEpoch, commit, TV2);

  test('every EndTxn bumps the epoch: Prepare* carries it, the markers use it, the answer returns it; the next transaction runs on it', async () => {
    const h = await tv2Harness();
    const p = await begin(h, 't1', [a0, b0]);
    expect(p.producerEpoch).toBe(0);
    expect(await endTxnV2(h, p, true)).toEqual({ errorCode: E.NONE, producerId: p.producerId, producerEpoch: 1 });
    expect(h.rm.record('t1', TransactionState.PrepareCommit)).toMatchObject({ producerId: p.producerId, producerEpoch: 1, clientTransactionVersion: TV2, nextProducerId: NO_PRODUCER_ID });
    const bumped = { producerId: p.producerId, producerEpoch: 1 };
    expect(h.transport.markers()).toEqual([marker(NODE, bumped, true, 3, 'a-0'), marker(OTHER, bumped, true, 3, 'b-0')]);
    expect(await completed(h, 't1', 'CompleteCommit')).toMatchObject({ producerId: p.producerId, producerEpoch: 1, clientTransactionVersion: TV2 });
    expect(metadataOf(h, 't1')).toMatchObject({ producerEpoch: 1, clientTransactionVersion: TV2, nextProducerId: NO_PRODUCER_ID });

    // The old epoch is fenced for anything but a retry of the EndTxn that bumped it.
    expect(await h.c.handleAddPartitionsToTransaction('t1', p.producerId, 0, [a0])).toBe(E.PRODUCER_FENCED);
    const q = { ...p, producerEpoch: 1 };
    expect(await h.c.handleAddPartitionsToTransaction('t1', q.producerId, q.producerEpoch, [a1])).toBe(E.NONE);
    expect(await endTxnV2(h, q, false)).toEqual({ errorCode: E.NONE, producerId: p.producerId, producerEpoch: 2 });
    expect(h.transport.markers(2)).toEqual([marker(OTHER, { producerId: p.producerId, producerEpoch: 2 }, false, 3, 'a-1')]);
    expect(await completed(h, 't1', 'CompleteAbort')).toMatchObject({ producerEpoch: 2 });
    expect(h.rm.states('t1')).toEqual(['Empty', 'Ongoing', 'PrepareCommit', 'CompleteCommit', 'Ongoing', 'PrepareAbort', 'CompleteAbort']);
    // InitProducerId still bumps on top (and is a transition of client version 0).
    expect(await init(h, 't1')).toMatchObject({ producerId: p.producerId, producerEpoch: 3 });
    expect(metadataOf(h, 't1').clientTransactionVersion).toBe(0);
    expect(h.lines.filter((l) => l.includes(' ERROR '))).toEqual([]);
  });

  test('retries: the epoch before the bump gets NONE with the current id and epoch once complete, CONCURRENT_TRANSACTIONS while the markers are written; anything else is fenced or invalid', async () => {
    const h = await tv2Harness();
    const p = await begin(h, 'r1', [a0, b0]);
    const releaseBroker2 = h.transport.hold(OTHER);
    expect(await endTxnV2(h, p, true)).toEqual({ errorCode: E.NONE, producerId: p.producerId, producerEpoch: 1 });
    await flush();
    expect(h.c.handleDescribeTransaction('r1').transactionState).toBe('PrepareCommit');
    // The CompleteCommit transition is pending while the markers go out.
    expect((await endTxnV2(h, p, true)).errorCode).toBe(E.CONCURRENT_TRANSACTIONS);
    releaseBroker2();
    await completed(h, 'r1', 'CompleteCommit');

    // Kafka's handleEndTransaction for TV2: a retry (epoch + 1 is the current) of the same result is NONE with the new epoch ...
    expect(await endTxnV2(h, p, true)).toEqual({ errorCode: E.NONE, producerId: p.producerId, producerEpoch: 1 });
    // ... of the other result INVALID_TXN_STATE ...
    expect(await endTxnV2(h, p, false)).toEqual({ errorCode: E.INVALID_TXN_STATE, producerId: NO_PRODUCER_ID, producerEpoch: NO_PRODUCER_EPOCH });
    // ... and the current epoch with no transaction, or an older epoch, is PRODUCER_FENCED (the state and epoch alone cannot tell a retry from the next EndTxn).
    expect((await endTxnV2(h, { ...p, producerEpoch: 1 }, true)).errorCode).toBe(E.PRODUCER_FENCED);
    expect((await endTxnV2(h, { ...p, producerEpoch: 5 }, true)).errorCode).toBe(E.PRODUCER_FENCED);
    expect((await endTxnV2(h, { ...p, producerId: p.producerId + 7n }, true)).errorCode).toBe(E.INVALID_PRODUCER_ID_MAPPING);

    // A retry that arrives while Prepare* of the same EndTxn is still being written.
    const q = { ...p, producerEpoch: 1 };
    expect(await h.c.handleAddPartitionsToTransaction('r1', q.producerId, q.producerEpoch, [a0])).toBe(E.NONE);
    const release = h.rm.hold();
    const ending = endTxnV2(h, q, false);
    await flush();
    expect((await endTxnV2(h, q, false)).errorCode).toBe(E.CONCURRENT_TRANSACTIONS);
    release();
    expect(await ending).toEqual({ errorCode: E.NONE, producerId: q.producerId, producerEpoch: 2 });
    await completed(h, 'r1', 'CompleteAbort');
    expect(await endTxnV2(h, q, false)).toEqual({ errorCode: E.NONE, producerId: q.producerId, producerEpoch: 2 });
    expect((await endTxnV2(h, p, false)).errorCode).toBe(E.PRODUCER_FENCED); // two bumps ago
  });

  test('an exhausted epoch rolls over to a new producer id: NextProducerId in Prepare*, the markers at Short.MAX_VALUE, the new id at epoch 0 returned and completed; retries with the old id', async () => {
    const rm = new TxnLogReplicaManager();
    rm.appendDirect(0, [txnRecord('roll', { producerId: 40n, producerEpoch: 32765, txnState: TransactionState.CompleteCommit, txnStartTimestamp: T0 - 10 })]);
    const h = await tv2Harness({ rm });
    const p = await init(h, 'roll');
    expect(p).toMatchObject({ producerId: 40n, producerEpoch: 32766 });
    expect(await h.c.handleAddPartitionsToTransaction('roll', 40n, 32766, [a0, b0])).toBe(E.NONE);

    expect(await endTxnV2(h, p, true)).toEqual({ errorCode: E.NONE, producerId: 1000n, producerEpoch: 0 });
    expect(h.rm.record('roll', TransactionState.PrepareCommit)).toMatchObject({ producerId: 40n, producerEpoch: 32767, nextProducerId: 1000n, nextProducerEpoch: 0, clientTransactionVersion: TV2 });
    const last = { producerId: 40n, producerEpoch: 32767 };
    expect(h.transport.markers()).toEqual([marker(NODE, last, true, 3, 'a-0'), marker(OTHER, last, true, 3, 'b-0')]);
    const done = await completed(h, 'roll', 'CompleteCommit');
    expect(done).toMatchObject({ producerId: 1000n, lastProducerId: 40n, producerEpoch: 0, nextProducerId: NO_PRODUCER_ID });
    expect(metadataOf(h, 'roll')).toMatchObject({ producerId: 1000n, lastProducerId: 40n, producerEpoch: 0, lastProducerEpoch: 32767 });

    // The retry carries the old id at the exhausted epoch: NONE with the new id (Kafka's retryOnOverflow).
    expect(await endTxnV2(h, p, true)).toEqual({ errorCode: E.NONE, producerId: 1000n, producerEpoch: 0 });
    expect((await endTxnV2(h, p, false)).errorCode).toBe(E.INVALID_TXN_STATE);
    expect((await endTxnV2(h, { ...p, producerEpoch: 32765 }, true)).errorCode).toBe(E.INVALID_PRODUCER_ID_MAPPING);
    expect(await h.c.handleAddPartitionsToTransaction('roll', 40n, 32767, [a0])).toBe(E.INVALID_PRODUCER_ID_MAPPING);

    // The new id carries on.
    const n = { transactionalId: 'roll', producerId: 1000n, producerEpoch: 0 };
    expect(await h.c.handleAddPartitionsToTransaction('roll', 1000n, 0, [a1])).toBe(E.NONE);
    expect(await endTxnV2(h, n, false)).toEqual({ errorCode: E.NONE, producerId: 1000n, producerEpoch: 1 });
    await completed(h, 'roll', 'CompleteAbort');
    // A failed allocation of the next id fails the EndTxn retriably and leaves the transaction open.
    const rm2 = new TxnLogReplicaManager();
    rm2.appendDirect(0, [txnRecord('nopid', { producerId: 50n, producerEpoch: 32766, txnState: TransactionState.Ongoing, topicPartitions: [a0], txnStartTimestamp: T0 - 10 })]);
    const h2 = await tv2Harness({ rm: rm2 });
    h2.pids.failure = new Error('no block');
    expect((await endTxnV2(h2, { transactionalId: 'nopid', producerId: 50n, producerEpoch: 32766 }, true)).errorCode).toBe(E.COORDINATOR_LOAD_IN_PROGRESS);
    expect(metadataOf(h2, 'nopid')).toMatchObject({ state: TransactionState.Ongoing, pendingState: null, producerEpoch: 32766 });
    h2.pids.failure = null;
    expect(await endTxnV2(h2, { transactionalId: 'nopid', producerId: 50n, producerEpoch: 32766 }, true)).toEqual({ errorCode: E.NONE, producerId: 1000n, producerEpoch: 0 });
    await completed(h2, 'nopid', 'CompleteCommit');
  });

  test('reloaded from the transaction log (the coordinator moves away and back): a bumped PrepareCommit completes, a roll-over Prepare* moves to its next id, retries are answered from the log', async () => {
    const rm = new TxnLogReplicaManager();
    rm.appendDirect(0, [
      // A TV2 PrepareCommit written before the move: epoch 5 (bumped from 4), its markers not all written.
      txnRecord('bumped', { producerId: 60n, lastProducerId: 60n, producerEpoch: 5, txnState: TransactionState.PrepareCommit, topicPartitions: [a0], txnStartTimestamp: T0 - 10, clientTransactionVersion: TV2 }),
      // A TV2 PrepareAbort at the last epoch, rolling over to producer id 70.
      txnRecord('rolled', {
        producerId: 61n,
        lastProducerId: 61n,
        producerEpoch: 32767,
        nextProducerId: 70n,
        nextProducerEpoch: 0,
        txnState: TransactionState.PrepareAbort,
        topicPartitions: [b0],
        txnStartTimestamp: T0 - 10,
        clientTransactionVersion: TV2,
      }),
      // An older TV1 record (no client version): an EndTxn retry must carry its own epoch.
      txnRecord('old', { producerId: 62n, producerEpoch: 3, txnState: TransactionState.CompleteCommit, txnStartTimestamp: T0 - 10 }),
    ]);
    const h = await tv2Harness({ rm });
    await h.transport.waitForSends(2);
    expect(h.transport.markers()).toEqual([
      marker(NODE, { producerId: 60n, producerEpoch: 5 }, true, 3, 'a-0'),
      marker(OTHER, { producerId: 61n, producerEpoch: 32767 }, false, 3, 'b-0'),
    ]);
    expect(await completed(h, 'bumped', 'CompleteCommit')).toMatchObject({ producerId: 60n, producerEpoch: 5, clientTransactionVersion: TV2 });
    expect(await completed(h, 'rolled', 'CompleteAbort')).toMatchObject({ producerId: 70n, lastProducerId: 61n, producerEpoch: 0 });
    expect(await endTxnV2(h, { transactionalId: 'bumped', producerId: 60n, producerEpoch: 4 }, true)).toEqual({ errorCode: E.NONE, producerId: 60n, producerEpoch: 5 });
    expect(await endTxnV2(h, { transactionalId: 'rolled', producerId: 61n, producerEpoch: 32766 }, false)).toEqual({ errorCode: E.NONE, producerId: 70n, producerEpoch: 0 });
    expect(await endTxnV2(h, { transactionalId: 'old', producerId: 62n, producerEpoch: 3 }, true)).toEqual({ errorCode: E.NONE, producerId: 62n, producerEpoch: 3 });
    expect((await endTxnV2(h, { transactionalId: 'old', producerId: 62n, producerEpoch: 2 }, true)).errorCode).toBe(E.PRODUCER_FENCED);

    // A live bump, then the coordinator moves away and back: the CompleteCommit record alone answers the retry.
    const p = await begin(h, 'live', [a0]);
    expect(await endTxnV2(h, p, true)).toMatchObject({ errorCode: E.NONE, producerEpoch: p.producerEpoch + 1 });
    await completed(h, 'live', 'CompleteCommit');
    h.apply(leaderChange(TXN, 0, OTHER));
    expect((await endTxnV2(h, p, true)).errorCode).toBe(E.NOT_COORDINATOR);
    h.apply(leaderChange(TXN, 0, NODE));
    await h.loaded();
    expect(metadataOf(h, 'live')).toMatchObject({ producerEpoch: p.producerEpoch + 1, clientTransactionVersion: TV2, state: TransactionState.CompleteCommit });
    expect(await endTxnV2(h, p, true)).toEqual({ errorCode: E.NONE, producerId: p.producerId, producerEpoch: p.producerEpoch + 1 });
    expect((await endTxnV2(h, p, false)).errorCode).toBe(E.INVALID_TXN_STATE);
    expect(metadataOf(h, 'rolled')).toMatchObject({ producerId: 70n, lastProducerId: 61n, producerEpoch: 0 });
  });

  test('coordinator aborts (timeouts) bump once more under a finalized level of 2; an EndTxn of the fenced epoch is PRODUCER_FENCED; a client of version 0 keeps its epoch', async () => {
    const h = await tv2Harness();
    const p = await begin(h, 'slow', [a0], 1000);
    h.clock.now = T0 + 1001;
    expect(await h.c.abortTimedOutTransactions()).toBe(1);
    // The fence takes epoch 1; the abort, made at the cluster's transaction.version, bumps to 2.
    expect(h.rm.record('slow', TransactionState.PrepareAbort)).toMatchObject({ producerEpoch: 2, clientTransactionVersion: TV2 });
    expect(h.transport.markers()).toEqual([marker(NODE, { producerId: p.producerId, producerEpoch: 2 }, false, 3, 'a-0')]);
    await completed(h, 'slow', 'CompleteAbort');
    for (const commit of [true, false]) expect((await endTxnV2(h, p, commit)).errorCode).toBe(E.PRODUCER_FENCED);
    expect(await h.c.handleAddPartitionsToTransaction('slow', p.producerId, p.producerEpoch, [a0])).toBe(E.PRODUCER_FENCED);
    expect(await init(h, 'slow')).toMatchObject({ producerId: p.producerId, producerEpoch: 3 });

    // An old client (EndTxn v0-4) at transaction.version 2: no bump, the epoch it has stays valid.
    const o = await begin(h, 'oldclient', [a0]);
    expect(await h.c.handleEndTransaction('oldclient', o.producerId, o.producerEpoch, true)).toEqual({ errorCode: E.NONE, producerId: o.producerId, producerEpoch: o.producerEpoch });
    expect(h.rm.record('oldclient', TransactionState.PrepareCommit)).toMatchObject({ producerEpoch: o.producerEpoch, clientTransactionVersion: 0 });
    await completed(h, 'oldclient', 'CompleteCommit');
    expect(await h.c.handleAddPartitionsToTransaction('oldclient', o.producerId, o.producerEpoch, [a1])).toBe(E.NONE);
  });
});
