/**
 * Producer state of one partition (Kafka's ProducerStateManager + ProducerAppendInfo): per producer
 * id the current epoch and the metadata of its last 5 data batches (first/last sequence, first/last
 * offset, max timestamp), and the partition's open transactions (see below).
 *
 * Rules on a leader append from a client (Kafka 4 semantics, checked before anything is written):
 * - a batch whose epoch and sequence range equal one of the retained 5 batches is a DUPLICATE: the
 *   log answers with that batch's original offsets and appends nothing (`findDuplicate`);
 * - an epoch below the producer's current one -> INVALID_PRODUCER_EPOCH (Kafka >= 2.7 answers a
 *   Produce with INVALID_PRODUCER_EPOCH, not PRODUCER_FENCED; PRODUCER_FENCED belongs to the
 *   transaction coordinator's InitProducerId/EndTxn);
 * - a new (higher) epoch of a known producer must start at sequence 0, else
 *   OUT_OF_ORDER_SEQUENCE_NUMBER;
 * - the same epoch must continue at last sequence + 1 (wrapping at 2^31-1 to 0), else
 *   OUT_OF_ORDER_SEQUENCE_NUMBER;
 * - a producer id with no state (never seen, expired, or its records removed by retention) is
 *   accepted at any sequence: since KIP-360 (Kafka 2.5) the broker no longer answers a Produce
 *   with UNKNOWN_PRODUCER_ID, the client bumps its epoch/resets sequences itself. krill never
 *   returns UNKNOWN_PRODUCER_ID either.
 * Coordinator writes (transactional offset commits to __consumer_offsets) get the epoch check
 * only. Replicated and recovered batches update the state without checks.
 *
 * Transactions (partition side, Kafka's ongoingTxns / unreplicatedTxns): a transactional data batch
 * of a producer with no open transaction opens one at its first offset (`startedTxns` of the
 * update); a control batch (COMMIT/ABORT marker) ends it (`completedTxns`). Applying an update
 * (`apply`) only OPENS transactions; the log closes each completed one with `completeTxn` after
 * the marker's .txnindex entry (ABORT) was written, so a failed index append leaves the
 * transaction open and the first unstable offset (hence the LSO) before the marker (KAFKA-7866).
 * A completed transaction stays "unreplicated" (still bounding the LSO) until the high watermark
 * passes its marker (`onHighWatermarkUpdated`). A client writing a non-transactional batch while
 * its transaction is open gets INVALID_TXN_STATE; a marker with an older producer epoch
 * INVALID_PRODUCER_EPOCH, one with an older coordinator epoch TRANSACTION_COORDINATOR_FENCED.
 *
 * Transaction verification (KIP-890 part 1, Kafka's VerificationStateEntry): before a transactional
 * batch may start a transaction here, the partition leader asks the transaction coordinator whether
 * this partition is part of the producer's transaction. `maybeCreateVerificationStateEntry` hands
 * out the guard that the append must present; the entry is cleared by the producer's next
 * transactional write or marker (`apply`), so a verification that raced with the transaction's end
 * (a marker written in between) no longer matches and the late batch cannot start a transaction
 * the coordinator has forgotten (a hanging transaction). Unused entries expire with
 * producer.id.expiration.ms.
 *
 * Snapshots: `<offset>.snapshot` in the log directory, Kafka's format (int16 version 1, uint32
 * CRC32C of everything after the CRC, then the ProducerSnapshot entries): written at segment roll
 * (offset = new segment base) and at clean shutdown (offset = LEO). On load the newest snapshot at
 * or below the LEO is read and the log after it is replayed; snapshots above the LEO are deleted.
 * A snapshot keeps only each producer's last batch (as Kafka's does).
 *
 * Expiry: producers whose last batch timestamp is older than producer.id.expiration.ms are dropped
 * by `removeExpiredProducers` (the log manager runs it every
 * producer.id.expiration.check.interval.ms).
 */
import * as path from 'node:path';
import { ErrorCode, KafkaError } from '../protocol/errors';
import { Reader } from '../protocol/primitives/reader';
import { Writer } from '../protocol/primitives/writer';
import { crc32c } from '../protocol/records/crc32c';
import { readProducerSnapshot, writeProducerSnapshot } from '../protocol/generated/records/storage/producer-snapshot';
import { type StorageFs, writeFully } from './fs';

export const NUM_BATCHES_TO_RETAIN = 5;
export const SNAPSHOT_SUFFIX = '.snapshot';
const SNAPSHOT_VERSION = 1;
const NO_EPOCH = -1;
const INT32_MAX = 0x7fffffff;

export interface BatchMetadata {
  firstSeq: number;
  lastSeq: number;
  firstOffset: bigint;
  lastOffset: bigint;
  timestamp: bigint;
}

export interface ProducerStateEntry {
  producerId: bigint;
  producerEpoch: number;
  /** Oldest first, at most NUM_BATCHES_TO_RETAIN. */
  batches: BatchMetadata[];
  /** Timestamp of the last batch (expiry). */
  lastTimestamp: bigint;
  coordinatorEpoch: number;
  currentTxnFirstOffset: bigint;
}

/** An end-transaction marker (the one record of a control batch). */
export interface TxnMarker {
  isAbort: boolean;
  coordinatorEpoch: number;
}

/** A transaction ended by a marker at `lastOffset` (Kafka's CompletedTxn). */
export interface CompletedTxn {
  producerId: bigint;
  firstOffset: bigint;
  lastOffset: bigint;
  isAborted: boolean;
}

/** An open transaction: its producer and first offset (Kafka's TxnMetadata). */
export interface OngoingTxn {
  producerId: bigint;
  firstOffset: bigint;
}

/** One producer batch about to be appended (offsets already computed from the LEO). */
export interface ProducerBatch {
  producerId: bigint;
  producerEpoch: number;
  baseSequence: number;
  lastSequence: number;
  firstOffset: bigint;
  lastOffset: bigint;
  maxTimestamp: bigint;
  /** Transactional data (or marker) batch. */
  isTransactional?: boolean;
  /** Set for a control batch carrying an end-transaction marker (firstOffset = lastOffset = its offset). */
  marker?: TxnMarker;
}

export type ProducerAppendOrigin = 'client' | 'coordinator' | 'replication' | 'recovery';

export function snapshotFileName(offset: bigint): string {
  return `${offset.toString().padStart(20, '0')}${SNAPSHOT_SUFFIX}`;
}

export function offsetFromSnapshotFile(name: string): bigint | undefined {
  if (!name.endsWith(SNAPSHOT_SUFFIX)) return undefined;
  const base = name.slice(0, -SNAPSHOT_SUFFIX.length);
  return /^\d+$/.test(base) ? BigInt(base) : undefined;
}

function inSequence(lastSeq: number, nextSeq: number): boolean {
  return nextSeq === lastSeq + 1 || (nextSeq === 0 && lastSeq === INT32_MAX);
}

/** `sequence - n`, wrapping below 0 to 2^31-1 as producer sequences do (Kafka's decrementSequence). */
function decrementSequence(sequence: number, n: number): number {
  const v = sequence - n;
  return v < 0 ? v + INT32_MAX + 1 : v;
}

function lastSeqOf(e: ProducerStateEntry): number {
  return e.batches.length === 0 ? -1 : e.batches[e.batches.length - 1].lastSeq;
}

/** A copy to update (every field of ProducerStateEntry, written out: cheaper than a spread per append). */
function cloneEntry(e: ProducerStateEntry): ProducerStateEntry {
  return {
    producerId: e.producerId,
    producerEpoch: e.producerEpoch,
    batches: e.batches.slice(),
    lastTimestamp: e.lastTimestamp,
    coordinatorEpoch: e.coordinatorEpoch,
    currentTxnFirstOffset: e.currentTxnFirstOffset,
  };
}

/** Validated per-producer updates for one append; apply them after the write succeeded. */
export class ProducerAppendUpdate {
  constructor(
    readonly entries: Map<bigint, ProducerStateEntry>,
    /** Transactions this append opens (first transactional batch of a producer). */
    readonly startedTxns: OngoingTxn[] = [],
    /** Transactions this append's markers end, in offset order. */
    readonly completedTxns: CompletedTxn[] = [],
    /** Producers that wrote a transactional batch or a marker (their verification state ends). */
    readonly transactionalProducers: ReadonlySet<bigint> = new Set(),
  ) {}
}

/** The token of one transaction verification (Kafka's VerificationGuard): compared by identity. */
export class VerificationGuard {
  private static nextId = 1;
  readonly id = VerificationGuard.nextId++;
}

export interface VerificationStateEntry {
  timestamp: number;
  guard: VerificationGuard;
  /** The lowest sequence that asked for verification, and its epoch. */
  lowestSequence: number;
  epoch: number;
}

function cmpBig(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export class ProducerStateManager {
  private readonly producers = new Map<bigint, ProducerStateEntry>();
  /** The offset up to which (exclusive) the state reflects the log. */
  private _mapEndOffset = 0n;
  /** Open transactions by first offset. */
  private readonly ongoingTxns = new Map<bigint, OngoingTxn>();
  /** Completed transactions whose marker is not yet below the high watermark, by first offset. */
  private readonly unreplicatedTxns = new Map<bigint, CompletedTxn>();
  /** Producers being verified with the transaction coordinator (see the class comment). */
  private readonly verificationStates = new Map<bigint, VerificationStateEntry>();

  constructor(
    private readonly fs: StorageFs,
    private dirFn: () => string,
    readonly producerIdExpirationMs: number,
    private readonly tpName = '',
  ) {}

  get mapEndOffset(): bigint {
    return this._mapEndOffset;
  }

  get size(): number {
    return this.producers.size;
  }

  entry(producerId: bigint): ProducerStateEntry | undefined {
    return this.producers.get(producerId);
  }

  activeProducers(): ProducerStateEntry[] {
    return [...this.producers.values()];
  }

  /** The retained batch with this epoch and sequence range, if any (Kafka's findDuplicateBatch). */
  findDuplicate(b: ProducerBatch): BatchMetadata | undefined {
    const e = this.producers.get(b.producerId);
    if (!e || e.producerEpoch !== b.producerEpoch) return undefined;
    return e.batches.find((m) => m.firstSeq === b.baseSequence && m.lastSeq === b.lastSequence);
  }

  /**
   * Checks every batch (in order, each against the state the earlier ones leave) and returns the
   * updated entries; throws KafkaError (nothing changed) on an epoch or sequence violation.
   */
  prepareUpdate(batches: readonly ProducerBatch[], origin: ProducerAppendOrigin): ProducerAppendUpdate {
    const updated = new Map<bigint, ProducerStateEntry>();
    const started: OngoingTxn[] = [];
    const completed: CompletedTxn[] = [];
    const transactional = new Set<bigint>();
    for (const b of batches) {
      if (b.producerId < 0n) continue;
      if (b.isTransactional || b.marker) transactional.add(b.producerId);
      let e = updated.get(b.producerId);
      if (!e) {
        const cur = this.producers.get(b.producerId);
        e = cur
          ? cloneEntry(cur)
          : { producerId: b.producerId, producerEpoch: NO_EPOCH, batches: [], lastTimestamp: -1n, coordinatorEpoch: -1, currentTxnFirstOffset: -1n };
        updated.set(b.producerId, e);
      }
      if (b.marker) {
        completed.push(this.applyMarker(e, b, b.marker, origin));
        continue;
      }
      if (origin === 'client') this.check(e, b);
      else if (origin === 'coordinator') this.checkEpoch(e, b);
      if (b.isTransactional) {
        if (e.currentTxnFirstOffset < 0n) {
          e.currentTxnFirstOffset = b.firstOffset;
          started.push({ producerId: b.producerId, firstOffset: b.firstOffset });
        }
      } else if (e.currentTxnFirstOffset >= 0n && origin === 'client') {
        throw new KafkaError(
          ErrorCode.INVALID_TXN_STATE,
          `expected a transactional write from producer ${b.producerId} at offset ${b.firstOffset} in ${this.tpName}`,
        );
      }
      if (b.producerEpoch !== e.producerEpoch) {
        e.producerEpoch = b.producerEpoch;
        e.batches = [];
      }
      e.batches.push({ firstSeq: b.baseSequence, lastSeq: b.lastSequence, firstOffset: b.firstOffset, lastOffset: b.lastOffset, timestamp: b.maxTimestamp });
      if (e.batches.length > NUM_BATCHES_TO_RETAIN) e.batches.shift();
      e.lastTimestamp = b.maxTimestamp;
    }
    return new ProducerAppendUpdate(updated, started, completed, transactional);
  }

  /** Kafka's appendEndTxnMarker: checks (not for replication/recovery), then the entry's transaction ends. */
  private applyMarker(e: ProducerStateEntry, b: ProducerBatch, m: TxnMarker, origin: ProducerAppendOrigin): CompletedTxn {
    if (origin !== 'replication' && origin !== 'recovery') {
      if (b.producerEpoch < e.producerEpoch) {
        throw new KafkaError(
          ErrorCode.INVALID_PRODUCER_EPOCH,
          `transaction marker of producer ${b.producerId} at offset ${b.firstOffset} in ${this.tpName} has epoch ${b.producerEpoch}, which is smaller than the last seen epoch ${e.producerEpoch}`,
        );
      }
      if (m.coordinatorEpoch < e.coordinatorEpoch) {
        throw new KafkaError(
          ErrorCode.TRANSACTION_COORDINATOR_FENCED,
          `transaction marker of producer ${b.producerId} in ${this.tpName} has coordinator epoch ${m.coordinatorEpoch}, which is smaller than the last seen ${e.coordinatorEpoch}`,
        );
      }
    }
    const firstOffset = e.currentTxnFirstOffset >= 0n ? e.currentTxnFirstOffset : b.firstOffset;
    if (b.producerEpoch !== e.producerEpoch) {
      e.producerEpoch = b.producerEpoch;
      e.batches = [];
    }
    e.coordinatorEpoch = m.coordinatorEpoch;
    e.currentTxnFirstOffset = -1n;
    e.lastTimestamp = b.maxTimestamp;
    return { producerId: b.producerId, firstOffset, lastOffset: b.firstOffset, isAborted: m.isAbort };
  }

  /** Kafka checks a data batch's epoch for coordinator writes too (TxnOffsetCommit), not its sequence. */
  private checkEpoch(e: ProducerStateEntry, b: ProducerBatch): void {
    if (b.producerEpoch < e.producerEpoch) {
      throw new KafkaError(
        ErrorCode.INVALID_PRODUCER_EPOCH,
        `epoch of producer ${b.producerId} at offset ${b.firstOffset} in ${this.tpName} is ${b.producerEpoch}, which is smaller than the last seen epoch ${e.producerEpoch}`,
      );
    }
  }

  private check(e: ProducerStateEntry, b: ProducerBatch): void {
    this.checkEpoch(e, b);
    if (b.producerEpoch !== e.producerEpoch) {
      if (b.baseSequence !== 0 && e.producerEpoch !== NO_EPOCH) {
        throw new KafkaError(
          ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
          `invalid sequence number for new epoch of producer ${b.producerId} at offset ${b.firstOffset} in ${this.tpName}: ${b.producerEpoch} (request epoch), ${b.baseSequence} (seq. number), ${e.producerEpoch} (current producer epoch)`,
        );
      }
      return;
    }
    // A known epoch with no retained batch (e.g. after truncation) accepts any sequence.
    const last = lastSeqOf(e);
    if (last >= 0 && !inSequence(last, b.baseSequence)) {
      throw new KafkaError(
        ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
        `out of order sequence number for producer ${b.producerId} at offset ${b.firstOffset} in ${this.tpName}: ${b.baseSequence} (incoming seq. number), ${last} (current end sequence number)`,
      );
    }
  }

  /** Makes a prepared update the state, after its batches were written; the state now covers up to `endOffset` (exclusive). */
  /**
   * Opens the update's transactions; completed ones stay open until `completeTxn`. Without
   * `endOffset` the end offset does not move (the log moves it once the txn index is written).
   */
  apply(update: ProducerAppendUpdate, endOffset?: bigint): void {
    for (const [pid, e] of update.entries) this.producers.set(pid, e);
    // Written data starts (or continues) the transaction, a marker ends it: either way the
    // verification that preceded it is used up.
    for (const pid of update.transactionalProducers) this.verificationStates.delete(pid);
    for (const t of update.startedTxns) this.ongoingTxns.set(t.firstOffset, t);
    if (endOffset !== undefined && endOffset > this._mapEndOffset) this._mapEndOffset = endOffset;
  }

  /**
   * Recovery / replication: one data batch without checks (markers go through prepareUpdate /
   * apply / completeTxn so the caller can write the txn index in between).
   */
  replay(b: ProducerBatch): void {
    const u = this.prepareUpdate([b], 'recovery');
    this.apply(u);
    for (const c of u.completedTxns) this.completeTxn(c);
    const end = b.lastOffset + 1n;
    if (end > this._mapEndOffset) this._mapEndOffset = end;
  }

  /** Ends an open transaction (its marker, and for an ABORT its .txnindex entry, are written). */
  completeTxn(c: CompletedTxn): void {
    const t = this.ongoingTxns.get(c.firstOffset);
    if (t && t.producerId === c.producerId) this.ongoingTxns.delete(c.firstOffset);
    this.unreplicatedTxns.set(c.firstOffset, c);
  }

  /** The LSO recorded with an aborted transaction's index entry (Kafka's lastStableOffset(completedTxn)). */
  lastStableOffsetAfter(c: CompletedTxn): bigint {
    let min: bigint | undefined;
    for (const t of this.ongoingTxns.values()) {
      if (t.producerId !== c.producerId && (min === undefined || t.firstOffset < min)) min = t.firstOffset;
    }
    return min ?? c.lastOffset + 1n;
  }

  /**
   * The first offset of an open transaction, or of a completed one whose marker is not below
   * `highWatermark` (default: any completed one not yet pruned by onHighWatermarkUpdated).
   */
  firstUnstableOffset(highWatermark?: bigint): bigint | undefined {
    let min: bigint | undefined;
    for (const o of this.ongoingTxns.keys()) if (min === undefined || o < min) min = o;
    for (const [o, c] of this.unreplicatedTxns) {
      if (highWatermark !== undefined && c.lastOffset < highWatermark) continue;
      if (min === undefined || o < min) min = o;
    }
    return min;
  }

  /** Completed transactions whose marker is below the high watermark no longer bound the LSO. */
  onHighWatermarkUpdated(highWatermark: bigint): void {
    for (const [o, c] of this.unreplicatedTxns) if (c.lastOffset < highWatermark) this.unreplicatedTxns.delete(o);
  }

  /** Open transactions, oldest first. */
  ongoingTransactions(): OngoingTxn[] {
    return [...this.ongoingTxns.values()].sort((a, b) => cmpBig(a.firstOffset, b.firstOffset));
  }

  updateMapEndOffset(offset: bigint): void {
    this._mapEndOffset = offset;
  }

  /**
   * Drops producers idle for producer.id.expiration.ms (no open transaction), and verification
   * states that old. Returns how many producers went.
   */
  removeExpiredProducers(nowMs: number): number {
    let n = 0;
    for (const [pid, e] of this.producers) {
      if (e.currentTxnFirstOffset < 0n && BigInt(nowMs) - e.lastTimestamp >= BigInt(this.producerIdExpirationMs)) {
        this.producers.delete(pid);
        n++;
      }
    }
    for (const [pid, v] of this.verificationStates) if (nowMs - v.timestamp >= this.producerIdExpirationMs) this.verificationStates.delete(pid);
    return n;
  }

  // ---- transaction verification ---------------------------------------------------------------

  /**
   * Whether the producer has a transaction open in this partition; with `producerEpoch`, one opened
   * at that epoch (transaction.version 2 bumps the epoch per transaction, so an open transaction of
   * an older epoch, whose marker is still to come, is not the batch's transaction).
   */
  hasOngoingTransaction(producerId: bigint, producerEpoch?: number): boolean {
    const e = this.producers.get(producerId);
    if (!e || e.currentTxnFirstOffset < 0n) return false;
    return producerEpoch === undefined || e.producerEpoch === producerEpoch;
  }

  /** The producer's verification state, created if there is none (the lowest sequence and its epoch kept). */
  maybeCreateVerificationStateEntry(producerId: bigint, sequence: number, epoch: number, nowMs: number): VerificationStateEntry {
    let v = this.verificationStates.get(producerId);
    if (!v) {
      v = { timestamp: nowMs, guard: new VerificationGuard(), lowestSequence: sequence, epoch };
      this.verificationStates.set(producerId, v);
    } else if (epoch > v.epoch) {
      v.epoch = epoch;
      v.lowestSequence = sequence;
    } else if (epoch === v.epoch && sequence < v.lowestSequence) {
      v.lowestSequence = sequence;
    }
    return v;
  }

  verificationStateEntry(producerId: bigint): VerificationStateEntry | undefined {
    return this.verificationStates.get(producerId);
  }

  /** The log start offset moved: producers whose last batch is below it are forgotten, older snapshots deleted. */
  onLogStartOffsetIncremented(logStartOffset: bigint): void {
    for (const [pid, e] of this.producers) {
      const last = e.batches[e.batches.length - 1];
      if (e.currentTxnFirstOffset < 0n && (!last || last.lastOffset < logStartOffset)) this.producers.delete(pid);
    }
    for (const o of this.snapshotOffsets()) if (o < logStartOffset) this.deleteSnapshot(o);
  }

  /** Forgets everything (truncation rebuilds from the log). */
  clear(mapEndOffset: bigint): void {
    this.producers.clear();
    this.ongoingTxns.clear();
    this.unreplicatedTxns.clear();
    this.verificationStates.clear();
    this._mapEndOffset = mapEndOffset;
  }

  // ---- snapshots ------------------------------------------------------------------------------

  snapshotOffsets(): bigint[] {
    const dir = this.dirFn();
    if (!this.fs.existsSync(dir)) return [];
    const out: bigint[] = [];
    for (const name of this.fs.readdirSync(dir)) {
      const o = offsetFromSnapshotFile(name);
      if (o !== undefined) out.push(o);
    }
    return out.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  }

  deleteSnapshot(offset: bigint): void {
    const file = path.join(this.dirFn(), snapshotFileName(offset));
    if (this.fs.existsSync(file)) this.fs.unlinkSync(file);
  }

  /** Deletes snapshots at offsets > `offset` (Kafka: truncateAndReload / deleted past the log end). */
  deleteSnapshotsAfter(offset: bigint): void {
    for (const o of this.snapshotOffsets()) if (o > offset) this.deleteSnapshot(o);
  }

  /** A snapshot with no producer (a tiered log's future replica when the local start has no snapshot file). */
  static emptySnapshot(): Buffer {
    return ProducerStateManager.encodeEntries([]);
  }

  /** Encodes the state in Kafka's snapshot format. */
  encodeSnapshot(): Buffer {
    return ProducerStateManager.encodeEntries([...this.producers.values()]);
  }

  private static encodeEntries(entries: readonly ProducerStateEntry[]): Buffer {
    const w = new Writer();
    w.int16(SNAPSHOT_VERSION);
    writeProducerSnapshot(w, SNAPSHOT_VERSION, {
      crc: 0,
      producerEntries: entries.map((e) => {
        const last = e.batches[e.batches.length - 1];
        return {
          producerId: e.producerId,
          epoch: e.producerEpoch,
          lastSequence: last ? last.lastSeq : -1,
          lastOffset: last ? last.lastOffset : -1n,
          // Kafka's offsetDelta is in offsets (the sequence may wrap past 2^31-1, the offsets do not).
          offsetDelta: last ? Number(last.lastOffset - last.firstOffset) : 0,
          timestamp: e.lastTimestamp,
          coordinatorEpoch: e.coordinatorEpoch,
          currentTxnFirstOffset: e.currentTxnFirstOffset,
        };
      }),
    });
    const buf = Buffer.from(w.toBuffer());
    buf.writeUInt32BE(crc32c(buf.subarray(6)) >>> 0, 2);
    return buf;
  }

  static decodeSnapshot(buf: Buffer): ProducerStateEntry[] {
    if (buf.length < 6) throw new Error(`producer snapshot too short (${buf.length} bytes)`);
    const version = buf.readInt16BE(0);
    if (version !== SNAPSHOT_VERSION) throw new Error(`producer snapshot version ${version} is not supported`);
    const stored = buf.readUInt32BE(2);
    const computed = crc32c(buf.subarray(6)) >>> 0;
    if (stored !== computed) throw new Error(`producer snapshot CRC mismatch (stored ${stored}, computed ${computed})`);
    const r = new Reader(buf.subarray(2));
    const snap = readProducerSnapshot(r, SNAPSHOT_VERSION);
    return snap.producerEntries.map((p) => ({
      producerId: p.producerId,
      producerEpoch: p.epoch,
      batches:
        p.lastOffset >= 0n
          ? [{ firstSeq: decrementSequence(p.lastSequence, p.offsetDelta), lastSeq: p.lastSequence, firstOffset: p.lastOffset - BigInt(p.offsetDelta), lastOffset: p.lastOffset, timestamp: p.timestamp }]
          : [],
      lastTimestamp: p.timestamp,
      coordinatorEpoch: p.coordinatorEpoch,
      currentTxnFirstOffset: p.currentTxnFirstOffset,
    }));
  }

  /** Writes `<mapEndOffset>.snapshot` (replacing one at that offset). */
  takeSnapshot(): void {
    const dir = this.dirFn();
    const file = path.join(dir, snapshotFileName(this._mapEndOffset));
    const tmp = `${file}.tmp`;
    const buf = this.encodeSnapshot();
    const fd = this.fs.openSync(tmp, 'w');
    try {
      writeFully(this.fs, fd, buf, 0);
      this.fs.fsyncSync(fd);
    } finally {
      this.fs.closeSync(fd);
    }
    this.fs.renameSync(tmp, file);
  }

  /**
   * Loads the newest readable snapshot at or below `logEndOffset` (deleting newer ones and
   * unreadable ones); returns the offset the log must be replayed from (>= logStartOffset).
   */
  loadFromSnapshot(logStartOffset: bigint, logEndOffset: bigint, now: number): bigint {
    this.producers.clear();
    this.ongoingTxns.clear();
    this.unreplicatedTxns.clear();
    this.deleteSnapshotsAfter(logEndOffset);
    const offsets = this.snapshotOffsets().reverse();
    for (const o of offsets) {
      if (o < logStartOffset) {
        this.deleteSnapshot(o);
        continue;
      }
      let entries: ProducerStateEntry[];
      try {
        entries = ProducerStateManager.decodeSnapshot(this.fs.readFileSync(path.join(this.dirFn(), snapshotFileName(o))));
      } catch {
        this.deleteSnapshot(o);
        continue;
      }
      for (const e of entries) {
        // A producer with an open transaction never expires (Kafka's isProducerExpired).
        if (e.currentTxnFirstOffset >= 0n || BigInt(now) - e.lastTimestamp < BigInt(this.producerIdExpirationMs)) {
          this.producers.set(e.producerId, e);
          if (e.currentTxnFirstOffset >= 0n) this.ongoingTxns.set(e.currentTxnFirstOffset, { producerId: e.producerId, firstOffset: e.currentTxnFirstOffset });
        }
      }
      this._mapEndOffset = o;
      return o;
    }
    this._mapEndOffset = logStartOffset;
    return logStartOffset;
  }
}
