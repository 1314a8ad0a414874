import * as nodefs from 'node:fs';
import * as path from 'node:path';
import { CorruptIndexError } from '../errors';
import { FaultyFs } from '../testing/faulty-fs';
import { removeTempDirs, tempDir } from '../testing/temp-dir';
import { InvalidOffsetError } from './abstract-index';
import { OffsetIndex } from './offset-index';
import { TimeIndex } from './time-index';

afterAll(removeTempDirs);

const fs = new FaultyFs();

describe('OffsetIndex', () => {
  test('append, lookup (largest entry <= target), truncate, reload', () => {
    const file = path.join(tempDir(), '00000000000000001000.index');
    const idx = new OffsetIndex(fs, file, 1000n, 1024);
    expect(idx.lookup(5000n)).toEqual({ offset: 1000n, position: 0 });
    idx.append(1010n, 100);
    idx.append(1020n, 250);
    idx.append(1035n, 400);
    expect(idx.lookup(999n)).toEqual({ offset: 1000n, position: 0 });
    expect(idx.lookup(1009n)).toEqual({ offset: 1000n, position: 0 });
    expect(idx.lookup(1010n)).toEqual({ offset: 1010n, position: 100 });
    expect(idx.lookup(1034n)).toEqual({ offset: 1020n, position: 250 });
    expect(idx.lookup(9999n)).toEqual({ offset: 1035n, position: 400 });
    expect(nodefs.statSync(file).size).toBe(24);
    expect(() => idx.append(1035n, 500)).toThrow(InvalidOffsetError);
    expect(() => idx.append(1040n, 400)).toThrow(InvalidOffsetError);
    idx.truncateTo(1020n);
    expect(idx.entries).toBe(1);
    expect(nodefs.statSync(file).size).toBe(8);
    idx.close();
    const again = new OffsetIndex(fs, file, 1000n, 1024);
    expect(again.entries).toBe(1);
    expect(again.lastOffset).toBe(1010n);
    again.sanityCheck(200);
    expect(() => again.sanityCheck(50)).toThrow(CorruptIndexError);
  });

  test('is full at segment.index.bytes / 8 entries; relative offsets must fit an int32', () => {
    const idx = new OffsetIndex(fs, path.join(tempDir(), 'x.index'), 0n, 16);
    idx.append(1n, 10);
    idx.append(2n, 20);
    expect(idx.isFull).toBe(true);
    expect(() => idx.append(3n, 30)).toThrow(InvalidOffsetError);
    expect(idx.canAppendOffset(0x7fffffffn)).toBe(true);
    expect(idx.canAppendOffset(0x80000000n)).toBe(false);
    expect(idx.canAppendOffset(-1n)).toBe(false);
    idx.close();
  });

  test('sanity check: partial entry, backwards entries', () => {
    const dir = tempDir();
    const f = path.join(dir, 'a.index');
    nodefs.writeFileSync(f, Buffer.from([0, 0, 0, 5, 0, 0, 0, 10, 0, 0, 0]));
    expect(() => new OffsetIndex(fs, f, 0n, 1024).sanityCheck(1000)).toThrow(/not a multiple/);
    const b = Buffer.alloc(16);
    b.writeInt32BE(9, 0);
    b.writeInt32BE(100, 4);
    b.writeInt32BE(3, 8);
    b.writeInt32BE(200, 12);
    nodefs.writeFileSync(f, b);
    expect(() => new OffsetIndex(fs, f, 0n, 1024).sanityCheck(1000)).toThrow(/relative offset 3 after 9/);
  });

  test('a zero tail (Kafka preallocation) is dropped at load and the file trimmed', () => {
    const f = path.join(tempDir(), 'z.index');
    const b = Buffer.alloc(8 * 100);
    b.writeInt32BE(4, 0);
    b.writeInt32BE(300, 4);
    nodefs.writeFileSync(f, b);
    const idx = new OffsetIndex(fs, f, 0n, 1024);
    expect(idx.entries).toBe(1);
    idx.sanityCheck(1000);
    expect(nodefs.statSync(f).size).toBe(8);
    idx.close();
  });

  test('an append whose write fails leaves memory unchanged', () => {
    const ffs = new FaultyFs();
    const idx = new OffsetIndex(ffs, path.join(tempDir(), 'f.index'), 0n, 1024);
    idx.append(1n, 10);
    ffs.failNext({ op: 'write', path: 'f.index' });
    expect(() => idx.append(2n, 20)).toThrow(/EIO/);
    expect(idx.entries).toBe(1);
    idx.append(2n, 20);
    expect(idx.entries).toBe(2);
    idx.close();
  });
});

describe('TimeIndex', () => {
  test('maybeAppend only when the timestamp grows; lookup is the largest entry <= target', () => {
    const file = path.join(tempDir(), '00000000000000000100.timeindex');
    const idx = new TimeIndex(fs, file, 100n, 1200);
    expect(idx.lookup(5)).toEqual({ timestamp: -1, offset: 100n });
    expect(idx.lastEntry()).toEqual({ timestamp: -1, offset: 100n });
    idx.maybeAppend(1000, 105n);
    idx.maybeAppend(1000, 107n);
    idx.maybeAppend(2000, 110n);
    expect(idx.entries).toBe(2);
    expect(idx.lookup(999)).toEqual({ timestamp: -1, offset: 100n });
    expect(idx.lookup(1500)).toEqual({ timestamp: 1000, offset: 105n });
    expect(idx.lookup(2000)).toEqual({ timestamp: 2000, offset: 110n });
    expect(() => idx.maybeAppend(3000, 104n)).toThrow(InvalidOffsetError);
    expect(() => idx.maybeAppend(500, 120n)).toThrow(InvalidOffsetError);
    idx.truncateTo(110n);
    expect(idx.lastEntry()).toEqual({ timestamp: 1000, offset: 105n });
    idx.close();
    const again = new TimeIndex(fs, file, 100n, 1200);
    again.sanityCheck(0, 106n);
    expect(() => again.sanityCheck(0, 105n)).toThrow(/past the segment/);
  });

  test('skipFullCheck lets the final entry in when full', () => {
    const idx = new TimeIndex(fs, path.join(tempDir(), 'y.timeindex'), 0n, 12);
    idx.maybeAppend(10, 1n);
    expect(idx.isFull).toBe(true);
    expect(() => idx.maybeAppend(20, 2n)).toThrow(InvalidOffsetError);
    idx.maybeAppend(20, 2n, true);
    expect(idx.entries).toBe(2);
    idx.close();
  });
});
