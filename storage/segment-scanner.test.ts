import { buildRecordBatch } from '../protocol/records/memory-records-builder';
import { RecordBatch, TimestampType } from '../protocol/records/record-batch';
import { PreviousBatch, SegmentRules, SegmentScanner } from './segment-scanner';
import { batchAt } from './testing/batches';

const RULES: SegmentRules = { baseOffset: 1000n, contiguous: true, indexIntervalBytes: 300 };

function scan(bytes: Buffer, chunks: number[] | number = bytes.length, rules: Partial<SegmentRules> = {}, prev: PreviousBatch | null = null): SegmentScanner {
  const s = new SegmentScanner({ ...RULES, ...rules }, bytes.length, prev);
  let pos = 0;
  let i = 0;
  while (s.wantsMore && pos < bytes.length) {
    const n = Math.min(typeof chunks === 'number' ? chunks : chunks[i++ % chunks.length], bytes.length - pos);
    s.feed(bytes.subarray(pos, pos + n));
    pos += n;
  }
  return s.complete();
}

/** Batches of varied sizes (one far larger than the small chunk sizes), contiguous from 1000. */
function segment(): { bytes: Buffer; starts: number[] } {
  const parts: Buffer[] = [];
  const starts: number[] = [];
  let off = 1000n;
  let pos = 0;
  const counts = [1, 5, 40, 2, 120, 3, 1, 60];
  counts.forEach((n, i) => {
    const b = batchAt(off, n, { valueSize: i === 4 ? 300 : 20, timestamp: (j) => 1_700_000_000_000 + i * 100 + (j % 7), partitionLeaderEpoch: i < 5 ? 3 : 4 });
    parts.push(b);
    starts.push(pos);
    pos += b.length;
    off += BigInt(n);
  });
  return { bytes: Buffer.concat(parts), starts };
}

/** Recomputes the CRC after an edit under it (to build batches that are valid but break a rule). */
function withCrc(b: Buffer): Buffer {
  new RecordBatch(b, 0).updateCrc();
  return b;
}

test('results do not depend on how the bytes are chunked', () => {
  const { bytes } = segment();
  const whole = scan(bytes);
  expect(whole.invalidReason).toBeUndefined();
  expect(whole.validBytes).toBe(bytes.length);
  expect(whole.lastOffset).toBe(1000n + 232n - 1n);
  expect(whole.offsetIndex.entries).toBeGreaterThan(1);
  for (const chunks of [1, 7, 12, 61, 62, 100, 333, 4096, [1, 60, 3, 500, 61, 2]]) {
    const s = scan(bytes, chunks);
    expect([s.invalidReason, s.validBytes, s.lastOffset, s.maxTimestamp, s.relOfMaxTimestamp]).toEqual([
      undefined,
      whole.validBytes,
      whole.lastOffset,
      whole.maxTimestamp,
      whole.relOfMaxTimestamp,
    ]);
    expect(s.offsetIndex.bytes.equals(whole.offsetIndex.bytes)).toBe(true);
    expect(s.timeIndex.bytes.equals(whole.timeIndex.bytes)).toBe(true);
    expect(s.epochStarts).toEqual([
      { epoch: 3, startOffset: 1000n },
      { epoch: 4, startOffset: 1168n },
    ]);
  }
});

test('a torn last batch, cut at every byte, is found at the batch start whatever the chunking', () => {
  const { bytes, starts } = segment();
  const last = starts[starts.length - 1];
  for (let cut = last + 1; cut < bytes.length; cut++) {
    for (const chunks of [cut, 64]) {
      const s = scan(bytes.subarray(0, cut), chunks);
      expect(s.validBytes).toBe(last);
      // (a cut inside the base offset's leading zero bytes reads as a zero-filled tail)
      expect(s.invalidReason).toMatch(/torn write|too few bytes|zero-filled tail/);
      expect(s.nextOffset).toBe(1172n);
    }
  }
});

test('a zero-filled tail ends the valid data', () => {
  const { bytes } = segment();
  for (const zeros of [5, 61, 4096]) {
    const s = scan(Buffer.concat([bytes, Buffer.alloc(zeros)]), 1000);
    expect(s.validBytes).toBe(bytes.length);
    expect(s.invalidReason).toMatch(/zero-filled tail/);
  }
});

test('every single-bit flip under the CRC, in the length, the magic or the CRC is found at that batch', () => {
  const { bytes, starts } = segment();
  const k = 3;
  const start = starts[k];
  const end = starts[k + 1];
  for (let pos = start + 8; pos < end; pos++) {
    if (pos >= start + 12 && pos < start + 16) continue; // leader epoch: below
    for (let bit = 0; bit < 8; bit++) {
      const b = Buffer.from(bytes);
      b[pos] ^= 1 << bit;
      const s = scan(b, 256);
      expect({ pos: pos - start, bit, valid: s.validBytes }).toEqual({ pos: pos - start, bit, valid: start });
    }
  }
});

test('a flipped bit in a base offset (outside the CRC) breaks contiguity; in a leader epoch it is found or harmless', () => {
  const { bytes, starts } = segment();
  for (const k of [0, 3, starts.length - 1]) {
    for (let bit = 0; bit < 64; bit++) {
      const b = Buffer.from(bytes);
      b[starts[k] + 7 - (bit >> 3)] ^= 1 << (bit & 7);
      expect(scan(b).validBytes).toBe(starts[k]);
    }
    for (let bit = 0; bit < 32; bit++) {
      const b = Buffer.from(bytes);
      b[starts[k] + 15 - (bit >> 3)] ^= 1 << (bit & 7);
      const s = scan(b);
      // Found at that batch, or at the next one (whose epoch is now below it: the flipped batch's
      // records are intact, only its epoch differs), or not at all (the new epoch fits).
      expect([starts[k], starts[k + 1] ?? bytes.length, bytes.length]).toContain(s.validBytes);
      if (b.readInt32BE(starts[k] + 12) < -1) expect(s.validBytes).toBe(starts[k]);
    }
  }
});

test('offset rules: KAFKA-3955 non-monotonic, KAFKA-7866 duplicates, gaps, first batch off the segment base, overflow, below base', () => {
  const a = batchAt(1000n, 10);
  const cases: [Buffer[], RegExp, number][] = [
    [[a, batchAt(1010n, 3), batchAt(1005n, 4)], /non-monotonic or duplicate offsets: batch base offset 1005 is not above the previous batch's last offset 1012/, 2],
    [[a, batchAt(1010n, 3), batchAt(1010n, 3)], /non-monotonic or duplicate offsets/, 2],
    [[a, batchAt(1011n, 3)], /offset gap: batch base offset 1011 where 1010 was expected/, 1],
    [[batchAt(1001n, 3)], /offset gap: batch base offset 1001 where 1000 was expected/, 0],
    [[a, batchAt(1000n + 0x7fffffffn, 2)], /overflows the segment's int32 relative offsets/, 1],
    [[batchAt(990n, 3)], /below the segment base offset 1000/, 0],
  ];
  for (const [batches, reason, validCount] of cases) {
    const bytes = Buffer.concat(batches);
    const s = scan(bytes);
    expect(s.invalidReason).toMatch(reason);
    expect(s.validBytes).toBe(batches.slice(0, validCount).reduce((n, b) => n + b.length, 0));
  }
  // Gaps are legal in compacted logs, going backwards never is.
  expect(scan(Buffer.concat([a, batchAt(1011n, 3)]), undefined, { contiguous: false }).invalidReason).toBeUndefined();
  expect(scan(Buffer.concat([a, batchAt(1009n, 3)]), undefined, { contiguous: false }).invalidReason).toMatch(/non-monotonic/);
});

test('the previous segment: overlap and gaps at the boundary, epochs carried over', () => {
  const bytes = batchAt(1000n, 5, { partitionLeaderEpoch: 2 });
  expect(scan(bytes, undefined, {}, { lastOffset: 999n, leaderEpoch: 2 }).invalidReason).toBeUndefined();
  expect(scan(bytes, undefined, {}, { lastOffset: 1000n, leaderEpoch: 2 }).invalidReason).toMatch(/is not above the previous segment's last offset 1000/);
  expect(scan(bytes, undefined, {}, { lastOffset: 990n, leaderEpoch: 2 }).invalidReason).toMatch(/does not follow the previous segment's last offset 990/);
  expect(scan(bytes, undefined, { contiguous: false }, { lastOffset: 990n, leaderEpoch: 2 }).invalidReason).toBeUndefined();
  expect(scan(bytes, undefined, {}, { lastOffset: 999n, leaderEpoch: 5 }).invalidReason).toMatch(/partition leader epoch 2 is below the epoch 5 of an earlier batch/);
});

test('leader epochs: never below an earlier one, never below -1; -1 may appear anywhere', () => {
  const e = (off: bigint, n: number, epoch: number) => batchAt(off, n, { partitionLeaderEpoch: epoch });
  expect(scan(Buffer.concat([e(1000n, 2, 3), e(1002n, 2, 2)])).invalidReason).toMatch(/leader epoch 2 is below the epoch 3/);
  expect(scan(Buffer.concat([e(1000n, 2, 3), e(1002n, 2, -1), e(1004n, 1, 3)])).invalidReason).toBeUndefined();
  const bad = e(1000n, 2, 0);
  bad.writeInt32BE(-7, 12);
  expect(scan(bad).invalidReason).toMatch(/invalid partition leader epoch -7/);
});

test('timestamps: a CreateTime batch whose maxTimestamp is below its baseTimestamp is invalid; LogAppendTime may be', () => {
  const b = withCrc(Buffer.from(batchAt(1000n, 3, { timestamp: 5000 })));
  b.writeBigInt64BE(4999n, 35);
  expect(scan(withCrc(b)).invalidReason).toMatch(/maxTimestamp 4999 below its baseTimestamp 5000/);
  const lat = buildRecordBatch([{ value: 'x', timestamp: 9000 }], { baseOffset: 1000n, timestampType: TimestampType.LOG_APPEND_TIME, logAppendTime: 100 });
  expect(scan(lat).invalidReason).toBeUndefined();
  // Records without timestamps (-1) are fine and add no time-index entry.
  const none = batchAt(1000n, 3, { timestamp: -1 });
  const s = scan(Buffer.concat([none, batchAt(1003n, 2, { timestamp: -1 })]), undefined, { indexIntervalBytes: 0 });
  expect(s.invalidReason).toBeUndefined();
  expect(s.timeIndex.entries).toBe(0);
  expect(s.offsetIndex.entries).toBe(1);
});

test('counts: lastOffsetDelta below count - 1, negative count', () => {
  const b = Buffer.from(batchAt(1000n, 3));
  b.writeInt32BE(1, 23);
  expect(scan(withCrc(b)).invalidReason).toMatch(/lastOffsetDelta 1 does not fit record count 3/);
  const c = Buffer.from(batchAt(1000n, 3));
  c.writeInt32BE(-1, 57);
  expect(scan(withCrc(c)).invalidReason).toMatch(/negative record count/);
});

test('a batch length that runs past the file or below the header size', () => {
  const b = Buffer.from(batchAt(1000n, 3));
  b.writeInt32BE(1 << 30, 8);
  expect(scan(b).invalidReason).toMatch(/runs past the end of the file/);
  b.writeInt32BE(10, 8);
  expect(scan(b).invalidReason).toMatch(/invalid batch length 10/);
});
