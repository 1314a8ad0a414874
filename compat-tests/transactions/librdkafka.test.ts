/**
 * librdkafka (node-rdkafka 3.6, librdkafka 2.12) transactions against an embedded krill broker:
 * - a transactional Producer ('transactional.id') committing and aborting transactions that span
 *   two partitions; KafkaConsumers with 'isolation.level' read_committed (exactly the committed
 *   records, in order) and read_uncommitted (everything);
 * - an open transaction holds read_committed readers at the last stable offset until it commits;
 * - consume-transform-produce: a group consumer's offsets go into the transaction with
 *   sendOffsetsToTransaction; they count once the transaction commits, and an abort leaves them
 *   where they were (a new member resumes from them);
 * - zombie fencing: a second producer with the same transactional.id aborts the first one's open
 *   transaction and the first one can no longer commit;
 * - two producers' transactions interleaved in one partition whose segments roll every few batches
 *   (markers land in later segments than the data they end): read_committed from every offset;
 * - a transaction left open past its transaction.timeout.ms is aborted by the coordinator;
 * - a clean broker restart with a transaction open: the producer commits it afterwards, and the
 *   reloaded state (LSO, aborted transactions, the id's epoch) is what it was.
 * Each test also scans the partition logs directly: every offset held once, markers (control
 * batches) exactly after each transaction's records, carrying its producer id and epoch.
 * Everything but the restart runs twice: at transaction.version 2 (a fresh cluster's level, Kafka
 * 4.0's default) and 1. librdkafka's EndTxn v1 never gets the per-transaction epoch bump of 2; only
 * the coordinator's own aborts bump once more at 2.
 */
import { startBroker, type RequestRecording, type RunningBroker } from '../../broker';
import { ErrorCode } from '../../protocol/errors';
import { ControlRecordType } from '../../protocol/records/control-record';
import { startTestBroker, type TestBroker } from '../helpers/brokers';
import { connect, listOffset, OffsetSpec, produce, type BrokerConnection } from '../../client/network-client';
import { committedOffsets, markersSettled, layout, offsetsOf, readCommitted, scanLog, stableCommittedOffsets, type ScannedBatch } from '../helpers/transactions';
import { waitFor } from '../replication/helpers';
import { CODES, GroupMember, Reader, TxnProducer, type Delivered, type RdError } from './rdkafka';

let broker: RunningBroker;
let bootstrap: string;
let conn: BrokerConnection;
const producers: TxnProducer[] = [];
const readers: { close(): Promise<void> }[] = [];
/** The requests librdkafka's clients sent (the broker's own WriteTxnMarkers are not theirs). */
let clientRequests: RequestRecording;

describe.each([2, 1])('at transaction.version %i', (tv) => {
  /** Epochs a coordinator abort adds (a fence by InitProducerId, a timeout): the fence's, and at 2 the abort's own bump (Kafka's server TV). */
  const abortBumps = tv >= 2 ? 2 : 1;

  beforeAll(async () => {
    broker = await startBroker({
      logLevel: 'error',
      config: {
        'transaction.state.log.num.partitions': 4,
        'offsets.topic.num.partitions': 4,
        'group.initial.rebalance.delay.ms': 0,
        'auto.create.topics.enable': false,
        // The coordinator looks for timed-out transactions every 100 ms (the timeout test).
        'transaction.abort.timed.out.transaction.cleanup.interval.ms': 100,
      },
    });
    bootstrap = broker.bootstrapServers.join(',');
    clientRequests = broker.control.record({ clientId: /^(rdk-|reader-|ctp-)/ }, { bodies: false });
    conn = await connect(broker.host, broker.port);
    if (tv < 2) {
      // A fresh cluster is at 2; an UpdateFeatures safe downgrade gives the KIP-890 part 1 coordinator.
      const down = await conn.send('UpdateFeatures', 1, { timeoutMs: 10_000, featureUpdates: [{ feature: 'transaction.version', maxVersionLevel: tv, upgradeType: 2 }], validateOnly: false });
      expect(down.errorCode).toBe(ErrorCode.NONE);
    }
    const res = await conn.send('CreateTopics', undefined, {
      topics: ['rdk-txn', 'rdk-open', 'ctp-in', 'ctp-out', 'rdk-fence'].map((name) => ({ name, numPartitions: 2, replicationFactor: 1 })),
      timeoutMs: 5000,
    });
    expect(res.topics.map((t: { errorCode: number }) => t.errorCode)).toEqual([0, 0, 0, 0, 0]);
    const seg = await conn.send('CreateTopics', undefined, {
      topics: [{ name: 'rdk-seg', numPartitions: 1, replicationFactor: 1, configs: [{ name: 'segment.bytes', value: '1024' }] }, { name: 'rdk-timeout', numPartitions: 2, replicationFactor: 1 }],
      timeoutMs: 5000,
    });
    expect(seg.topics.map((t: { errorCode: number }) => t.errorCode)).toEqual([0, 0]);
  }, 30_000);

  afterAll(async () => {
    for (const r of readers.splice(0)) await r.close();
    for (const p of producers.splice(0)) await p.close();
    await conn?.close();
    await broker?.close();
  });

  async function transactionalProducer(id: string, extra: Record<string, unknown> = {}): Promise<TxnProducer> {
    const p = new TxnProducer(id, bootstrap, extra);
    producers.push(p);
    await p.connect();
    await p.init();
    return p;
  }

  async function reader(topic: string, isolation: 'read_committed' | 'read_uncommitted', partitions = 2, from: number[] = []): Promise<Reader> {
    const r = await Reader.open(bootstrap, topic, partitions, isolation, from);
    readers.push(r);
    return r;
  }

  const settled = (topic: string, ends: number[]) => markersSettled(conn, topic, ends);

  /** The partition's log, checked: data records and markers together hold offsets 0..LEO-1, each once. */
  function checkLog(topic: string, p: number): ScannedBatch[] {
    const batches = scanLog(broker, topic, p);
    const offsets = offsetsOf(batches);
    expect(offsets).toEqual(offsets.map((_, i) => BigInt(i)));
    expect(BigInt(offsets.length)).toBe(broker.server.logManager.getLog(topic, p)!.logEndOffset);
    return batches;
  }

  const range = (n: number) => Array.from({ length: n }, (_, i) => i);

  test('commit and abort across 2 partitions: read_committed sees exactly the committed records in order, read_uncommitted all; markers where expected', async () => {
    const topic = 'rdk-txn';
    const producer = await transactionalProducer('rdk-txn-a');
    const plan: ('commit' | 'abort')[] = ['commit', 'abort', 'commit', 'abort', 'commit'];
    const perPartition = 3;
    const delivered: Delivered[][] = [];
    for (const [t, outcome] of plan.entries()) {
      await producer.begin();
      const sends: Promise<Delivered>[] = [];
      for (let i = 0; i < perPartition; i++) for (const p of [0, 1]) sends.push(producer.send(topic, p, `t${t}-${outcome}-p${p}-${i}`, `k${i}`));
      // Every record is in the log before the transaction ends (so the aborted ones really are there).
      delivered.push(await Promise.all(sends));
      if (outcome === 'commit') await producer.commit();
      else await producer.abort();
    }
    // Each transaction: 3 records + 1 marker per partition.
    const end = plan.length * (perPartition + 1);
    await settled(topic, [end, end]);

    const valuesOf = (p: number, which: 'commit' | 'abort' | 'all') =>
      plan.flatMap((outcome, t) => (which === 'all' || which === outcome ? range(perPartition).map((i) => `t${t}-${outcome}-p${p}-${i}`) : []));

    // The producer was handed offsets that skip one per marker.
    for (const [t, ds] of delivered.entries()) {
      for (const p of [0, 1]) {
        expect(ds.filter((d) => d.partition === p).map((d) => d.offset)).toEqual(range(perPartition).map((i) => t * (perPartition + 1) + i));
      }
    }

    const committed = await reader(topic, 'read_committed');
    const uncommitted = await reader(topic, 'read_uncommitted');
    await committed.untilEof([end, end]);
    await uncommitted.untilEof([end, end]);
    for (const p of [0, 1]) {
      expect(committed.valuesOf(p)).toEqual(valuesOf(p, 'commit'));
      expect(committed.valuesOf(p).some((v) => v.includes('abort'))).toBe(false);
      expect(uncommitted.valuesOf(p)).toEqual(valuesOf(p, 'all'));
      // read_committed offsets are the committed records' own (the aborted ones and markers are gaps).
      expect(committed.messages.filter((m) => m.partition === p).map((m) => m.offset)).toEqual(
        plan.flatMap((outcome, t) => (outcome === 'commit' ? range(perPartition).map((i) => t * (perPartition + 1) + i) : [])),
      );
    }

    for (const p of [0, 1]) {
      const batches = checkLog(topic, p);
      expect(layout(batches)).toEqual(plan.flatMap((outcome, t) => [...range(perPartition).map((i) => `t${t}-${outcome}-p${p}-${i}`), outcome === 'commit' ? '<COMMIT>' : '<ABORT>']));
      const data = batches.filter((b) => !b.isControl);
      const markers = batches.filter((b) => b.isControl);
      expect(data.every((b) => b.isTransactional)).toBe(true);
      expect(markers.every((b) => b.isTransactional && b.baseOffset === b.lastOffset)).toBe(true);
      // One producer id and epoch for the whole session (librdkafka does not bump per transaction).
      const pids = new Set(batches.map((b) => `${b.producerId}/${b.producerEpoch}`));
      expect(pids.size).toBe(1);
      expect(data[0].producerId).toBeGreaterThanOrEqual(0n);
      expect(markers.map((b) => b.baseOffset)).toEqual(plan.map((_, t) => BigInt(t * (perPartition + 1) + perPartition)));
      expect(markers.map((b) => b.control)).toEqual(plan.map((o) => (o === 'commit' ? ControlRecordType.COMMIT : ControlRecordType.ABORT)));
    }
  }, 45_000);

  test('an open transaction holds read_committed at the last stable offset; committing releases it', async () => {
    const topic = 'rdk-open';
    const producer = await transactionalProducer('rdk-txn-open');
    await producer.begin();
    await Promise.all([0, 1].flatMap((p) => [producer.send(topic, p, `first-p${p}-0`), producer.send(topic, p, `first-p${p}-1`)]));
    await producer.commit();
    await settled(topic, [3, 3]);

    await producer.begin();
    await Promise.all([0, 1].flatMap((p) => [producer.send(topic, p, `open-p${p}-0`), producer.send(topic, p, `open-p${p}-1`)]));
    // Open: HWM 5, LSO 3 (the first offset of the open transaction).
    for (const p of [0, 1]) {
      expect((await listOffset(conn, topic, p, OffsetSpec.LATEST, { isolationLevel: 0 })).offset).toBe(5n);
      expect((await listOffset(conn, topic, p, OffsetSpec.LATEST, { isolationLevel: 1 })).offset).toBe(3n);
    }
    const committed = await reader(topic, 'read_committed');
    const uncommitted = await reader(topic, 'read_uncommitted');
    // librdkafka's end of partition is the LSO under read_committed, the HWM otherwise.
    await committed.untilEof([3, 3]);
    await uncommitted.untilEof([5, 5]);
    for (const p of [0, 1]) {
      expect(committed.valuesOf(p)).toEqual([`first-p${p}-0`, `first-p${p}-1`]);
      expect(uncommitted.valuesOf(p)).toEqual([`first-p${p}-0`, `first-p${p}-1`, `open-p${p}-0`, `open-p${p}-1`]);
    }
    expect(committed.eof.get(0)).toBe(3);
    expect(committed.eof.get(1)).toBe(3);

    await producer.commit();
    // The waiting read_committed reader gets the records once the markers land.
    await committed.untilEof([6, 6]);
    for (const p of [0, 1]) {
      expect(committed.valuesOf(p)).toEqual([`first-p${p}-0`, `first-p${p}-1`, `open-p${p}-0`, `open-p${p}-1`]);
      expect(layout(checkLog(topic, p))).toEqual([`first-p${p}-0`, `first-p${p}-1`, '<COMMIT>', `open-p${p}-0`, `open-p${p}-1`, '<COMMIT>']);
    }
  }, 45_000);

  test('consume-transform-produce: sendOffsetsToTransaction offsets count on commit, not on abort', async () => {
    const group = 'ctp-group';
    const perPartition = 10;
    for (const p of [0, 1]) {
      await produce(conn, 'ctp-in', p, range(perPartition).map((i) => ({ key: null, value: Buffer.from(`in-p${p}-${i}`), timestamp: 1_700_000_000_000n + BigInt(i) })));
    }
    const producer = await transactionalProducer('rdk-ctp');
    const expectStable = async (want: bigint[]) => expect(await stableCommittedOffsets(conn, group, 'ctp-in', [0, 1])).toEqual(want);

    /** One transaction: transform the messages at [from, to) of each partition, commit `to` as the group's offsets. */
    const round = async (member: GroupMember, from: number, to: number, outcome: 'commit' | 'abort') => {
      await producer.begin();
      const sends: Promise<Delivered>[] = [];
      for (const p of [0, 1]) {
        const msgs = member.messages.filter((m) => m.partition === p && m.offset >= from && m.offset < to);
        expect(msgs.map((m) => m.offset)).toEqual(range(to - from).map((i) => from + i));
        for (const m of msgs) sends.push(producer.send('ctp-out', p, `out:${m.value}`));
      }
      await Promise.all(sends);
      await producer.sendOffsets(
        [0, 1].map((partition) => ({ topic: 'ctp-in', partition, offset: to })),
        member.consumer,
      );
      // KIP-447: while the transaction is open the new offsets are pending; require_stable says so.
      const pending = await committedOffsets(conn, group, 'ctp-in', [0, 1], true);
      expect(pending.map((x) => x.errorCode)).toEqual([ErrorCode.UNSTABLE_OFFSET_COMMIT, ErrorCode.UNSTABLE_OFFSET_COMMIT]);
      if (outcome === 'commit') await producer.commit();
      else await producer.abort();
    };

    const first = await GroupMember.join(bootstrap, group, 'ctp-in', 'ctp-1');
    readers.push(first);
    await waitFor('the first member owns both partitions and consumed every input', () => first.assigned.size === 2 && first.messages.length >= 2 * perPartition);
    // Nothing committed yet.
    expect((await committedOffsets(conn, group, 'ctp-in', [0, 1], true)).map((x) => x.offset)).toEqual([-1n, -1n]);

    await round(first, 0, 5, 'commit');
    await expectStable([5n, 5n]);
    expect((await first.committed('ctp-in', [0, 1])).map((x) => x.offset)).toEqual([5, 5]);

    await round(first, 5, 10, 'abort');
    await expectStable([5n, 5n]);
    expect((await first.committed('ctp-in', [0, 1])).map((x) => x.offset)).toEqual([5, 5]);
    await first.close();

    // A new member resumes from the committed offsets: exactly the records of the aborted round again.
    const second = await GroupMember.join(bootstrap, group, 'ctp-in', 'ctp-2');
    readers.push(second);
    await waitFor('the second member owns both partitions and consumed the rest', () => second.assigned.size === 2 && second.messages.length >= 10);
    for (const p of [0, 1]) expect(second.messages.filter((m) => m.partition === p).map((m) => m.offset)).toEqual([5, 6, 7, 8, 9]);
    await round(second, 5, 10, 'commit');
    await expectStable([10n, 10n]);
    expect((await second.committed('ctp-in', [0, 1])).map((x) => x.offset)).toEqual([10, 10]);
    await second.close();

    // Output: each input transformed exactly once under read_committed; the aborted copies are in the log.
    const end = 5 + 1 + 5 + 1 + 5 + 1;
    await settled('ctp-out', [end, end]);
    const out = await reader('ctp-out', 'read_committed');
    await out.untilEof([end, end]);
    for (const p of [0, 1]) {
      const outputs = (a: number, b: number) => range(b - a).map((i) => `out:in-p${p}-${a + i}`);
      expect(out.valuesOf(p)).toEqual(outputs(0, 10));
      expect(layout(checkLog('ctp-out', p))).toEqual([...outputs(0, 5), '<COMMIT>', ...outputs(5, 10), '<ABORT>', ...outputs(5, 10), '<COMMIT>']);
    }

    // The group's offsets partition of __consumer_offsets got the same three markers from this producer.
    const pid = scanLog(broker, 'ctp-out', 0)[0].producerId;
    const offsetsMarkers: ControlRecordType[][] = [];
    for (let p = 0; p < 4; p++) {
      const batches = scanLog(broker, '__consumer_offsets', p);
      const mine = batches.filter((b) => b.isControl && b.producerId === pid);
      if (mine.length) offsetsMarkers.push(mine.map((b) => b.control!));
      // Each marker follows the transactional offset commit it ends (between it and the previous marker).
      mine.forEach((m, i) => {
        const after = i === 0 ? -1n : mine[i - 1].baseOffset;
        const commits = batches.filter((b) => !b.isControl && b.producerId === pid && b.baseOffset > after && b.lastOffset < m.baseOffset);
        expect(commits.length).toBe(1);
        expect(commits[0].isTransactional).toBe(true);
      });
      const offsets = offsetsOf(batches);
      expect(new Set(offsets.map(String)).size).toBe(offsets.length);
    }
    expect(offsetsMarkers).toEqual([[ControlRecordType.COMMIT, ControlRecordType.ABORT, ControlRecordType.COMMIT]]);
  }, 55_000);

  test('zombie fencing: a second producer with the same transactional.id aborts the open transaction; the first cannot commit', async () => {
    const topic = 'rdk-fence';
    const zombie = await transactionalProducer('rdk-fenced-id');
    await zombie.begin();
    await Promise.all([0, 1].map((p) => zombie.send(topic, p, `zombie-p${p}`)));

    const successor = await transactionalProducer('rdk-fenced-id');
    await successor.begin();
    await Promise.all([0, 1].map((p) => successor.send(topic, p, `successor-p${p}`)));
    await successor.commit();

    const err = await zombie.commit().then(
      () => undefined,
      (e: RdError) => e,
    );
    expect(err).toBeDefined();
    // librdkafka raises the fencing as its fatal ERR__FENCED (from PRODUCER_FENCED / INVALID_PRODUCER_EPOCH).
    expect([CODES.ERR__FENCED, CODES.ERR_PRODUCER_FENCED, CODES.ERR_INVALID_PRODUCER_EPOCH]).toContain(err!.code);
    expect(err!.isFatal).toBe(true);

    await settled(topic, [4, 4]);
    const committed = await reader(topic, 'read_committed');
    await committed.untilEof([4, 4]);
    for (const p of [0, 1]) {
      expect(committed.valuesOf(p)).toEqual([`successor-p${p}`]);
      const batches = checkLog(topic, p);
      expect(layout(batches)).toEqual([`zombie-p${p}`, '<ABORT>', `successor-p${p}`, '<COMMIT>']);
      const [zData, zMarker, sData, sMarker] = batches;
      // Same producer id throughout; the coordinator aborted the zombie's transaction under a bumped
      // epoch, and the successor got the epoch after that (Kafka's fence-then-bump).
      expect(new Set(batches.map((b) => b.producerId)).size).toBe(1);
      expect(zMarker.producerEpoch).toBe(zData.producerEpoch + abortBumps);
      expect(sData.producerEpoch).toBe(zData.producerEpoch + abortBumps + 1);
      expect(sMarker.producerEpoch).toBe(sData.producerEpoch);
    }
  }, 45_000);

  test('interleaved transactions of two producers across segment rolls: read_committed from every offset', async () => {
    const topic = 'rdk-seg';
    const a = await transactionalProducer('rdk-seg-a');
    const b = await transactionalProducer('rdk-seg-b');
    const pad = 'x'.repeat(200);
    // Each send is awaited, so each record is its own batch (~270 bytes): a 1 KiB segment holds 3.
    const send = (p: TxnProducer, v: string) => p.send(topic, 0, `${v}|${pad}`);
    await a.begin();
    await b.begin();
    await send(a, 'a0-0');
    await send(b, 'b0-0');
    await send(a, 'a0-1');
    await send(b, 'b0-1');
    await b.abort();
    await send(a, 'a0-2');
    await b.begin();
    await send(b, 'b1-0');
    await a.commit();
    await a.begin();
    await send(a, 'a1-0');
    await send(b, 'b1-1');
    await send(a, 'a1-1');
    await a.abort();
    await send(b, 'b1-2');
    await b.commit();
    await settled(topic, [14]);

    const expected = ['a0-0', 'b0-0', 'a0-1', 'b0-1', '<ABORT>', 'a0-2', 'b1-0', '<COMMIT>', 'a1-0', 'b1-1', 'a1-1', '<ABORT>', 'b1-2', '<COMMIT>'];
    const batches = checkLog(topic, 0);
    expect(layout(batches).map((v) => v.split('|')[0])).toEqual(expected);
    // The segments did roll: data and the markers that end it sit in different segments.
    const segments = broker.server.logManager.getLog(topic, 0)!.logSegments().length;
    expect(segments).toBeGreaterThanOrEqual(4);

    const committedAt = [0, 2, 5, 6, 9, 12]; // a0-0 a0-1 a0-2 b1-0 b1-1 b1-2
    const committedFrom = (k: number) => committedAt.filter((o) => o >= k).map((o) => expected[o]);
    // A Java-style read_committed reader over krill's Fetch responses, starting at each offset, and
    // librdkafka from the start and from inside each aborted transaction. Each Fetch reads one
    // segment, so the aborted transactions it lists must include those whose ABORT marker sits in a
    // later segment (Kafka walks the following segments' .txnindex until an entry's LSO passes the
    // fetched range).
    const starts = range(15);
    const krillReads: string[][] = [];
    for (const k of starts) krillReads.push((await readCommitted(conn, topic, 0, BigInt(k))).records.map((r) => r.value!.split('|')[0]));
    const rdkStarts = [0, 1, 3, 8, 10];
    const rdkReads: string[][] = [];
    for (const k of rdkStarts) {
      const r = await reader(topic, 'read_committed', 1, [k]);
      await r.untilEof([14]);
      rdkReads.push(r.valuesOf(0).map((v) => v.split('|')[0]));
      await r.close();
    }
    expect(krillReads).toEqual(starts.map(committedFrom));
    expect(rdkReads).toEqual(rdkStarts.map(committedFrom));
  }, 45_000);

  test('a transaction left open past transaction.timeout.ms is aborted by the coordinator under a bumped epoch', async () => {
    const topic = 'rdk-timeout';
    const stale = await transactionalProducer('rdk-timeout-id', { 'transaction.timeout.ms': 1000 });
    await stale.begin();
    await Promise.all([0, 1].map((p) => stale.send(topic, p, `stale-p${p}`)));
    // Nobody ends it: the coordinator does, and the ABORT markers release the LSO.
    await settled(topic, [2, 2]);
    for (const p of [0, 1]) {
      const [data, marker] = checkLog(topic, p);
      expect(layout([data, marker])).toEqual([`stale-p${p}`, '<ABORT>']);
      expect(marker.producerId).toBe(data.producerId);
      expect(marker.producerEpoch).toBe(data.producerEpoch + abortBumps);
    }
    // The producer that timed out can no longer commit.
    await expect(stale.commit()).rejects.toBeDefined();

    const next = await transactionalProducer('rdk-timeout-id');
    await next.begin();
    await Promise.all([0, 1].map((p) => next.send(topic, p, `next-p${p}`)));
    await next.commit();
    await settled(topic, [4, 4]);
    const committed = await reader(topic, 'read_committed');
    await committed.untilEof([4, 4]);
    for (const p of [0, 1]) {
      expect(committed.valuesOf(p)).toEqual([`next-p${p}`]);
      const batches = checkLog(topic, p);
      expect(layout(batches)).toEqual([`stale-p${p}`, '<ABORT>', `next-p${p}`, '<COMMIT>']);
      expect(batches[2].producerEpoch).toBe(batches[0].producerEpoch + abortBumps + 1);
    }
  }, 45_000);

  test('librdkafka 2.12 used its own (older) versions of the transaction APIs', () => {
    // Relies on the tests above (jest runs a file's tests in order).
    const seen = (key: number) => [...new Set(clientRequests.requests.filter((r) => r.apiKey === key).map((r) => r.apiVersion))].sort((a, b) => a - b);
    expect({
      Produce: seen(0),
      Fetch: seen(1),
      OffsetFetch: seen(9),
      InitProducerId: seen(22),
      AddPartitionsToTxn: seen(24),
      AddOffsetsToTxn: seen(25),
      EndTxn: seen(26),
      TxnOffsetCommit: seen(28),
    }).toEqual({ Produce: [10], Fetch: [16], OffsetFetch: [9], InitProducerId: [4], AddPartitionsToTxn: [0], AddOffsetsToTxn: [0], EndTxn: [1], TxnOffsetCommit: [3] });
  });
});

describe('across a clean broker restart', () => {
  let tb: TestBroker;
  let c: BrokerConnection;
  const topic = 'rdk-restart';
  /** Closed before this broker goes away. */
  const clients: { close(): Promise<void> }[] = [];

  beforeAll(async () => {
    tb = await startTestBroker('embedded', {
      config: { 'transaction.state.log.num.partitions': 4, 'offsets.topic.num.partitions': 4, 'group.initial.rebalance.delay.ms': 0, 'auto.create.topics.enable': false },
    });
    c = await connect(tb.host, tb.port);
    const res = await c.send('CreateTopics', undefined, { topics: [{ name: topic, numPartitions: 2, replicationFactor: 1 }], timeoutMs: 5000 });
    expect(res.topics[0].errorCode).toBe(0);
  }, 30_000);

  afterAll(async () => {
    for (const x of clients) await x.close();
    await c?.close();
    await tb?.close();
  });

  const offsets = async (p: number) => [
    (await listOffset(c, topic, p, OffsetSpec.LATEST, { isolationLevel: 0 })).offset,
    (await listOffset(c, topic, p, OffsetSpec.LATEST, { isolationLevel: 1 })).offset,
  ];

  test('a transaction open at the restart commits afterwards; read_committed and the epochs are as before', async () => {
    const opts = { 'reconnect.backoff.ms': 50, 'reconnect.backoff.max.ms': 500 };
    const p1 = new TxnProducer('rdk-restart-id', tb.bootstrap, opts);
    clients.push(p1);
    await p1.connect();
    await p1.init();
    for (const [t, outcome] of ['commit', 'abort'].entries()) {
      await p1.begin();
      await Promise.all([0, 1].map((p) => p1.send(topic, p, `r${t}-${outcome}-p${p}`)));
      if (outcome === 'commit') await p1.commit();
      else await p1.abort();
    }
    await p1.begin();
    await Promise.all([0, 1].map((p) => p1.send(topic, p, `r2-open-p${p}`)));
    await waitFor('both markers written', async () => (await offsets(0))[1] === 4n && (await offsets(1))[1] === 4n);

    await c.close();
    await tb.restart();
    c = await connect(tb.host, tb.port);
    // The open transaction was reloaded from the log: the LSO still stops at its first offset.
    for (const p of [0, 1]) expect(await offsets(p)).toEqual([5n, 4n]);
    for (const p of [0, 1]) {
      const read = await readCommitted(c, topic, p);
      expect(read.records.map((r) => r.value)).toEqual([`r0-commit-p${p}`]);
      expect(read.aborted.map((a) => a.firstOffset)).toEqual([2n]);
    }

    // The producer reconnects and commits the transaction it had open.
    await p1.commit();
    await waitFor('the commit markers after the restart', async () => (await offsets(0))[1] === 6n && (await offsets(1))[1] === 6n);
    for (const p of [0, 1]) {
      expect((await readCommitted(c, topic, p)).records.map((r) => r.value)).toEqual([`r0-commit-p${p}`, `r2-open-p${p}`]);
      expect(layout(scanLog(tb.embedded!, topic, p))).toEqual([`r0-commit-p${p}`, '<COMMIT>', `r1-abort-p${p}`, '<ABORT>', `r2-open-p${p}`, '<COMMIT>']);
    }
    const epochBefore = scanLog(tb.embedded!, topic, 0)[0].producerEpoch;
    await p1.close();

    // The coordinator reloaded the id from __transaction_state: a new session gets the next epoch.
    const p2 = new TxnProducer('rdk-restart-id', tb.bootstrap, opts);
    clients.push(p2);
    await p2.connect();
    await p2.init();
    await p2.begin();
    await Promise.all([0, 1].map((p) => p2.send(topic, p, `r3-commit-p${p}`)));
    await p2.commit();
    await waitFor('the last markers', async () => (await offsets(0))[1] === 8n && (await offsets(1))[1] === 8n);
    const batches = scanLog(tb.embedded!, topic, 0);
    expect(new Set(batches.map((b) => b.producerId)).size).toBe(1);
    expect(batches[6].producerEpoch).toBe(epochBefore + 1);
    const r = await Reader.open(tb.bootstrap, topic, 2, 'read_committed');
    clients.push(r);
    await r.untilEof([8, 8]);
    for (const p of [0, 1]) expect(r.valuesOf(p)).toEqual([`r0-commit-p${p}`, `r2-open-p${p}`, `r3-commit-p${p}`]);
  }, 45_000);
});
