/**
 * MetadataObserver against scripted controllers (fake channels: each request goes to the handler of
 * the address the channel points at): the KRaft Fetch fields it sends, batches applied only once
 * wholly below a leader's high watermark and in order, control batches skipped with the position
 * moving past them, the bounded buffer of uncommitted records, truncation on DivergingEpoch (and a
 * refusal below what was applied), leader discovery from NOT_LEADER_OR_FOLLOWER /
 * FENCED_LEADER_EPOCH answers, NodeEndpoints and random voters after a failure, a racing answer
 * dropped, and a SnapshotId answer: the snapshot downloaded in chunks with FetchSnapshot and applied
 * as its difference to the broker's image (topics it no longer has removed), fetching then going on
 * at its end; a corrupt download refused and fetched again; no image: reported, never skipped.
 */
import { MetadataObserver, type ObserverChannel, type MetadataObserverOptions } from './metadata-observer';
import { fetchResponse, type FetchPartitionResult } from './raft/raft-messages';
import { buildRecordBatch } from '../protocol/records/memory-records-builder';
import { encodeMetadataRecord } from './metadata-log-store';
import type { MetadataBatch } from './metadata-log';
import type { MetadataRecord } from './metadata-records';
import type { FetchRequest, FetchResponse } from '../protocol/generated/fetch';
import type { FetchSnapshotRequest, FetchSnapshotResponse } from '../protocol/generated/fetch-snapshot';
import { fetchSnapshotResponse } from './raft/raft-messages';
import { MetadataCache } from './metadata-cache';
import { writeSnapshotRecords } from './snapshot/snapshot-records';
import { ErrorCode } from '../protocol/errors';
import { Logger } from '../common/logger';
import { ConnectionError } from '../client/network-client';

const topic = (name: string): MetadataRecord => ({ type: 'TopicRecord', data: { name, topicId: 'AAAAAAAAAAAAAAAAAAAAAA' } }) as MetadataRecord;

/** A metadata batch of topic records at `baseOffset` in `epoch`. */
function batch(baseOffset: bigint, epoch: number, names: string[]): Buffer {
  return buildRecordBatch(names.map((n) => ({ value: encodeMetadataRecord(topic(n)) })), { baseOffset, partitionLeaderEpoch: epoch });
}

/** A control batch (as LeaderChange is) of one record. */
function control(baseOffset: bigint, epoch: number): Buffer {
  return buildRecordBatch([{ key: Buffer.from([0, 0, 0, 2]), value: Buffer.from([0, 0]) }], { baseOffset, partitionLeaderEpoch: epoch, isControlBatch: true });
}

type Answer = FetchResponse | Error | Promise<FetchResponse | Error>;
type Handler = (req: FetchRequest, address: string) => Answer;
type SnapshotHandler = (req: FetchSnapshotRequest, address: string) => FetchSnapshotResponse | Error;

interface Sent {
  address: string;
  req: FetchRequest;
}

/** Every address's handler; `sent` records each request in order. */
class FakeNet {
  readonly handlers = new Map<string, Handler>();
  readonly snapshotHandlers = new Map<string, SnapshotHandler>();
  readonly sent: Sent[] = [];
  readonly snapshotRequests: FetchSnapshotRequest[] = [];

  channel(): ObserverChannel {
    let address = '';
    return {
      retarget: (host, port) => void (address = `${host}:${port}`),
      versionFor: async () => 17,
      send: async (api: 'Fetch' | 'FetchSnapshot', body: unknown) => {
        if (api === 'FetchSnapshot') {
          const sreq = body as FetchSnapshotRequest;
          this.snapshotRequests.push(sreq);
          const sh = this.snapshotHandlers.get(address);
          const sa = sh ? sh(sreq, address) : new ConnectionError(`connect to ${address} refused`);
          if (sa instanceof Error) throw sa;
          return sa as never;
        }
        const req = body as FetchRequest;
        this.sent.push({ address, req });
        const h = this.handlers.get(address);
        const a = await (h ? h(req, address) : new ConnectionError(`connect to ${address} refused`));
        if (a instanceof Error) throw a;
        return a as never;
      },
      close: () => undefined,
    };
  }
}

const partition = (req: FetchRequest) => req.topics[0].partitions[0];

function answer(p: Partial<FetchPartitionResult> & { leaderId: number; leaderEpoch: number }, nodeEndpoints: FetchResponse['nodeEndpoints'] = []): FetchResponse {
  const res = fetchResponse(ErrorCode.NONE, { errorCode: ErrorCode.NONE, highWatermark: -1n, logStartOffset: 0n, records: null, ...p });
  return { ...res, nodeEndpoints };
}

const records = (...bufs: Buffer[]) => Buffer.concat(bufs);

const VOTERS = new Map([
  [1, { host: 'c1', port: 9093 }],
  [2, { host: 'c2', port: 9093 }],
  [3, { host: 'c3', port: 9093 }],
]);

function observer(net: FakeNet, over: Partial<MetadataObserverOptions> = {}) {
  const applied: MetadataBatch[] = [];
  const lines: string[] = [];
  const logger = new Logger('observer-test', 'debug', (l) => void lines.push(l));
  let pick = 0;
  const o = new MetadataObserver({
    nodeId: 7,
    clusterId: 'test-cluster',
    voters: VOTERS,
    bootstrapServers: [],
    channel: net.channel(),
    syncChannel: net.channel(),
    logger,
    apply: (b) => void applied.push(...b),
    maxWaitMs: 50,
    fetchTimeoutMs: 400,
    requestTimeoutMs: 200,
    retryBackoffMs: 5,
    // Voters asked in turn: 1, 2, 3, 1, ...
    random: (bound) => pick++ % bound,
    ...over,
  });
  return { o, applied, lines, names: () => applied.flatMap((b) => b.records.map((r) => (r.data as { name: string }).name)) };
}

test('applies only what the leader committed, in order, skipping control batches; sends the KRaft fetch fields', async () => {
  const net = new FakeNet();
  let hw = 3n;
  net.handlers.set('c1:9093', (req) => {
    const p = partition(req);
    if (p.currentLeaderEpoch !== 3) return answer({ errorCode: ErrorCode.FENCED_LEADER_EPOCH, leaderId: 1, leaderEpoch: 3 });
    if (p.fetchOffset === 0n) return answer({ leaderId: 1, leaderEpoch: 3, highWatermark: hw, records: records(control(0n, 3), batch(1n, 3, ['a', 'b']), batch(3n, 3, ['c'])) });
    return answer({ leaderId: 1, leaderEpoch: 3, highWatermark: hw });
  });
  const { o, applied, names } = observer(net);
  await o.catchUp(2_000);
  // The first fetch went to a voter with epoch 0 and was told the leader and its epoch.
  expect(partition(net.sent[0].req)).toMatchObject({ currentLeaderEpoch: 0, fetchOffset: 0n, lastFetchedEpoch: 0 });
  expect(net.sent[0].req.replicaState.replicaId).toBe(7);
  expect(net.sent[0].req.clusterId).toBe('test-cluster');
  expect(partition(net.sent[1].req)).toMatchObject({ currentLeaderEpoch: 3, fetchOffset: 0n });
  expect(o.leader).toEqual({ id: 1, epoch: 3, endpoint: { host: 'c1', port: 9093 } });
  // Offsets 0 (control) .. 2 committed; 3 held.
  expect(names()).toEqual(['a', 'b']);
  expect(applied.map((b) => b.lastOffset)).toEqual([2n]);
  expect(o.committedEnd).toBe(3n);
  expect(o.fetchOffset).toBe(4n);
  expect(o.bufferedBatches).toBe(1);

  // The next fetch asks from the held end with its epoch; the high watermark passing 3 applies it, once.
  hw = 4n;
  await o.awaitCaughtUp(2_000);
  const last = partition(net.sent[net.sent.length - 1].req);
  expect(last).toMatchObject({ fetchOffset: 4n, lastFetchedEpoch: 3, currentLeaderEpoch: 3 });
  expect(names()).toEqual(['a', 'b', 'c']);
  expect(o.committedEnd).toBe(4n);
  expect(o.bufferedBatches).toBe(0);
  await o.stop();
});

test('a DivergingEpoch answer truncates the uncommitted records, never what was applied', async () => {
  const net = new FakeNet();
  let phase = 0;
  // Leader 1 in epoch 2 commits 0..1 and sends 2..3 uncommitted; then leader 2 of epoch 3 has other records from 2.
  net.handlers.set('c1:9093', (req) => {
    const p = partition(req);
    if (phase === 0 && p.currentLeaderEpoch < 2) return answer({ errorCode: ErrorCode.FENCED_LEADER_EPOCH, leaderId: 1, leaderEpoch: 2 });
    if (phase === 0) return answer({ leaderId: 1, leaderEpoch: 2, highWatermark: 2n, records: records(batch(0n, 2, ['a', 'b']), batch(2n, 2, ['lost1']), batch(3n, 2, ['lost2'])) });
    return answer({ errorCode: ErrorCode.FENCED_LEADER_EPOCH, leaderId: 2, leaderEpoch: 3 });
  });
  net.handlers.set('c2:9093', (req) => {
    const p = partition(req);
    if (p.currentLeaderEpoch < 3) return answer({ errorCode: ErrorCode.FENCED_LEADER_EPOCH, leaderId: 2, leaderEpoch: 3 });
    if (p.lastFetchedEpoch === 2 && p.fetchOffset > 2n) return answer({ leaderId: 2, leaderEpoch: 3, highWatermark: 4n, divergingEpoch: { epoch: 2, offset: 2n } });
    if (p.fetchOffset === 2n) return answer({ leaderId: 2, leaderEpoch: 3, highWatermark: 4n, records: records(control(2n, 3), batch(3n, 3, ['kept'])) });
    return answer({ leaderId: 2, leaderEpoch: 3, highWatermark: 4n });
  });
  const { o, names, lines } = observer(net);
  await o.catchUp(2_000);
  expect(names()).toEqual(['a', 'b']);
  expect(o.fetchOffset).toBe(4n);
  phase = 1;
  await o.awaitCaughtUp(2_000);
  expect(o.leader.id).toBe(2);
  expect(names()).toEqual(['a', 'b', 'kept']);
  expect(o.committedEnd).toBe(4n);
  expect(lines.some((l) => /truncated the uncommitted records from offset 2/.test(l))).toBe(true);
  // The fetch after the truncation asked from offset 2 with the epoch of the last batch kept.
  expect(net.sent.some((s) => s.address === 'c2:9093' && partition(s.req).fetchOffset === 2n && partition(s.req).lastFetchedEpoch === 2)).toBe(true);
  await o.stop();
});

test('a truncation below the applied metadata is refused and logged', async () => {
  const net = new FakeNet();
  let diverge = false;
  net.handlers.set('c1:9093', (req) => {
    const p = partition(req);
    if (p.currentLeaderEpoch < 1) return answer({ errorCode: ErrorCode.FENCED_LEADER_EPOCH, leaderId: 1, leaderEpoch: 1 });
    if (diverge) return answer({ leaderId: 1, leaderEpoch: 1, highWatermark: 2n, divergingEpoch: { epoch: 1, offset: 0n } });
    return answer({ leaderId: 1, leaderEpoch: 1, highWatermark: 2n, records: p.fetchOffset === 0n ? records(batch(0n, 1, ['a', 'b'])) : null });
  });
  const { o, names, lines } = observer(net);
  await o.catchUp(2_000);
  diverge = true;
  await expect(o.awaitCaughtUp(300)).resolves.toBeUndefined(); // already caught up with the high watermark
  expect(names()).toEqual(['a', 'b']);
  expect(o.committedEnd).toBe(2n);
  expect(lines.some((l) => /below the committed metadata this broker applied \(2\): refused/.test(l))).toBe(true);
  await o.stop();
});

test('finds the leader from NOT_LEADER_OR_FOLLOWER answers, NodeEndpoints, and random voters after a failure', async () => {
  const net = new FakeNet();
  let leader = 3;
  let epoch = 5;
  const voterHandler = (id: number): Handler => (req) => {
    const p = partition(req);
    if (p.currentLeaderEpoch < epoch) return answer({ errorCode: ErrorCode.FENCED_LEADER_EPOCH, leaderId: leader, leaderEpoch: epoch });
    if (id !== leader) return answer({ errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, leaderId: leader, leaderEpoch: epoch });
    return answer({ leaderId: id, leaderEpoch: epoch, highWatermark: 1n, records: p.fetchOffset === 0n ? control(0n, epoch) : null });
  };
  for (const id of [1, 2, 3]) net.handlers.set(`c${id}:9093`, voterHandler(id));
  const { o } = observer(net);
  await o.catchUp(2_000);
  expect(o.leader.id).toBe(3);
  // Voter 1 (asked first) named 3: the next request went there.
  expect(net.sent.map((s) => s.address)).toEqual(['c1:9093', 'c3:9093']);

  // Leader 3 dies; voters still name it until an election: the observer does not go back to it.
  net.handlers.delete('c3:9093');
  const before = net.sent.length;
  const waiting = o.awaitCaughtUp(3_000);
  await new Promise((r) => setTimeout(r, 150));
  const meanwhile = net.sent.slice(before).map((s) => s.address);
  expect(meanwhile[0]).toBe('c3:9093');
  // Random other voters are asked (backing off, not in a tight loop); the one they name in epoch 5 is not followed again.
  expect(meanwhile.slice(1).filter((a) => a === 'c3:9093')).toEqual([]);
  expect(new Set(meanwhile.slice(1))).toContain('c1:9093');
  expect(meanwhile.length).toBeLessThan(30);
  expect(o.leader).toMatchObject({ id: -1, epoch: 5 });
  // Voter 2 wins epoch 6.
  leader = 2;
  epoch = 6;
  await waiting;
  expect(o.leader).toEqual({ id: 2, epoch: 6, endpoint: { host: 'c2', port: 9093 } });
  await o.stop();

  // Bootstrap servers only: the leader's address comes from NodeEndpoints.
  const net2 = new FakeNet();
  net2.handlers.set('b1:9093', () => answer({ errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, leaderId: 9, leaderEpoch: 2 }, [{ nodeId: 9, host: 'leader9', port: 9000, rack: null }]));
  net2.handlers.set('leader9:9000', (req) => answer({ leaderId: 9, leaderEpoch: 2, highWatermark: 1n, records: partition(req).fetchOffset === 0n ? batch(0n, 2, ['x']) : null }));
  const { o: o2, names } = observer(net2, { voters: new Map(), bootstrapServers: [{ host: 'b1', port: 9093 }] });
  await o2.catchUp(2_000);
  expect(net2.sent.map((s) => s.address)).toEqual(['b1:9093', 'leader9:9000']);
  expect(names()).toEqual(['x']);
  expect(o2.leader).toEqual({ id: 9, epoch: 2, endpoint: { host: 'leader9', port: 9000 } });
  await o2.stop();
});

test('a leader that stops answering is left after controller.quorum.fetch.timeout.ms', async () => {
  const net = new FakeNet();
  let failing = false;
  let now = 0;
  net.handlers.set('c1:9093', (req) => {
    // An error that says nothing about the leadership: retried on the same leader, until the fetch timeout.
    if (failing) return fetchResponse(ErrorCode.UNKNOWN_SERVER_ERROR);
    const p = partition(req);
    if (p.currentLeaderEpoch < 1) return answer({ errorCode: ErrorCode.FENCED_LEADER_EPOCH, leaderId: 1, leaderEpoch: 1 });
    return answer({ leaderId: 1, leaderEpoch: 1, highWatermark: 0n });
  });
  const two: Handler = (req) =>
    partition(req).currentLeaderEpoch < 2 ? answer({ errorCode: ErrorCode.FENCED_LEADER_EPOCH, leaderId: 2, leaderEpoch: 2 }) : answer({ leaderId: 2, leaderEpoch: 2, highWatermark: 0n });
  net.handlers.set('c2:9093', two);
  net.handlers.set('c3:9093', two);
  const { o } = observer(net, { now: () => now });
  await o.catchUp(1_000);
  expect(o.leader.id).toBe(1);
  failing = true;
  const from = net.sent.length;
  const waiting = o.awaitCaughtUp(1_000).catch(() => undefined);
  await new Promise((r) => setTimeout(r, 60));
  expect(new Set(net.sent.slice(from).map((s) => s.address))).toEqual(new Set(['c1:9093']));
  expect(o.leader.id).toBe(1);
  // No successful fetch for longer than the fetch timeout: the next fetch goes to a random voter, which names leader 2.
  now += 401;
  await waiting;
  expect(net.sent.slice(from).some((s) => s.address !== 'c1:9093')).toBe(true);
  expect(o.leader.id).toBe(2);
  await o.stop();
});

test('uncommitted records are held up to the buffer bound, without refetching in a tight loop', async () => {
  const net = new FakeNet();
  const one = batch(1n, 1, ['a']);
  let hw = 1n;
  net.handlers.set('c1:9093', async (req) => {
    const p = partition(req);
    if (p.currentLeaderEpoch < 1) return answer({ errorCode: ErrorCode.FENCED_LEADER_EPOCH, leaderId: 1, leaderEpoch: 1 });
    const all = [control(0n, 1), batch(1n, 1, ['a']), batch(2n, 1, ['b']), batch(3n, 1, ['c'])];
    const from = Number(p.fetchOffset);
    return answer({ leaderId: 1, leaderEpoch: 1, highWatermark: hw, records: from < all.length ? all[from] : null });
  });
  const { o, names } = observer(net, { maxBufferBytes: one.length });
  await o.catchUp(1_000);
  o.start();
  // One uncommitted batch held; the next does not fit: the loop backs off instead of spinning.
  await new Promise((r) => setTimeout(r, 300));
  expect(o.bufferedBatches).toBe(1);
  expect(o.fetchOffset).toBe(2n);
  const sentWhileFull = net.sent.length;
  expect(sentWhileFull).toBeLessThan(20);
  hw = 4n;
  await o.awaitCaughtUp(2_000);
  expect(names()).toEqual(['a', 'b', 'c']);
  await o.stop();
});

test('an answer to a position that has moved on is dropped: every batch is applied once', async () => {
  const net = new FakeNet();
  let release: () => void = () => {};
  const gate = new Promise<void>((r) => (release = r));
  net.handlers.set('c1:9093', async (req) => {
    const p = partition(req);
    if (p.currentLeaderEpoch < 1) return answer({ errorCode: ErrorCode.FENCED_LEADER_EPOCH, leaderId: 1, leaderEpoch: 1 });
    if (p.fetchOffset === 0n) await gate; // both fetches at offset 0 are answered together
    return answer({ leaderId: 1, leaderEpoch: 1, highWatermark: 2n, records: p.fetchOffset === 0n ? batch(0n, 1, ['a', 'b']) : null });
  });
  const { o, applied, names } = observer(net);
  const a = o.catchUp(2_000);
  const b = o.awaitCaughtUp(2_000);
  await new Promise((r) => setTimeout(r, 30));
  release();
  await Promise.all([a, b]);
  expect(names()).toEqual(['a', 'b']);
  expect(applied).toHaveLength(1);
  await o.stop();
});

test('without an image, a SnapshotId answer is reported and retried, not skipped', async () => {
  const net = new FakeNet();
  net.handlers.set('c1:9093', (req) => {
    const p = partition(req);
    if (p.currentLeaderEpoch < 4) return answer({ errorCode: ErrorCode.FENCED_LEADER_EPOCH, leaderId: 1, leaderEpoch: 4 });
    return answer({ leaderId: 1, leaderEpoch: 4, highWatermark: 120n, logStartOffset: 100n, snapshotId: { offset: 100n, epoch: 3 } });
  });
  const { o, applied, lines } = observer(net);
  await expect(o.catchUp(300)).rejects.toThrow(/did not catch up .*the metadata snapshot could not be loaded/);
  expect(applied).toEqual([]);
  expect(o.fetchOffset).toBe(0n);
  expect(lines.some((l) => /ERROR.*cannot load metadata snapshot 100-3 .*no image/.test(l))).toBe(true);
  await o.stop();
});

const ID_A = 'AAAAAAAAAAAAAAAAAAAAAA';
const ID_B = 'BBBBBBBBBBBBBBBBBBBBBB';

/** A leader at epoch 4 whose log starts at a snapshot 100-3 holding topic `kept` only, then a batch at 100. */
function snapshotLeader(net: FakeNet, snapshot: Buffer, opts: { chunk: number; corruptFirst?: boolean }) {
  let corrupt = opts.corruptFirst ?? false;
  net.handlers.set('c1:9093', (req) => {
    const p = partition(req);
    if (p.currentLeaderEpoch < 4) return answer({ errorCode: ErrorCode.FENCED_LEADER_EPOCH, leaderId: 1, leaderEpoch: 4 });
    if (p.fetchOffset < 100n) return answer({ leaderId: 1, leaderEpoch: 4, highWatermark: 101n, logStartOffset: 100n, snapshotId: { offset: 100n, epoch: 3 } });
    expect(p.lastFetchedEpoch).toBe(3);
    if (p.fetchOffset === 100n) return answer({ leaderId: 1, leaderEpoch: 4, highWatermark: 101n, logStartOffset: 100n, records: batch(100n, 4, ['after']) });
    return answer({ leaderId: 1, leaderEpoch: 4, highWatermark: 101n, logStartOffset: 100n });
  });
  net.snapshotHandlers.set('c1:9093', (req) => {
    const p = req.topics[0].partitions[0];
    expect(p.snapshotId).toEqual({ endOffset: 100n, epoch: 3 });
    expect(p.currentLeaderEpoch).toBe(4);
    const start = Number(p.position);
    let chunk = snapshot.subarray(start, start + opts.chunk);
    if (corrupt && start === 0) {
      corrupt = false;
      chunk = Buffer.from(chunk);
      chunk[chunk.length - 1] ^= 0xff;
    }
    return fetchSnapshotResponse(ErrorCode.NONE, {
      errorCode: ErrorCode.NONE,
      snapshotId: { endOffset: 100n, epoch: 3 },
      currentLeader: { leaderId: 1, leaderEpoch: 4 },
      size: BigInt(snapshot.length),
      position: p.position,
      unalignedRecords: chunk,
    } as never);
  });
}

test('a SnapshotId answer: the snapshot is downloaded in chunks and applied as its difference to the image, then fetching goes on at its end', async () => {
  const net = new FakeNet();
  const target = new MetadataCache('test-cluster');
  target.apply([{ type: 'TopicRecord', data: { name: 'kept', topicId: ID_A } } as MetadataRecord], 99n);
  const snapshot = writeSnapshotRecords(target.imageRecords(), { epoch: 3, lastContainedLogTimestamp: 0, now: 0 });
  snapshotLeader(net, snapshot, { chunk: 64 });
  // The broker's image before: `kept` and `gone` (deleted on the controllers since).
  const image = new MetadataCache('test-cluster');
  image.apply([{ type: 'TopicRecord', data: { name: 'kept', topicId: ID_A } }, { type: 'TopicRecord', data: { name: 'gone', topicId: ID_B } }] as MetadataRecord[], 10n);
  const { o, applied } = observer(net, { image: () => image, apply: (b) => void b.forEach((x) => { applied.push(x); image.apply(x.records, x.lastOffset); }) });
  await o.catchUp(3_000);
  expect(net.snapshotRequests.length).toBe(Math.ceil(snapshot.length / 64));
  expect(applied[0]).toEqual({ records: [{ type: 'RemoveTopicRecord', data: { topicId: ID_B } }], lastOffset: 99n });
  expect(applied[1].lastOffset).toBe(100n);
  expect([...image.topics()].map((t) => t.name).sort()).toEqual(['after', 'kept']);
  expect(o.committedEnd).toBe(101n);
  await o.stop();
});

test('a snapshot download that does not decode is refused and fetched again', async () => {
  const net = new FakeNet();
  const target = new MetadataCache('test-cluster');
  target.apply([{ type: 'TopicRecord', data: { name: 'kept', topicId: ID_A } } as MetadataRecord], 99n);
  const snapshot = writeSnapshotRecords(target.imageRecords(), { epoch: 3, lastContainedLogTimestamp: 0, now: 0 });
  snapshotLeader(net, snapshot, { chunk: 1 << 20, corruptFirst: true });
  const image = new MetadataCache('test-cluster');
  const { o, applied, lines } = observer(net, { image: () => image, apply: (b) => void b.forEach((x) => { applied.push(x); image.apply(x.records, x.lastOffset); }) });
  await o.catchUp(5_000);
  expect(net.snapshotRequests.length).toBe(2);
  expect(lines.some((l) => /ERROR.*snapshot 100-3 .*is not a valid snapshot/.test(l))).toBe(true);
  expect([...image.topics()].map((t) => t.name).sort()).toEqual(['after', 'kept']);
  await o.stop();
});
