/**
 * The size of the volume a directory is on (Java's Files.getFileStore(dir).getTotalSpace /
 * getUsableSpace), from statfs: total = blocks x block size, usable = blocks available to an
 * unprivileged process x block size. DescribeLogDirs v4+ reports these per log directory.
 * Invariant: the values are never negative; a size that does not fit a signed 64-bit integer is
 * reported as Long.MAX_VALUE, as Kafka's ReplicaManager.adjustForLargeFileSystems does. An I/O
 * error (the directory is gone, for instance) is thrown to the caller.
 */
import * as fs from 'node:fs';

export interface FileStoreSpace {
  totalBytes: bigint;
  usableBytes: bigint;
}

/** Long.MAX_VALUE. */
const INT64_MAX = (1n << 63n) - 1n;

export function fileStoreSpace(dir: string): FileStoreSpace {
  const s = fs.statfsSync(dir, { bigint: true });
  const clamp = (v: bigint): bigint => (v < 0n || v > INT64_MAX ? INT64_MAX : v);
  return { totalBytes: clamp(s.blocks * s.bsize), usableBytes: clamp(s.bavail * s.bsize) };
}
