/**
 * Validation of the record set a client sends for one partition in a Produce request (v3+, the
 * only versions Kafka 4.0 accepts), with Kafka's checks in Kafka's order and with its error codes:
 *
 * 1. Batch framing (Kafka's batch iterator): a batch whose length is below the smallest legacy
 *    message (14 bytes) -> CORRUPT_MESSAGE; magic outside 0..2 -> CORRUPT_MESSAGE. A trailing
 *    partial batch is not an error: Kafka stops at it and trims it (`validBytes` says where).
 * 2. Produce request rules: no complete batch -> INVALID_RECORD; a first batch with magic 0 or 1
 *    (old message format) -> INVALID_RECORD (not UNSUPPORTED_FOR_MESSAGE_FORMAT: that is what the
 *    v3+ request check throws, before any log-level format check); more than one batch ->
 *    INVALID_RECORD; zstd with request version < 7 -> UNSUPPORTED_COMPRESSION_TYPE.
 * 3. Per batch, before touching records: baseOffset != 0 -> INVALID_RECORD; size above
 *    max.message.bytes -> MESSAGE_TOO_LARGE; length below the v2 header or bad CRC ->
 *    CORRUPT_MESSAGE; codec id 5-7 -> UNSUPPORTED_COMPRESSION_TYPE (Kafka: UNKNOWN_SERVER_ERROR,
 *    see compression.ts).
 * 4. Client batch rules: lastOffsetDelta + 1 <= 0, record count <= 0, or the two disagreeing ->
 *    INVALID_RECORD; a control batch -> INVALID_RECORD (clients may not write markers); a producer
 *    id without a base sequence -> INVALID_RECORD.
 * 5. Records, decompressing once if needed: malformed records -> INVALID_RECORD (record.ts),
 *    undecodable compressed data -> INVALID_RECORD, and a records section that would decompress
 *    past decompressedSizeLimit(maxMessageBytes) (32 x max.message.bytes by default, see
 *    compression.ts) -> INVALID_RECORD, refused before that memory is allocated; a compressed
 *    batch whose record count cannot fit that limit (7 bytes per record at least) is refused
 *    before decompressing at all. Then per record, collected for the whole batch
 *    and reported together with each record's index (Produce v8+ record_errors): a null key on a
 *    compacted topic -> INVALID_RECORD; a CreateTime timestamp outside the configured window, or a
 *    batch claiming LogAppendTime where the topic sets it -> INVALID_TIMESTAMP.
 *
 * Offset deltas. Kafka does not check that records are numbered 0..n-1: uncompressed batches are
 * stored as sent, and a compressed batch with non-contiguous deltas is silently re-encoded. Stored
 * deltas that disagree with the header would make consumers compute wrong offsets, so by default
 * we reject them (INVALID_RECORD); `nonContiguousOffsets: 'allow'` instead reports them per batch
 * so the caller can re-encode with `rebuildBatch` as Kafka does.
 *
 * Nothing here modifies the buffer; offset assignment and max-timestamp stamping are the log's job
 * (RecordBatch.setLastOffset / setMaxTimestamp).
 */
import { ErrorCode, KafkaError } from '../errors';
import { checkCompressionType, decompressedSizeLimit, DecompressOptions } from './compression';
import { MIN_RECORD_SIZE, RecordIterator } from './record';
import {
  BATCH_LENGTH_OFFSET,
  CompressionType,
  CURRENT_MAGIC,
  LOG_OVERHEAD,
  MAGIC_OFFSET,
  NO_PRODUCER_ID,
  NO_TIMESTAMP,
  RECORD_BATCH_OVERHEAD,
  RecordBatch,
  TimestampType,
} from './record-batch';

/** Smallest legacy (v0) message: Kafka's lower bound for any batch length field. */
const LEGACY_RECORD_OVERHEAD_V0 = 14;
/** Bytes needed to read a batch's magic byte. */
const HEADER_SIZE_UP_TO_MAGIC = MAGIC_OFFSET + 1;
/** Produce versions below this may not carry zstd. */
const MIN_PRODUCE_VERSION_FOR_ZSTD = 7;

/** One failing record, shaped as Produce v8+ responses carry it (KafkaError.recordErrors). */
export interface RecordError {
  /** Index of the record inside its batch. */
  batchIndex: number;
  batchIndexErrorMessage: string | null;
}

/**
 * Per-record validation failures of one batch. `code` is the first failure's code and the
 * message its message, as Kafka reports them; `recordErrors` lists every failing record.
 */
export class RecordValidationError extends KafkaError {
  constructor(code: number, recordErrors: RecordError[]) {
    super(code, recordErrors[0]?.batchIndexErrorMessage ?? undefined);
    this.name = 'RecordValidationError';
    this.recordErrors = recordErrors;
  }
}

export interface ProduceValidationOptions extends DecompressOptions {
  // maxOutputLength (DecompressOptions): a cap on decompressedSizeLimit(maxMessageBytes).
  /** Produce request version; only matters for zstd (needs v7+). Default: latest. */
  apiVersion?: number;
  /** The topic's max.message.bytes: a larger batch is MESSAGE_TOO_LARGE. Default: no limit. */
  maxMessageBytes?: number;
  /** cleanup.policy includes compact: every record needs a key. */
  compacted?: boolean;
  /** The topic's message.timestamp.type. Default CREATE_TIME. */
  timestampType?: TimestampType;
  /** message.timestamp.before.max.ms / after.max.ms. Default: unbounded. */
  timestampBeforeMaxMs?: number | bigint;
  timestampAfterMaxMs?: number | bigint;
  /** Clock for the timestamp window. Default Date.now(). */
  now?: number | bigint;
  /** See the file header. Default 'reject'. */
  nonContiguousOffsets?: 'reject' | 'allow';
}

export interface BatchValidation {
  batch: RecordBatch;
  /** Position of the batch in the record set. */
  position: number;
  sizeInBytes: number;
  compression: CompressionType;
  recordCount: number;
  /** Largest record timestamp (NO_TIMESTAMP when all are -1); the batch's maxTimestamp for LogAppendTime batches. */
  maxTimestamp: bigint;
  /** Offset delta of the first record carrying maxTimestamp. */
  offsetDeltaOfMaxTimestamp: number;
  /** True when the records' offset deltas are exactly 0..recordCount-1. */
  offsetDeltasContiguous: boolean;
  /** Bytes of the plain records (the decompressed size for compressed batches). */
  uncompressedRecordsSize: number;
}

export interface RecordSetValidation {
  batches: BatchValidation[];
  recordCount: number;
  maxTimestamp: bigint;
  /** Bytes covered by complete batches; anything after is a partial batch Kafka drops. */
  validBytes: number;
  /** Codec of the (last) compressed batch, NONE if none is compressed: Kafka's "source compression". */
  sourceCompression: CompressionType;
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** A bigint as a number when that is exact. */
function exact(v: bigint): number | bigint {
  return v >= -MAX_SAFE && v <= MAX_SAFE ? Number(v) : v;
}

function invalidRecord(msg: string): KafkaError {
  return new KafkaError(ErrorCode.INVALID_RECORD, msg);
}

/** Step 1: complete batches and where they start, as Kafka's batch iterator sees them. */
function frameBatches(buf: Buffer): { positions: number[]; validBytes: number } {
  const positions: number[] = [];
  let pos = 0;
  while (buf.length - pos >= LOG_OVERHEAD) {
    const length = buf.readInt32BE(pos + BATCH_LENGTH_OFFSET);
    if (length < LEGACY_RECORD_OVERHEAD_V0) {
      throw new KafkaError(
        ErrorCode.CORRUPT_MESSAGE,
        `record batch length ${length} is below the minimum ${LEGACY_RECORD_OVERHEAD_V0}`,
      );
    }
    const size = length + LOG_OVERHEAD;
    if (buf.length - pos < size || buf.length - pos < HEADER_SIZE_UP_TO_MAGIC) break;
    const magic = buf.readInt8(pos + MAGIC_OFFSET);
    if (magic < 0 || magic > CURRENT_MAGIC) {
      throw new KafkaError(ErrorCode.CORRUPT_MESSAGE, `invalid magic ${magic} in record batch at ${pos}`);
    }
    positions.push(pos);
    pos += size;
  }
  return { positions, validBytes: pos };
}

/**
 * Checks a Produce record set and reports each batch's record count and max timestamp. Throws
 * KafkaError (RecordValidationError for per-record failures) on the first failing batch.
 */
export function validateProduceRecordSet(buf: Buffer, opts: ProduceValidationOptions = {}): RecordSetValidation {
  const { positions, validBytes } = frameBatches(buf);
  if (positions.length === 0) throw invalidRecord('produce request must carry at least one complete record batch');
  const firstMagic = buf.readInt8(positions[0] + MAGIC_OFFSET);
  if (firstMagic !== CURRENT_MAGIC) {
    throw invalidRecord(`produce requests may only carry magic v2 record batches, found magic ${firstMagic}`);
  }
  if (positions.length > 1) {
    throw invalidRecord(`produce requests may carry exactly one record batch per partition, found ${positions.length}`);
  }

  const batches: RecordBatch[] = [];
  let sourceCompression = CompressionType.NONE;
  for (const pos of positions) {
    const batch = new RecordBatch(buf, pos);
    const codecId = batch.attributes & 0x07;
    if (codecId === CompressionType.ZSTD && opts.apiVersion !== undefined && opts.apiVersion < MIN_PRODUCE_VERSION_FOR_ZSTD) {
      throw new KafkaError(
        ErrorCode.UNSUPPORTED_COMPRESSION_TYPE,
        `produce requests below version ${MIN_PRODUCE_VERSION_FOR_ZSTD} may not use zstd (version ${opts.apiVersion})`,
      );
    }
    if (batch.baseOffset !== 0n) {
      throw invalidRecord(`the baseOffset of a produced record batch must be 0, found ${batch.baseOffset}`);
    }
    if (opts.maxMessageBytes !== undefined && batch.sizeInBytes > opts.maxMessageBytes) {
      throw new KafkaError(
        ErrorCode.MESSAGE_TOO_LARGE,
        `record batch of ${batch.sizeInBytes} bytes exceeds max.message.bytes ${opts.maxMessageBytes}`,
      );
    }
    if (batch.sizeInBytes < RECORD_BATCH_OVERHEAD) {
      throw new KafkaError(ErrorCode.CORRUPT_MESSAGE, `record batch of ${batch.sizeInBytes} bytes is smaller than the v2 header`);
    }
    if (!batch.isValidCrc()) {
      throw new KafkaError(ErrorCode.CORRUPT_MESSAGE, `record batch CRC mismatch (stored ${batch.crc}, computed ${batch.computeCrc()})`);
    }
    const codec = checkCompressionType(codecId);
    if (codec !== CompressionType.NONE) sourceCompression = codec;
    batches.push(batch);
  }

  const out: BatchValidation[] = [];
  let recordCount = 0;
  let maxTimestamp = NO_TIMESTAMP;
  for (let i = 0; i < batches.length; i++) {
    const v = validateBatchRecords(batches[i], positions[i], opts);
    out.push(v);
    recordCount += v.recordCount;
    if (v.maxTimestamp > maxTimestamp) maxTimestamp = v.maxTimestamp;
  }
  return { batches: out, recordCount, maxTimestamp, validBytes, sourceCompression };
}

/** Steps 4 and 5 for one batch whose header, CRC and codec already passed. */
function validateBatchRecords(batch: RecordBatch, position: number, opts: ProduceValidationOptions): BatchValidation {
  const count = batch.recordsCount;
  const countFromOffsets = batch.lastOffsetDelta + 1;
  if (countFromOffsets <= 0) throw invalidRecord(`batch has an invalid lastOffsetDelta ${batch.lastOffsetDelta}`);
  if (count <= 0) throw invalidRecord(`invalid record count ${count} in batch`);
  if (count !== countFromOffsets) {
    throw invalidRecord(`batch lastOffsetDelta ${batch.lastOffsetDelta} does not match its record count ${count}`);
  }
  if (batch.isControlBatch) throw invalidRecord('clients may not write control batches');
  if (batch.producerId > NO_PRODUCER_ID && batch.baseSequence < 0) {
    throw invalidRecord(`invalid base sequence ${batch.baseSequence} for producer id ${batch.producerId}`);
  }

  let it: RecordIterator;
  if (batch.compressionType === CompressionType.NONE) it = new RecordIterator(batch);
  else {
    const limit = decompressedSizeLimit(opts.maxMessageBytes, opts.maxOutputLength);
    if (count > limit / MIN_RECORD_SIZE) {
      throw invalidRecord(`batch declares ${count} records, more than its ${limit} byte decompression limit can hold`);
    }
    it = new RecordIterator(batch, { maxOutputLength: limit });
  }
  const lat = batch.timestampType === TimestampType.LOG_APPEND_TIME;
  const topicCreateTime = (opts.timestampType ?? TimestampType.CREATE_TIME) === TimestampType.CREATE_TIME;
  const now = BigInt(opts.now ?? Date.now());
  // Kafka's window: now - ts > before or ts - now > after fails, i.e. ts outside [lo, hi].
  const lo = opts.timestampBeforeMaxMs === undefined ? null : now - BigInt(opts.timestampBeforeMaxMs);
  const hi = opts.timestampAfterMaxMs === undefined ? null : now + BigInt(opts.timestampAfterMaxMs);
  // The same bounds as numbers for exact timestamps (no bigint comparison per record): a bound
  // beyond the safe range is passed by every safe timestamp on that side (+-Infinity).
  const loN = lo === null ? -Infinity : lo < -MAX_SAFE ? -Infinity : lo > MAX_SAFE ? Infinity : Number(lo);
  const hiN = hi === null ? Infinity : hi > MAX_SAFE ? Infinity : hi < -MAX_SAFE ? -Infinity : Number(hi);
  const compacted = opts.compacted === true;
  // Timestamps stay plain numbers while exact (always, for real epoch ms); relational operators
  // compare numbers with bigints exactly, so only arithmetic needs one type.
  const baseTs = batch.baseTimestamp;
  const base = baseTs >= -MAX_SAFE && baseTs <= MAX_SAFE ? Number(baseTs) : null;
  const latTs: number | bigint | null = lat ? exact(batch.maxTimestamp) : null;
  // Timestamps are handled as plain numbers (tsN) while exact and as bigints (tsB) otherwise, in
  // separate variables: a variable that may hold either has to box every number it holds (one
  // heap allocation per record); typed apart, the number side stays an unboxed double.
  const latN = typeof latTs === 'number' ? latTs : NaN;
  const latB = typeof latTs === 'bigint' ? latTs : null;

  let errors: RecordError[] | null = null;
  let errorCode: number = ErrorCode.NONE;
  let contiguous = true;
  // The largest timestamp so far: maxN while it is a number, maxB once a bigint took the lead.
  let maxN = -1;
  let maxB = 0n;
  let maxIsBig = false;
  let offsetDeltaOfMax = -1;
  while (it.next()) {
    const i = it.index;
    const offsetDelta = it.offsetDelta;
    if (offsetDelta !== i) contiguous = false;
    let tsN = NaN;
    let tsB: bigint | null = null;
    if (lat) {
      if (latB === null) tsN = latN;
      else tsB = latB;
    } else {
      const t = base === null ? NaN : base + it.timestampDelta;
      if (Number.isSafeInteger(t)) tsN = t;
      else tsB = it.timestamp;
    }
    let outOfRange: boolean;
    let noTimestamp: boolean;
    if (tsB === null) {
      if (maxIsBig ? tsN > maxB : tsN > maxN) {
        maxN = tsN;
        maxIsBig = false;
        offsetDeltaOfMax = offsetDelta;
      }
      outOfRange = tsN < loN || tsN > hiN;
      noTimestamp = tsN === -1;
    } else {
      if (maxIsBig ? tsB > maxB : tsB > maxN) {
        maxB = tsB;
        maxIsBig = true;
        offsetDeltaOfMax = offsetDelta;
      }
      outOfRange = (lo !== null && tsB < lo) || (hi !== null && tsB > hi);
      noTimestamp = tsB === -1n;
    }
    let failure: [number, string] | null = null;
    if (compacted && it.keyLength < 0) {
      failure = [ErrorCode.INVALID_RECORD, 'compacted topic cannot accept a record without a key'];
    } else if (topicCreateTime && !noTimestamp) {
      if (outOfRange) {
        failure = [ErrorCode.INVALID_TIMESTAMP, `timestamp ${tsB ?? tsN} of record ${i} is out of range [${lo ?? '-inf'}, ${hi ?? '+inf'}]`];
      }
    } else if (lat) {
      failure = [ErrorCode.INVALID_TIMESTAMP, 'producers may not set the LogAppendTime timestamp type'];
    }
    if (failure !== null) {
      if (errors === null) {
        errors = [];
        errorCode = failure[0];
      }
      errors.push({ batchIndex: i, batchIndexErrorMessage: failure[1] });
    }
  }
  if (errors !== null) throw new RecordValidationError(errorCode, errors);
  if (!contiguous && opts.nonContiguousOffsets !== 'allow') {
    throw invalidRecord('record offset deltas are not 0..n-1 in order');
  }
  return {
    batch,
    position,
    sizeInBytes: batch.sizeInBytes,
    compression: batch.compressionType,
    recordCount: count,
    maxTimestamp: maxIsBig ? maxB : BigInt(maxN),
    offsetDeltaOfMaxTimestamp: offsetDeltaOfMax,
    offsetDeltasContiguous: contiguous,
    uncompressedRecordsSize: it.plainRecords.length,
  };
}
