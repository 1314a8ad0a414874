/**
 * The storage side of the control API: "fail the next write / fsync / open of a log, index or
 * checkpoint file", translated into a FaultyFs fault (storage/testing/faulty-fs.ts) on the file
 * system the node's partition logs use. File kinds are Kafka's file names:
 *   log        <partition dir>/<base offset>.log (segments)
 *   index      .index (offset index)            timeindex  .timeindex
 *   txnindex   .txnindex (aborted transactions)  snapshot   .snapshot (producer state)
 *   checkpoint leader-epoch-checkpoint, recovery-point-offset-checkpoint,
 *              log-start-offset-checkpoint, replication-offset-checkpoint (and their .tmp, which
 *              is what a checkpoint write opens, writes and fsyncs before the rename)
 * `topic` / `partition` narrow it to files below that partition's directory (checkpoints of the
 * log directory are not below one). Files of the metadata log are never matched. A fault is used
 * up by the matching calls it fails.
 */
import type { FaultSpec, FaultyFs } from '../../storage/testing/faulty-fs';

export type StorageFileKind = 'log' | 'index' | 'timeindex' | 'txnindex' | 'snapshot' | 'checkpoint';

export interface StorageFault {
  op: 'open' | 'write' | 'fsync' | 'read';
  file: StorageFileKind;
  topic?: string;
  partition?: number;
  /** errno to raise (default EIO; e.g. ENOSPC, EMFILE, EACCES). */
  errno?: string;
  /** How many matching calls fail (default 1). */
  times?: number;
  /** Writes only: half the bytes reach the file before the error (a torn write). */
  partial?: boolean;
}

const SUFFIX: Record<StorageFileKind, string> = {
  log: '\\.log',
  index: '\\.index',
  timeindex: '\\.timeindex',
  txnindex: '\\.txnindex',
  snapshot: '\\.snapshot',
  checkpoint: '-checkpoint(?:\\.tmp)?',
};

const ERRNOS = new Set(['EIO', 'ENOSPC', 'EMFILE', 'ENFILE', 'EACCES', 'EROFS', 'ENOENT']);

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export function storageFaultSpec(f: StorageFault): FaultSpec {
  const suffix = SUFFIX[f.file];
  if (suffix === undefined) throw new Error(`unknown storage file kind ${JSON.stringify(f.file)}: ${Object.keys(SUFFIX).join(', ')}`);
  if (!['open', 'write', 'fsync', 'read'].includes(f.op)) throw new Error(`unknown storage operation ${JSON.stringify(f.op)}: open, write, fsync or read`);
  if (f.partition !== undefined && f.topic === undefined) throw new Error('a partition needs its topic');
  const errno = f.errno ?? 'EIO';
  if (!ERRNOS.has(errno)) throw new Error(`unsupported errno ${errno}: ${[...ERRNOS].join(', ')}`);
  const times = f.times ?? 1;
  if (!Number.isInteger(times) || times < 1) throw new Error(`invalid times ${f.times}: a positive integer`);
  if (f.partial && f.op !== 'write') throw new Error('partial applies to writes only');
  const dir = f.topic === undefined ? '' : `[/\\\\]${escape(f.topic)}-${f.partition === undefined ? '\\d+' : f.partition}[/\\\\][^/\\\\]*`;
  // The metadata log is the controller's, not a partition log: never matched.
  return { op: f.op, path: new RegExp(`^(?!.*__cluster_metadata-0).*${dir}${suffix}$`), errno, count: times, partial: f.partial ?? false };
}

/** Arms a storage fault on the node's file system. */
export function armStorageFault(fs: FaultyFs, f: StorageFault): void {
  fs.failNext(storageFaultSpec(f));
}
