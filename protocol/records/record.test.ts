import { buildRecordBatch, MemoryRecordsBuilder, SimpleRecord } from './memory-records-builder';
import { findFirstRecordAtOrAfter, iterateRecords, readRecords, RecordIterator } from './record';
import { checkBatch, CompressionType, RecordBatch, TimestampType } from './record-batch';
import { compress } from './compression';
import { ErrorCode, expectKafkaError, patchBatch, rawBatch, rawRecord, uvarint, varint } from '../testing/records-test-util';

const CODECS = [
  CompressionType.NONE,
  CompressionType.GZIP,
  CompressionType.SNAPPY,
  CompressionType.LZ4,
  CompressionType.ZSTD,
];
const T0 = 1_700_000_000_000n;

const RECORDS: SimpleRecord[] = [
  { key: 'k0', value: 'v0', timestamp: T0 },
  { key: null, value: 'no key', timestamp: T0 + 5n },
  { key: 'no value', value: null, timestamp: T0 - 3n }, // timestamps need not be ordered
  { key: Buffer.alloc(0), value: Buffer.alloc(0), timestamp: T0 + 1000n }, // empty, not null
  {
    key: 'h',
    value: 'with headers',
    timestamp: T0 + 2n,
    headers: [
      { key: 'a', value: '1' },
      { key: 'a', value: '2' }, // duplicate keys are kept, in order
      { key: 'nul', value: null },
      { key: 'ünïcödé', value: Buffer.from([0, 255]) },
      { key: '', value: '' },
    ],
  },
  { key: 'big', value: Buffer.alloc(100_000, 7), timestamp: T0 + 1n },
];

/** Buffers compared with Buffer.equals: jest's deep equality walks bytes one by one (slow for 100 KB). */
function expectBytes(actual: Buffer | null, expected: Buffer | null): void {
  if (expected === null) expect(actual).toBeNull();
  else expect(actual !== null && actual.equals(expected)).toBe(true);
}

function asBuf(v: unknown): Buffer | null {
  if (v === null || v === undefined) return null;
  return typeof v === 'string' ? Buffer.from(v) : (v as Buffer);
}

describe('build and read back', () => {
  for (const compression of CODECS) {
    it(`codec ${CompressionType[compression]}`, () => {
      const buf = buildRecordBatch(RECORDS, {
        baseOffset: 1000n,
        compression,
        producerId: 42n,
        producerEpoch: 3,
        baseSequence: 10,
        partitionLeaderEpoch: 7,
      });
      const batch = checkBatch(buf, 0);
      expect(batch.compressionType).toBe(compression);
      expect(batch.baseOffset).toBe(1000n);
      expect(batch.lastOffsetDelta).toBe(RECORDS.length - 1);
      expect(batch.recordsCount).toBe(RECORDS.length);
      expect(batch.baseTimestamp).toBe(T0);
      expect(batch.maxTimestamp).toBe(T0 + 1000n);
      expect(batch.producerId).toBe(42n);
      expect(batch.producerEpoch).toBe(3);
      expect(batch.baseSequence).toBe(10);
      expect(batch.partitionLeaderEpoch).toBe(7);
      expect(batch.isTransactional).toBe(false);
      expect(batch.isControlBatch).toBe(false);
      expect(batch.timestampType).toBe(TimestampType.CREATE_TIME);

      const recs = readRecords(batch);
      expect(recs).toHaveLength(RECORDS.length);
      recs.forEach((r, i) => {
        const want = RECORDS[i];
        expect(r.offset).toBe(1000n + BigInt(i));
        expect(r.offsetDelta).toBe(i);
        expect(r.timestamp).toBe(BigInt(want.timestamp!));
        expect(r.timestampDelta).toBe(Number(BigInt(want.timestamp!) - T0));
        expect(r.sequence).toBe(10 + i);
        expectBytes(r.key, asBuf(want.key));
        expectBytes(r.value, asBuf(want.value));
        expect(r.headers).toEqual((want.headers ?? []).map((h) => ({ key: h.key, value: asBuf(h.value) })));
      });
      // null and empty stay distinct
      expect(recs[1].key).toBeNull();
      expect(recs[3].key).toEqual(Buffer.alloc(0));
    });
  }

  it('uncompressed key/value are views into the batch, not copies', () => {
    const buf = buildRecordBatch([{ key: 'abc', value: 'def' }]);
    const [r] = readRecords(new RecordBatch(buf));
    expect(r.key!.buffer).toBe(buf.buffer);
  });

  it('record sizes add up to the batch', () => {
    const buf = buildRecordBatch(RECORDS);
    const total = readRecords(new RecordBatch(buf)).reduce((n, r) => n + r.sizeInBytes, 0);
    expect(total + 61).toBe(buf.length);
  });

  it('appendWithOffset leaves gaps (compacted batches) and numbers from baseOffset', () => {
    const b = new MemoryRecordsBuilder({ baseOffset: 100n });
    b.appendWithOffset(100n, { value: 'a', timestamp: T0 });
    b.appendWithOffset(103n, { value: 'b', timestamp: T0 });
    b.appendWithOffset(110n, { value: 'c', timestamp: T0 });
    const batch = checkBatch(b.build(), 0);
    expect(batch.lastOffset).toBe(110n);
    expect(batch.recordsCount).toBe(3);
    expect(readRecords(batch).map((r) => r.offset)).toEqual([100n, 103n, 110n]);
    expect(() => b.appendWithOffset(110n, { value: 'd' })).toThrow();
  });

  it('LogAppendTime: every record reports the batch maxTimestamp', () => {
    const buf = buildRecordBatch(RECORDS.slice(0, 3), {
      timestampType: TimestampType.LOG_APPEND_TIME,
      logAppendTime: 1_800_000_000_000n,
      compression: CompressionType.LZ4,
    });
    const batch = checkBatch(buf, 0);
    expect(batch.timestampType).toBe(TimestampType.LOG_APPEND_TIME);
    expect(batch.maxTimestamp).toBe(1_800_000_000_000n);
    for (const r of readRecords(batch)) expect(r.timestamp).toBe(1_800_000_000_000n);
  });

  it('NO_TIMESTAMP records and the transactional flag', () => {
    const buf = buildRecordBatch([{ value: 'x', timestamp: -1 }, { value: 'y', timestamp: -1 }], {
      producerId: 5n,
      producerEpoch: 0,
      baseSequence: 0,
      isTransactional: true,
    });
    const batch = checkBatch(buf, 0);
    expect(batch.isTransactional).toBe(true);
    expect(batch.baseTimestamp).toBe(-1n);
    expect(batch.maxTimestamp).toBe(-1n);
    expect(readRecords(batch).map((r) => r.timestamp)).toEqual([-1n, -1n]);
  });

  it('sequences wrap past int32 max like Kafka', () => {
    const buf = buildRecordBatch([{ value: 'a' }, { value: 'b' }, { value: 'c' }], {
      producerId: 1n,
      producerEpoch: 0,
      baseSequence: 0x7fffffff - 1,
    });
    expect(readRecords(new RecordBatch(buf)).map((r) => r.sequence)).toEqual([0x7ffffffe, 0x7fffffff, 0]);
    const noSeq = buildRecordBatch([{ value: 'a' }]);
    expect(readRecords(new RecordBatch(noSeq))[0].sequence).toBe(-1);
  });

  it('delete horizon: flag set, baseTimestamp is the horizon, record timestamps preserved', () => {
    const buf = buildRecordBatch([{ value: 'a', timestamp: T0 }, { value: null, timestamp: T0 + 9n }], {
      deleteHorizonMs: T0 + 86_400_000n,
    });
    const batch = checkBatch(buf, 0);
    expect(batch.hasDeleteHorizon).toBe(true);
    expect(batch.baseTimestamp).toBe(T0 + 86_400_000n);
    expect(readRecords(batch).map((r) => r.timestamp)).toEqual([T0, T0 + 9n]);
  });

  it('refuses an empty batch and a transactional batch without producer id', () => {
    expect(() => new MemoryRecordsBuilder().build()).toThrow();
    expect(() => new MemoryRecordsBuilder({ isTransactional: true })).toThrow();
  });

  it('a builder may build again after more appends', () => {
    const b = new MemoryRecordsBuilder({ now: T0 });
    b.append({ value: 'a' });
    const one = b.build();
    b.append({ value: 'b' });
    const two = b.build();
    expect(new RecordBatch(one).recordsCount).toBe(1);
    expect(readRecords(checkBatch(two, 0)).map((r) => r.value!.toString())).toEqual(['a', 'b']);
  });

  it('large timestamp deltas (beyond int32) round-trip', () => {
    const buf = buildRecordBatch([{ value: 'a', timestamp: 0 }, { value: 'b', timestamp: T0 }]);
    expect(readRecords(new RecordBatch(buf)).map((r) => r.timestamp)).toEqual([0n, T0]);
  });
});

describe('RecordIterator', () => {
  it('walks without materialising and exposes fields', () => {
    const buf = buildRecordBatch(RECORDS, { compression: CompressionType.ZSTD, baseOffset: 5n });
    const it = new RecordIterator(new RecordBatch(buf));
    const seen: number[] = [];
    while (it.next()) {
      seen.push(it.offsetDelta);
      expect(it.offset).toBe(5n + BigInt(it.index));
      expect(it.keyLength).toBe(it.key === null ? -1 : it.key.length);
    }
    expect(seen).toEqual([0, 1, 2, 3, 4, 5]);
    expect(it.next()).toBe(false);
    expect(it.plainRecords.length).toBeGreaterThan(100_000);
  });

  it('iterateRecords yields the same records', () => {
    const batch = new RecordBatch(buildRecordBatch(RECORDS, { compression: CompressionType.GZIP }));
    const a = [...iterateRecords(batch)];
    const b = readRecords(batch);
    expect(a.length).toBe(b.length);
    a.forEach((r, i) => {
      expectBytes(r.value, b[i].value);
      expect({ ...r, value: null }).toEqual({ ...b[i], value: null });
    });
  });

  it('empty batch (all records compacted away) yields nothing, even if compressed', () => {
    const empty = rawBatch(Buffer.alloc(0), { count: 0, lastOffsetDelta: 4, attributes: CompressionType.GZIP });
    expect(readRecords(checkBatch(empty, 0))).toEqual([]);
  });

  it('a batch declaring 0 records reads as empty whatever follows its header, as in Kafka', () => {
    const junk = rawBatch(rawRecord({ offsetDelta: 0, value: Buffer.from('x') }), { count: 0, lastOffsetDelta: 0 });
    expect(readRecords(new RecordBatch(junk))).toEqual([]);
  });

  it('reads a batch at an offset inside a larger buffer', () => {
    const a = buildRecordBatch([{ value: 'first' }]);
    const b = buildRecordBatch([{ value: 'second' }], { baseOffset: 1n, compression: CompressionType.SNAPPY });
    const set = Buffer.concat([a, b]);
    const batch = checkBatch(set, a.length);
    expect(readRecords(batch)[0].value!.toString()).toBe('second');
  });
});

describe('findFirstRecordAtOrAfter', () => {
  const buf = buildRecordBatch(
    [
      { value: 'a', timestamp: T0 + 10n },
      { value: 'b', timestamp: T0 },
      { value: 'c', timestamp: T0 + 20n },
      { value: 'd', timestamp: T0 + 15n },
    ],
    { baseOffset: 50n, compression: CompressionType.LZ4 },
  );
  const batch = new RecordBatch(buf);

  it('is record-granular: first record whose timestamp >= target', () => {
    expect(findFirstRecordAtOrAfter(batch, T0)).toEqual({ offset: 50n, timestamp: T0 + 10n });
    expect(findFirstRecordAtOrAfter(batch, T0 + 11n)).toEqual({ offset: 52n, timestamp: T0 + 20n });
    expect(findFirstRecordAtOrAfter(batch, T0 + 20n)).toEqual({ offset: 52n, timestamp: T0 + 20n });
    expect(findFirstRecordAtOrAfter(batch, T0 + 21n)).toBeNull();
    expect(findFirstRecordAtOrAfter(batch, -5n)).toEqual({ offset: 50n, timestamp: T0 + 10n });
  });

  it('LogAppendTime batches match on maxTimestamp', () => {
    const lat = new RecordBatch(
      buildRecordBatch([{ value: 'a' }, { value: 'b' }], { timestampType: TimestampType.LOG_APPEND_TIME, logAppendTime: T0 }),
    );
    expect(findFirstRecordAtOrAfter(lat, T0)).toEqual({ offset: 0n, timestamp: T0 });
    expect(findFirstRecordAtOrAfter(lat, T0 + 1n)).toBeNull();
  });
});

describe('malformed records are INVALID_RECORD', () => {
  const ok = (d: number) => rawRecord({ offsetDelta: d, key: Buffer.from('k'), value: Buffer.from('v') });
  const read = (b: Buffer) => () => readRecords(new RecordBatch(b));

  function both(records: Buffer, count: number, code: number = ErrorCode.INVALID_RECORD): void {
    // the same bytes, uncompressed and compressed with every codec
    for (const c of CODECS) {
      const payload = c === CompressionType.NONE ? records : compress(c, records);
      expectKafkaError(read(rawBatch(payload, { count, attributes: c })), code);
    }
  }

  it('well-formed raw records read fine (control for the cases below)', () => {
    expect(readRecords(new RecordBatch(rawBatch(Buffer.concat([ok(0), ok(1)]), { count: 2 })))).toHaveLength(2);
  });

  it('fewer records than declared', () => both(Buffer.concat([ok(0), ok(1)]), 3));
  it('more records than declared (bytes left over)', () => both(Buffer.concat([ok(0), ok(1)]), 1));
  it('negative record count', () => {
    expectKafkaError(read(rawBatch(ok(0), { count: -1, lastOffsetDelta: 0 })), ErrorCode.INVALID_RECORD);
  });
  it('record length past the end', () => both(rawRecord({ offsetDelta: 0, value: Buffer.from('v'), bodySize: 200 }), 1));
  it('record length shorter than its fields', () => {
    const r = rawRecord({ offsetDelta: 0, value: Buffer.from('vvvv') });
    const short = Buffer.from(r);
    short[0] = varint(r.length - 1 - 2)[0]; // claims 2 bytes fewer than it has
    both(short, 1);
  });
  it('record length longer than its fields', () => {
    const r = rawRecord({ offsetDelta: 0, value: Buffer.from('v') });
    const padded = Buffer.concat([Buffer.from(varint(r.length - 1 + 2)), r.subarray(1), Buffer.from([0, 0])]);
    both(padded, 1);
  });
  it('negative record length', () => both(Buffer.from([...varint(-5), 0, 0, 0, 1, 1, 0]), 1));
  it('zero-length record', () => both(Buffer.from(varint(0)), 1));
  it('varint longer than 5 bytes', () => {
    const body = [0, 0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 1, 1, 0];
    both(Buffer.from([...varint(body.length), ...body]), 1);
  });
  it('varlong longer than 10 bytes', () => {
    const body = [0, ...Array(10).fill(0x80), 0x01, 0, 1, 1, 0];
    both(Buffer.from([...varint(body.length), ...body]), 1);
  });
  it('key length below -1', () => {
    const body = [0, 0, 0, ...varint(-2), ...varint(-1), 0];
    both(Buffer.from([...varint(body.length), ...body]), 1);
  });
  it('value length past the record', () => {
    const body = [0, 0, 0, ...varint(-1), ...varint(50), 1, 2, 0];
    both(Buffer.from([...varint(body.length), ...body]), 1);
  });
  it('negative header count', () => {
    const body = [0, 0, 0, ...varint(-1), ...varint(-1), ...varint(-3)];
    both(Buffer.from([...varint(body.length), ...body]), 1);
  });
  it('header count larger than the bytes left', () => {
    const body = [0, 0, 0, ...varint(-1), ...varint(-1), ...uvarint(2_000_000_000)];
    both(Buffer.from([...varint(body.length), ...body]), 1);
  });
  it('negative header key length', () => {
    const body = [0, 0, 0, ...varint(-1), ...varint(-1), ...varint(1), ...varint(-1), ...varint(-1)];
    both(Buffer.from([...varint(body.length), ...body]), 1);
  });
  it('header value length below -1', () => {
    const body = [0, 0, 0, ...varint(-1), ...varint(-1), ...varint(1), ...varint(1), 0x61, ...varint(-7)];
    both(Buffer.from([...varint(body.length), ...body]), 1);
  });
  it('timestamp delta beyond 2^52 ms', () => {
    const body = [0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0, ...varint(-1), ...varint(-1), 0];
    both(Buffer.from([...varint(body.length), ...body]), 1);
  });

  it('a truncated batch header is CORRUPT_MESSAGE, not a RangeError', () => {
    const buf = buildRecordBatch([{ value: 'x' }]);
    expectKafkaError(read(buf.subarray(0, 40)), ErrorCode.CORRUPT_MESSAGE);
    expectKafkaError(read(buf.subarray(0, buf.length - 1)), ErrorCode.CORRUPT_MESSAGE);
    expectKafkaError(read(patchBatch(buf, { batchLength: 10 })), ErrorCode.CORRUPT_MESSAGE);
  });

  it('garbage compressed payload is INVALID_RECORD; unknown codec UNSUPPORTED_COMPRESSION_TYPE', () => {
    for (const c of [1, 2, 3, 4]) {
      expectKafkaError(read(rawBatch(Buffer.from('definitely not compressed'), { count: 1, attributes: c })), ErrorCode.INVALID_RECORD);
    }
    for (const c of [5, 6, 7]) {
      expectKafkaError(read(rawBatch(ok(0), { count: 1, attributes: c })), ErrorCode.UNSUPPORTED_COMPRESSION_TYPE);
    }
  });

  it('random corruption of records never escapes as another error type', () => {
    for (const c of CODECS) {
      const good = buildRecordBatch(RECORDS.slice(0, 5), { compression: c });
      for (let i = 0; i < 300; i++) {
        const bad = Buffer.from(good);
        const at = 61 + Math.floor(Math.random() * (bad.length - 61));
        bad[at] ^= 1 + Math.floor(Math.random() * 255);
        try {
          readRecords(new RecordBatch(bad));
        } catch (err) {
          expect((err as Error).name).toBe('KafkaError');
        }
      }
    }
  });
});
