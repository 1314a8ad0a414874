/**
 * Storage faults by Kafka file kind: which paths each kind and partition selects (through a real
 * FaultyFs over temp files), the metadata log never matched, and the argument errors.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FaultyFs } from '../../storage/testing/faulty-fs';
import { armStorageFault, storageFaultSpec, type StorageFault } from './storage-faults';

const FILES = [
  'orders-0/00000000000000000000.log',
  'orders-0/00000000000000000000.index',
  'orders-0/00000000000000000000.timeindex',
  'orders-0/00000000000000000000.txnindex',
  'orders-0/00000000000000000042.snapshot',
  'orders-0/leader-epoch-checkpoint',
  'orders-0/leader-epoch-checkpoint.tmp',
  'orders-1/00000000000000000000.log',
  'orders-10/00000000000000000000.log',
  'orders.eu-0/00000000000000000000.log',
  'recovery-point-offset-checkpoint.tmp',
  '__cluster_metadata-0/00000000000000000000.log',
];

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'krill-storage-faults-'));
  for (const f of FILES) {
    fs.mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
    fs.writeFileSync(path.join(dir, f), '');
  }
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The files whose open fails with this fault armed for every one of them. */
function failing(f: Omit<StorageFault, 'op'>): string[] {
  const ffs = new FaultyFs();
  armStorageFault(ffs, { ...f, op: 'open', times: FILES.length });
  const out: string[] = [];
  for (const file of FILES) {
    try {
      ffs.closeSync(ffs.openSync(path.join(dir, file), 'r'));
    } catch (err) {
      expect((err as NodeJS.ErrnoException).code).toBe(f.errno ?? 'EIO');
      out.push(file);
    }
  }
  return out;
}

test('each kind selects its files; the metadata log is never one of them', () => {
  expect(failing({ file: 'log' })).toEqual(['orders-0/00000000000000000000.log', 'orders-1/00000000000000000000.log', 'orders-10/00000000000000000000.log', 'orders.eu-0/00000000000000000000.log']);
  expect(failing({ file: 'index' })).toEqual(['orders-0/00000000000000000000.index']);
  expect(failing({ file: 'timeindex' })).toEqual(['orders-0/00000000000000000000.timeindex']);
  expect(failing({ file: 'txnindex', errno: 'EMFILE' })).toEqual(['orders-0/00000000000000000000.txnindex']);
  expect(failing({ file: 'snapshot' })).toEqual(['orders-0/00000000000000000042.snapshot']);
  expect(failing({ file: 'checkpoint', errno: 'ENOSPC' })).toEqual(['orders-0/leader-epoch-checkpoint', 'orders-0/leader-epoch-checkpoint.tmp', 'recovery-point-offset-checkpoint.tmp']);
});

test('topic and partition narrow it to that partition directory (names are not patterns)', () => {
  expect(failing({ file: 'log', topic: 'orders', partition: 1 })).toEqual(['orders-1/00000000000000000000.log']);
  expect(failing({ file: 'log', topic: 'orders' })).toEqual(['orders-0/00000000000000000000.log', 'orders-1/00000000000000000000.log', 'orders-10/00000000000000000000.log']);
  expect(failing({ file: 'log', topic: 'orders.eu' })).toEqual(['orders.eu-0/00000000000000000000.log']);
});

test('times: the fault is used up', () => {
  const ffs = new FaultyFs();
  armStorageFault(ffs, { op: 'fsync', file: 'log', times: 2 });
  const fd = ffs.openSync(path.join(dir, FILES[0]), 'r+');
  try {
    expect(() => ffs.fsyncSync(fd)).toThrow('EIO: injected fault, fsync');
    expect(() => ffs.fsyncSync(fd)).toThrow('EIO');
    expect(() => ffs.fsyncSync(fd)).not.toThrow();
  } finally {
    ffs.closeSync(fd);
  }
  expect(ffs.injected.map((i) => i.op)).toEqual(['fsync', 'fsync']);
});

test('bad faults are refused', () => {
  expect(() => storageFaultSpec({ op: 'open', file: 'journal' as never })).toThrow('unknown storage file kind "journal"');
  expect(() => storageFaultSpec({ op: 'rename' as never, file: 'log' })).toThrow('unknown storage operation "rename"');
  expect(() => storageFaultSpec({ op: 'open', file: 'log', partition: 0 })).toThrow('a partition needs its topic');
  expect(() => storageFaultSpec({ op: 'open', file: 'log', errno: 'EWHAT' })).toThrow('unsupported errno EWHAT');
  expect(() => storageFaultSpec({ op: 'open', file: 'log', times: 0 })).toThrow('invalid times 0');
  expect(() => storageFaultSpec({ op: 'fsync', file: 'log', partial: true })).toThrow('partial applies to writes only');
});
