import { compress } from './compression';
import { buildRecordBatch, MemoryRecordsBuilder, rebuildBatch, SimpleRecord } from './memory-records-builder';
import { readRecords } from './record';
import { checkBatch, CompressionType, RecordBatch, TimestampType } from './record-batch';
import { RecordValidationError, validateProduceRecordSet } from './record-set-validator';
import { ErrorCode, expectKafkaError, patchBatch, rawBatch, rawRecord } from '../testing/records-test-util';

const CODECS = [
  CompressionType.NONE,
  CompressionType.GZIP,
  CompressionType.SNAPPY,
  CompressionType.LZ4,
  CompressionType.ZSTD,
];
const NOW = 1_700_000_000_000n;

const recs = (n: number, ts = (i: number) => NOW - 10n + BigInt(i % 7)): SimpleRecord[] =>
  Array.from({ length: n }, (_, i) => ({ key: `k${i}`, value: `value-${i}`, timestamp: ts(i) }));

/** A magic v1 message (the pre-0.11 format), as an old client would send it. */
function legacyMessage(magic: 0 | 1): Buffer {
  const value = Buffer.from('old');
  const body = Buffer.alloc(4 + 1 + 1 + (magic === 1 ? 8 : 0) + 4 + 4 + value.length);
  let p = 4; // crc (not checked before the magic)
  body.writeInt8(magic, p++);
  body.writeInt8(0, p++);
  if (magic === 1) {
    body.writeBigInt64BE(NOW, p);
    p += 8;
  }
  body.writeInt32BE(-1, p);
  p += 4;
  body.writeInt32BE(value.length, p);
  value.copy(body, p + 4);
  const head = Buffer.alloc(12);
  head.writeInt32BE(body.length, 8);
  return Buffer.concat([head, body]);
}

describe('valid record sets', () => {
  for (const c of CODECS) {
    it(`reports counts and max timestamp (${CompressionType[c]})`, () => {
      const buf = buildRecordBatch(recs(50), { compression: c, producerId: 7n, producerEpoch: 0, baseSequence: 0 });
      const v = validateProduceRecordSet(buf, { apiVersion: 9 });
      expect(v.batches).toHaveLength(1);
      const b = v.batches[0];
      expect(b.recordCount).toBe(50);
      expect(b.maxTimestamp).toBe(NOW - 4n);
      expect(b.offsetDeltaOfMaxTimestamp).toBe(6); // first record with the max
      expect(b.offsetDeltasContiguous).toBe(true);
      expect(b.compression).toBe(c);
      expect(b.position).toBe(0);
      expect(v.recordCount).toBe(50);
      expect(v.maxTimestamp).toBe(NOW - 4n);
      expect(v.validBytes).toBe(buf.length);
      expect(v.sourceCompression).toBe(c);
      if (c === CompressionType.NONE) expect(b.uncompressedRecordsSize).toBe(buf.length - 61);
      else expect(b.uncompressedRecordsSize).toBe(validateProduceRecordSet(buildRecordBatch(recs(50))).batches[0].uncompressedRecordsSize);
    });
  }

  it('all records without timestamps: max is -1', () => {
    const v = validateProduceRecordSet(buildRecordBatch(recs(3, () => -1n)));
    expect(v.maxTimestamp).toBe(-1n);
  });

  it('a trailing partial batch is ignored, as Kafka trims it', () => {
    const buf = buildRecordBatch(recs(2));
    const withTail = Buffer.concat([buf, buf.subarray(0, 30)]);
    const v = validateProduceRecordSet(withTail);
    expect(v.validBytes).toBe(buf.length);
    expect(v.recordCount).toBe(2);
  });

  it('does not modify the buffer', () => {
    const buf = buildRecordBatch(recs(5), { compression: CompressionType.GZIP });
    const copy = Buffer.from(buf);
    validateProduceRecordSet(buf, { compacted: true });
    expect(buf.equals(copy)).toBe(true);
  });
});

describe('request-level rules (ProduceRequest v3+)', () => {
  it('empty record set: INVALID_RECORD', () => {
    expectKafkaError(() => validateProduceRecordSet(Buffer.alloc(0)), ErrorCode.INVALID_RECORD);
  });

  it('a truncated (only) batch: INVALID_RECORD, since no complete batch remains', () => {
    const buf = buildRecordBatch(recs(3));
    for (const cut of [5, 12, 20, 60, buf.length - 1]) {
      expectKafkaError(() => validateProduceRecordSet(buf.subarray(0, cut)), ErrorCode.INVALID_RECORD);
    }
  });

  it('old message formats (magic 0, 1): INVALID_RECORD', () => {
    expectKafkaError(() => validateProduceRecordSet(legacyMessage(0)), ErrorCode.INVALID_RECORD);
    expectKafkaError(() => validateProduceRecordSet(legacyMessage(1)), ErrorCode.INVALID_RECORD);
  });

  it('magic above 2 or negative: CORRUPT_MESSAGE', () => {
    const buf = Buffer.from(buildRecordBatch(recs(1)));
    buf.writeInt8(3, 16);
    expectKafkaError(() => validateProduceRecordSet(buf), ErrorCode.CORRUPT_MESSAGE);
    buf.writeInt8(-1, 16);
    expectKafkaError(() => validateProduceRecordSet(buf), ErrorCode.CORRUPT_MESSAGE);
  });

  it('batch length below 14: CORRUPT_MESSAGE', () => {
    const buf = patchBatch(buildRecordBatch(recs(1)), { batchLength: 13 });
    expectKafkaError(() => validateProduceRecordSet(buf), ErrorCode.CORRUPT_MESSAGE);
  });

  it('batch length between 14 and the v2 header: CORRUPT_MESSAGE', () => {
    const buf = patchBatch(buildRecordBatch(recs(1)), { batchLength: 30 }).subarray(0, 42);
    expectKafkaError(() => validateProduceRecordSet(buf), ErrorCode.CORRUPT_MESSAGE);
  });

  it('two batches for one partition: INVALID_RECORD', () => {
    const a = buildRecordBatch(recs(1));
    expectKafkaError(() => validateProduceRecordSet(Buffer.concat([a, a])), ErrorCode.INVALID_RECORD);
  });

  it('zstd before produce v7: UNSUPPORTED_COMPRESSION_TYPE', () => {
    const buf = buildRecordBatch(recs(2), { compression: CompressionType.ZSTD });
    expectKafkaError(() => validateProduceRecordSet(buf, { apiVersion: 6 }), ErrorCode.UNSUPPORTED_COMPRESSION_TYPE);
    expect(validateProduceRecordSet(buf, { apiVersion: 7 }).recordCount).toBe(2);
  });
});

describe('batch-level rules', () => {
  it('baseOffset other than 0: INVALID_RECORD', () => {
    expectKafkaError(() => validateProduceRecordSet(buildRecordBatch(recs(1), { baseOffset: 5n })), ErrorCode.INVALID_RECORD);
  });

  it('larger than max.message.bytes: MESSAGE_TOO_LARGE', () => {
    const buf = buildRecordBatch(recs(100));
    expectKafkaError(() => validateProduceRecordSet(buf, { maxMessageBytes: buf.length - 1 }), ErrorCode.MESSAGE_TOO_LARGE);
    expect(validateProduceRecordSet(buf, { maxMessageBytes: buf.length }).recordCount).toBe(100);
  });

  it('flipped CRC or flipped payload byte: CORRUPT_MESSAGE', () => {
    for (const c of CODECS) {
      const buf = Buffer.from(buildRecordBatch(recs(5), { compression: c }));
      const crcFlip = Buffer.from(buf);
      crcFlip[18] ^= 0xff;
      expectKafkaError(() => validateProduceRecordSet(crcFlip), ErrorCode.CORRUPT_MESSAGE);
      const bodyFlip = Buffer.from(buf);
      bodyFlip[buf.length - 2] ^= 0x01;
      expectKafkaError(() => validateProduceRecordSet(bodyFlip), ErrorCode.CORRUPT_MESSAGE);
    }
  });

  it('unknown codec id (CRC valid): UNSUPPORTED_COMPRESSION_TYPE', () => {
    for (const id of [5, 6, 7]) {
      const buf = patchBatch(buildRecordBatch(recs(1)), { attributes: id });
      expectKafkaError(() => validateProduceRecordSet(buf), ErrorCode.UNSUPPORTED_COMPRESSION_TYPE);
    }
  });

  it('lastOffsetDelta and record count must agree, and be positive: INVALID_RECORD', () => {
    const buf = buildRecordBatch(recs(3));
    for (const p of [
      { lastOffsetDelta: 3 },
      { lastOffsetDelta: 1 },
      { lastOffsetDelta: -1 },
      { count: 0 },
      { count: -2 },
      { count: 4, lastOffsetDelta: 3 }, // consistent header, but only 3 records inside
      { count: 2, lastOffsetDelta: 1 }, // consistent header, but a record left over
    ]) {
      expectKafkaError(() => validateProduceRecordSet(patchBatch(buf, p)), ErrorCode.INVALID_RECORD);
    }
  });

  it('record count mismatch inside compressed batches: INVALID_RECORD', () => {
    for (const c of CODECS.slice(1)) {
      const buf = buildRecordBatch(recs(3), { compression: c });
      expectKafkaError(() => validateProduceRecordSet(patchBatch(buf, { count: 4, lastOffsetDelta: 3 })), ErrorCode.INVALID_RECORD);
      expectKafkaError(() => validateProduceRecordSet(patchBatch(buf, { count: 2, lastOffsetDelta: 1 })), ErrorCode.INVALID_RECORD);
    }
  });

  it('control batches from clients: INVALID_RECORD', () => {
    const buf = buildRecordBatch(recs(1), { isControlBatch: true });
    expectKafkaError(() => validateProduceRecordSet(buf), ErrorCode.INVALID_RECORD);
  });

  it('producer id without a base sequence: INVALID_RECORD', () => {
    const buf = buildRecordBatch(recs(1), { producerId: 3n, producerEpoch: 0 });
    expectKafkaError(() => validateProduceRecordSet(buf), ErrorCode.INVALID_RECORD);
  });

  it('garbage compressed payload with a valid CRC: INVALID_RECORD (non-retriable)', () => {
    for (const c of CODECS.slice(1)) {
      const buf = rawBatch(Buffer.from('not compressed, just some bytes here'), { count: 1, attributes: c });
      expectKafkaError(() => validateProduceRecordSet(buf), ErrorCode.INVALID_RECORD);
    }
  });

  it('malformed records (plain or compressed): INVALID_RECORD', () => {
    const bad = Buffer.concat([
      rawRecord({ offsetDelta: 0, value: Buffer.from('a') }),
      rawRecord({ offsetDelta: 1, value: Buffer.from('b'), bodySize: 99 }),
    ]);
    for (const c of CODECS) {
      const payload = c === CompressionType.NONE ? bad : compress(c, bad);
      expectKafkaError(() => validateProduceRecordSet(rawBatch(payload, { count: 2, attributes: c })), ErrorCode.INVALID_RECORD);
    }
  });
});

describe('the decompression bound (32 x max.message.bytes, see compression.ts)', () => {
  const MiB = 1024 * 1024;
  const DEFAULT_MAX_MESSAGE_BYTES = MiB + 12;

  it('1 MiB of zeros, in one record or a thousand, passes at default limits in every codec', () => {
    const one: SimpleRecord[] = [{ key: 'zeros', value: Buffer.alloc(MiB), headers: [{ key: 'h', value: 'v' }], timestamp: NOW }];
    const many: SimpleRecord[] = Array.from({ length: 1024 }, (_, i) => ({ key: `k${i}`, value: Buffer.alloc(1024), timestamp: NOW }));
    for (const c of CODECS.slice(1)) {
      for (const records of [one, many]) {
        const buf = buildRecordBatch(records, { compression: c });
        const v = validateProduceRecordSet(buf, { maxMessageBytes: DEFAULT_MAX_MESSAGE_BYTES });
        expect(v.recordCount).toBe(records.length);
        expect(v.batches[0].uncompressedRecordsSize).toBeGreaterThan(MiB);
      }
    }
  });

  it('valid records that inflate past the bound: INVALID_RECORD', () => {
    // 33 records of 1 MiB zeros: 33 MiB from ~1 KB of zstd, above 32 x 1048588.
    const records: SimpleRecord[] = Array.from({ length: 33 }, () => ({ value: Buffer.alloc(MiB), timestamp: NOW }));
    const buf = buildRecordBatch(records, { compression: CompressionType.ZSTD });
    expect(buf.length).toBeLessThan(DEFAULT_MAX_MESSAGE_BYTES);
    expectKafkaError(() => validateProduceRecordSet(buf, { maxMessageBytes: DEFAULT_MAX_MESSAGE_BYTES }), ErrorCode.INVALID_RECORD);
    // A topic that raises max.message.bytes raises the bound with it.
    expect(validateProduceRecordSet(buf, { maxMessageBytes: 2 * MiB }).recordCount).toBe(33);
    // maxOutputLength caps it further, for every codec.
    for (const c of CODECS.slice(1)) {
      const small = buildRecordBatch(recs(1000), { compression: c });
      const size = validateProduceRecordSet(small).batches[0].uncompressedRecordsSize;
      expect(validateProduceRecordSet(small, { maxOutputLength: size }).recordCount).toBe(1000);
      expectKafkaError(() => validateProduceRecordSet(small, { maxOutputLength: size - 1 }), ErrorCode.INVALID_RECORD);
    }
  });

  it('a compressed batch counting more records than the bound can hold is refused before decompressing', () => {
    const n = 0x7ffffffe;
    for (const c of CODECS.slice(1)) {
      const buf = patchBatch(buildRecordBatch(recs(3), { compression: c }), { count: n, lastOffsetDelta: n - 1 });
      const err = expectKafkaError(() => validateProduceRecordSet(buf), ErrorCode.INVALID_RECORD);
      expect(err.message).toMatch(/decompression limit/);
    }
  });
});

describe('offset deltas', () => {
  const shuffled = Buffer.concat([
    rawRecord({ offsetDelta: 0, value: Buffer.from('a') }),
    rawRecord({ offsetDelta: 2, value: Buffer.from('b') }),
    rawRecord({ offsetDelta: 1, value: Buffer.from('c') }),
  ]);

  for (const c of CODECS) {
    it(`non-contiguous deltas are rejected by default, reported when allowed (${CompressionType[c]})`, () => {
      const payload = c === CompressionType.NONE ? shuffled : compress(c, shuffled);
      const buf = rawBatch(payload, { count: 3, attributes: c });
      expectKafkaError(() => validateProduceRecordSet(buf), ErrorCode.INVALID_RECORD);
      const v = validateProduceRecordSet(buf, { nonContiguousOffsets: 'allow' });
      expect(v.batches[0].offsetDeltasContiguous).toBe(false);
      // Kafka's remedy: re-encode with deltas 0..n-1, keeping order and header fields.
      const fixed = rebuildBatch(new RecordBatch(buf));
      const again = validateProduceRecordSet(fixed);
      expect(again.batches[0].offsetDeltasContiguous).toBe(true);
      expect(readRecords(new RecordBatch(fixed)).map((r) => [r.offsetDelta, r.value!.toString()])).toEqual([
        [0, 'a'],
        [1, 'b'],
        [2, 'c'],
      ]);
      expect(new RecordBatch(fixed).compressionType).toBe(c);
    });
  }
});

describe('per-record rules (reported with record indexes)', () => {
  it('compacted topics need keys: INVALID_RECORD listing every keyless record', () => {
    const input: SimpleRecord[] = [{ key: 'a', value: '1' }, { value: '2' }, { key: 'c', value: '3' }, { value: null }];
    for (const c of CODECS) {
      const buf = buildRecordBatch(input, { compression: c });
      const err = expectKafkaError(() => validateProduceRecordSet(buf, { compacted: true }), ErrorCode.INVALID_RECORD);
      expect(err).toBeInstanceOf(RecordValidationError);
      expect(err.recordErrors!.map((e) => e.batchIndex)).toEqual([1, 3]);
      expect(validateProduceRecordSet(buf).recordCount).toBe(4);
    }
  });

  it('timestamps outside the window: INVALID_TIMESTAMP', () => {
    const input = [
      { value: 'ok', timestamp: NOW },
      { value: 'old', timestamp: NOW - 10_000n },
      { value: 'future', timestamp: NOW + 10_000n },
      { value: 'none', timestamp: -1n },
    ];
    const buf = buildRecordBatch(input, { compression: CompressionType.SNAPPY });
    const opts = { now: NOW, timestampBeforeMaxMs: 5000, timestampAfterMaxMs: 5000 };
    const err = expectKafkaError(() => validateProduceRecordSet(buf, opts), ErrorCode.INVALID_TIMESTAMP);
    expect(err.recordErrors!.map((e) => e.batchIndex)).toEqual([1, 2]);
    expect(validateProduceRecordSet(buf, { ...opts, timestampBeforeMaxMs: 20_000, timestampAfterMaxMs: 20_000 }).recordCount).toBe(4);
    // a LogAppendTime topic does not look at create times
    expect(validateProduceRecordSet(buf, { ...opts, timestampType: TimestampType.LOG_APPEND_TIME }).recordCount).toBe(4);
  });

  it('a batch claiming LogAppendTime: INVALID_TIMESTAMP on LogAppendTime topics', () => {
    const buf = buildRecordBatch(recs(2), { timestampType: TimestampType.LOG_APPEND_TIME, logAppendTime: NOW });
    expectKafkaError(
      () => validateProduceRecordSet(buf, { timestampType: TimestampType.LOG_APPEND_TIME }),
      ErrorCode.INVALID_TIMESTAMP,
    );
    // On a CreateTime topic Kafka only range-checks the (batch max) timestamp.
    expect(validateProduceRecordSet(buf).batches[0].maxTimestamp).toBe(NOW);
  });

  it('the first failing rule decides the code', () => {
    const buf = buildRecordBatch([{ value: 'no key', timestamp: NOW }, { key: 'k', value: 'late', timestamp: 0 }]);
    const err = expectKafkaError(
      () => validateProduceRecordSet(buf, { compacted: true, now: NOW, timestampBeforeMaxMs: 1000 }),
      ErrorCode.INVALID_RECORD,
    );
    expect(err.recordErrors).toHaveLength(2);
  });
});

describe('the log applies the results in place', () => {
  it('setLastOffset and setMaxTimestamp keep the batch valid', () => {
    const buf = Buffer.from(buildRecordBatch(recs(4), { compression: CompressionType.LZ4 }));
    const v = validateProduceRecordSet(buf);
    const batch = v.batches[0].batch;
    batch.setLastOffset(1003n);
    batch.partitionLeaderEpoch = 9;
    batch.setMaxTimestamp(TimestampType.CREATE_TIME, v.batches[0].maxTimestamp);
    const after = checkBatch(buf, 0);
    expect(after.baseOffset).toBe(1000n);
    expect(readRecords(after).map((r) => r.offset)).toEqual([1000n, 1001n, 1002n, 1003n]);
    batch.setMaxTimestamp(TimestampType.LOG_APPEND_TIME, NOW + 1n);
    expect(checkBatch(buf, 0).maxTimestamp).toBe(NOW + 1n);
    expect(readRecords(checkBatch(buf, 0))[0].timestamp).toBe(NOW + 1n);
  });

  it('rebuildBatch recompresses to a topic codec keeping producer fields', () => {
    const orig = buildRecordBatch(recs(10), {
      compression: CompressionType.GZIP,
      producerId: 11n,
      producerEpoch: 2,
      baseSequence: 100,
      isTransactional: true,
    });
    const out = rebuildBatch(new RecordBatch(orig), { compression: CompressionType.ZSTD });
    const b = checkBatch(out, 0);
    expect(b.compressionType).toBe(CompressionType.ZSTD);
    expect([b.producerId, b.producerEpoch, b.baseSequence, b.isTransactional]).toEqual([11n, 2, 100, true]);
    expect(b.maxTimestamp).toBe(new RecordBatch(orig).maxTimestamp);
    const a = readRecords(new RecordBatch(orig));
    const r = readRecords(b);
    expect(r.map((x) => [x.offset, x.timestamp, x.key!.toString(), x.value!.toString()])).toEqual(
      a.map((x) => [x.offset, x.timestamp, x.key!.toString(), x.value!.toString()]),
    );
  });

  it('MemoryRecordsBuilder output always passes the validator', () => {
    for (const c of CODECS) {
      const b = new MemoryRecordsBuilder({ compression: c, now: NOW });
      for (let i = 0; i < 200; i++) b.append({ key: i % 3 ? `k${i}` : null, value: Buffer.alloc(i) });
      expect(validateProduceRecordSet(b.build()).recordCount).toBe(200);
    }
  });
});
