/**
 * RaftQuorumLog over a hand-driven stand-in for KafkaRaftClient (the surface it uses: nodeId,
 * addListener, isLeader, epoch, leader, append; its listeners are called synchronously by the
 * test, where the real client calls them from microtasks): the backlog before register is delivered first, then the leader; control batches as
 * empty batches with their epoch; an append is refused off the leader, resolves only after its
 * batch reached the listener, and the client's NOT_CONTROLLER becomes NotLeaderError while other
 * failures pass through unchanged. The real client is exercised by
 * compat-tests/replication/controller-quorum.test.ts.
 */
import { ErrorCode, KafkaError } from '../../protocol/errors';
import { encodeMetadataRecord } from '../metadata-log-store';
import type { MetadataRecord } from '../metadata-records';
import { NotControllerError, type CommittedBatch as RaftBatch, type KafkaRaftClient, type KafkaRaftClientListener, type RaftLeader } from '../raft/kafka-raft-client';
import type { SimpleRecord } from '../../protocol/records/memory-records-builder';
import { NotLeaderError, type CommittedBatch, type LoadedSnapshot, type QuorumLeader } from './quorum-log';
import { readSnapshotRecords, writeSnapshotRecords } from '../snapshot/snapshot-records';
import type { OffsetAndEpoch } from '../raft/raft-log';
import { RaftQuorumLog } from './raft-quorum-log';

const REC: MetadataRecord = { type: 'FeatureLevelRecord', data: { name: 'metadata.version', featureLevel: 21 } };

class FakeClient {
  readonly nodeId = 1;
  readonly listeners = new Set<KafkaRaftClientListener>();
  isLeader = false;
  epoch = 0;
  leader: RaftLeader = { id: -1, epoch: 0, endpoint: null };
  appends: { records: readonly SimpleRecord[]; resolve: (o: bigint) => void; reject: (e: Error) => void }[] = [];

  addListener(l: KafkaRaftClientListener): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }
  append(records: readonly SimpleRecord[]): Promise<bigint> {
    if (!this.isLeader) return Promise.reject(new NotControllerError('not the leader'));
    return new Promise((resolve, reject) => this.appends.push({ records, resolve, reject }));
  }
  snapshots: { id: OffsetAndEpoch; data: Buffer }[] = [];
  /** The KRaftVersion / Voters records a kraft.version 1 quorum puts after the header (none here: static). */
  headerControlRecords: SimpleRecord[] = [];
  snapshotControlRecords(): SimpleRecord[] {
    return this.headerControlRecords;
  }
  createSnapshot(id: OffsetAndEpoch, data: Buffer): void {
    this.snapshots.push({ id, data });
  }
  loadSnapshot(id: OffsetAndEpoch, data: Buffer): void {
    for (const l of this.listeners) l.onLoadSnapshot?.({ id, data });
  }
  commit(batches: RaftBatch[]): void {
    for (const l of this.listeners) l.onCommit?.(batches, batches[batches.length - 1].lastOffset + 1n);
  }
  lead(id: number, epoch: number): void {
    this.leader = { id, epoch, endpoint: null };
    this.epoch = epoch;
    this.isLeader = id === this.nodeId;
    for (const l of this.listeners) l.onLeaderChange?.(this.leader);
  }
}

const data = (lastOffset: bigint, epoch: number): RaftBatch => ({
  baseOffset: lastOffset,
  lastOffset,
  epoch,
  isControl: false,
  records: [{ offset: lastOffset, key: null, value: encodeMetadataRecord(REC) }],
});
const control = (lastOffset: bigint, epoch: number): RaftBatch => ({ baseOffset: lastOffset, lastOffset, epoch, isControl: true, records: [{ offset: lastOffset, key: null, value: Buffer.alloc(4) }] });

function setup() {
  const client = new FakeClient();
  const log = new RaftQuorumLog(client as unknown as KafkaRaftClient);
  const events: (CommittedBatch | QuorumLeader | LoadedSnapshot)[] = [];
  return { client, log, events, register: () => log.register({ onCommit: (b) => events.push(b), onLeaderChange: (l) => events.push(l), onLoadSnapshot: (s) => events.push(s) }) };
}

test('the backlog before register comes first, then the leader, then new batches; control batches are empty', () => {
  const { client, log, events, register } = setup();
  client.lead(2, 1);
  client.commit([control(0n, 1), data(1n, 1)]);
  expect(log.leader()).toEqual({ id: 2, epoch: 1 });
  register();
  expect(events).toEqual([
    { records: [], lastOffset: 0n, epoch: 1 },
    { records: [REC], lastOffset: 1n, epoch: 1 },
    { id: 2, epoch: 1 },
  ]);
  client.commit([data(1n, 1), data(2n, 1)]); // offset 1 again: dropped
  client.lead(3, 2);
  expect(events.slice(3)).toEqual([{ records: [REC], lastOffset: 2n, epoch: 1 }, { id: 3, epoch: 2 }]);
});

test('append: refused off the leader, resolved after delivery, NOT_CONTROLLER mapped to NotLeaderError', async () => {
  const { client, log, events, register } = setup();
  register();
  await expect(log.append([REC])).rejects.toBeInstanceOf(NotLeaderError);
  client.lead(1, 3);
  const p = log.append([REC]);
  expect(client.appends).toHaveLength(1);
  let settled = false;
  void p.then(() => (settled = true));
  client.appends[0].resolve(5n); // the client says committed; the listener has not seen it yet
  await new Promise((r) => setImmediate(r));
  expect(settled).toBe(false);
  client.commit([data(5n, 3)]);
  await expect(p).resolves.toBe(5n);
  expect(events[events.length - 1]).toEqual({ records: [REC], lastOffset: 5n, epoch: 3 });

  const lost = log.append([REC]);
  client.appends[1].reject(new NotControllerError('lost the leadership'));
  await expect(lost).rejects.toBeInstanceOf(NotLeaderError);
  const failed = log.append([REC]);
  client.appends[2].reject(new KafkaError(ErrorCode.KAFKA_STORAGE_ERROR, 'disk'));
  await expect(failed).rejects.toMatchObject({ code: ErrorCode.KAFKA_STORAGE_ERROR });

  const waiting = log.append([REC]);
  client.appends[3].resolve(9n);
  await new Promise((r) => setImmediate(r));
  log.close();
  await expect(waiting).rejects.toBeInstanceOf(NotLeaderError);
  await expect(log.append([REC])).rejects.toBeInstanceOf(NotLeaderError);
});

test('snapshots: one handed over before register replaces the backlog; after it the feed continues past its end; createSnapshot writes Kafka\'s format; a corrupt one stops the feed', () => {
  const { client, log, events, register } = setup();
  client.commit([control(0n, 1), data(1n, 1)]);
  const snap = writeSnapshotRecords([REC], { epoch: 1, lastContainedLogTimestamp: 0 });
  client.loadSnapshot({ offset: 2n, epoch: 1 }, snap);
  client.commit([data(1n, 1), data(2n, 1)]); // 1 is covered by the snapshot: dropped
  register();
  expect(events).toEqual([{ id: { offset: 2n, epoch: 1 }, records: [REC] }, { records: [REC], lastOffset: 2n, epoch: 1 }, { id: -1, epoch: 0 }]);

  log.createSnapshot({ offset: 3n, epoch: 1 }, [REC, REC], 99);
  expect(client.snapshots).toHaveLength(1);
  expect(client.snapshots[0].id).toEqual({ offset: 3n, epoch: 1 });
  expect(readSnapshotRecords(client.snapshots[0].data)).toMatchObject({ lastContainedLogTimestamp: 99n, records: [REC, REC], headerControlRecords: [] });
  // kraft.version 1: the client's KRaftVersion / Voters records follow the header.
  client.headerControlRecords = [{ key: Buffer.from([0, 0, 0, 5]), value: Buffer.from([0, 0, 0, 1]) }];
  log.createSnapshot({ offset: 3n, epoch: 1 }, [REC], 99);
  expect(readSnapshotRecords(client.snapshots[1].data).headerControlRecords).toMatchObject([{ key: Buffer.from([0, 0, 0, 5]), value: Buffer.from([0, 0, 0, 1]) }]);

  const bad = Buffer.from(snap);
  bad[bad.length - 5] ^= 0xff;
  expect(() => client.loadSnapshot({ offset: 10n, epoch: 2 }, bad)).toThrow(/cannot be read/);
  const before = events.length;
  client.commit([data(10n, 2)]);
  expect(events.length).toBe(before);
});
