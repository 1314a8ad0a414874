/**
 * File and directory names of Kafka's on-disk layout (LogFileUtils / UnifiedLog in Kafka):
 * `<20-digit base offset>.log|.index|.timeindex|.txnindex|.snapshot`, the transient suffixes
 * `.deleted` (awaiting physical deletion), `.cleaned` and `.swap` (compaction/split in progress),
 * and partition directories `<topic>-<partition>`, `<topic>-<partition>.<uuid hex>-delete`,
 * `<topic>-<partition>.<uuid hex>-future` (a replica being moved here by AlterReplicaLogDirs).
 */
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { TopicPartition } from '../common/topic-partition';

export const LOG_FILE_SUFFIX = '.log';
export const INDEX_FILE_SUFFIX = '.index';
export const TIME_INDEX_FILE_SUFFIX = '.timeindex';
export const TXN_INDEX_FILE_SUFFIX = '.txnindex';
export const PRODUCER_SNAPSHOT_FILE_SUFFIX = '.snapshot';
export const DELETED_FILE_SUFFIX = '.deleted';
export const CLEANED_FILE_SUFFIX = '.cleaned';
export const SWAP_FILE_SUFFIX = '.swap';
export const DELETE_DIR_SUFFIX = '-delete';
export const FUTURE_DIR_SUFFIX = '-future';
export const STRAY_DIR_SUFFIX = '-stray';

export const CLEAN_SHUTDOWN_FILE = '.kafka_cleanshutdown';
export const RECOVERY_POINT_CHECKPOINT_FILE = 'recovery-point-offset-checkpoint';
export const LOG_START_OFFSET_CHECKPOINT_FILE = 'log-start-offset-checkpoint';
export const REPLICATION_OFFSET_CHECKPOINT_FILE = 'replication-offset-checkpoint';
export const PARTITION_METADATA_FILE = 'partition.metadata';
export const META_PROPERTIES_FILE = 'meta.properties';

/** Base offsets print as 20 zero-padded digits so that lexical order is offset order. */
export function filenamePrefixFromOffset(offset: bigint): string {
  return offset.toString().padStart(20, '0');
}

export function logFile(dir: string, baseOffset: bigint, suffix = ''): string {
  return path.join(dir, filenamePrefixFromOffset(baseOffset) + LOG_FILE_SUFFIX + suffix);
}
export function offsetIndexFile(dir: string, baseOffset: bigint, suffix = ''): string {
  return path.join(dir, filenamePrefixFromOffset(baseOffset) + INDEX_FILE_SUFFIX + suffix);
}
export function timeIndexFile(dir: string, baseOffset: bigint, suffix = ''): string {
  return path.join(dir, filenamePrefixFromOffset(baseOffset) + TIME_INDEX_FILE_SUFFIX + suffix);
}
export function transactionIndexFile(dir: string, baseOffset: bigint, suffix = ''): string {
  return path.join(dir, filenamePrefixFromOffset(baseOffset) + TXN_INDEX_FILE_SUFFIX + suffix);
}

const OFFSET_PREFIX = /^(\d{20})\./;

/** The base offset in a segment file name, or undefined if the name does not start with one. */
export function offsetFromFileName(name: string): bigint | undefined {
  const m = OFFSET_PREFIX.exec(path.basename(name));
  return m ? BigInt(m[1]) : undefined;
}

export function isLogFile(name: string): boolean {
  return name.endsWith(LOG_FILE_SUFFIX) && offsetFromFileName(name) !== undefined;
}

export function isIndexFile(name: string): boolean {
  return (
    (name.endsWith(INDEX_FILE_SUFFIX) || name.endsWith(TIME_INDEX_FILE_SUFFIX) || name.endsWith(TXN_INDEX_FILE_SUFFIX)) &&
    offsetFromFileName(name) !== undefined
  );
}

export function partitionDirName(tp: TopicPartition): string {
  return `${tp.topic}-${tp.partition}`;
}

/** Kafka's name for a log directory awaiting deletion: `<topic>-<partition>.<32 hex>-delete`. */
export function deleteDirName(tp: TopicPartition): string {
  return `${tp.topic}-${tp.partition}.${randomBytes(16).toString('hex')}${DELETE_DIR_SUFFIX}`;
}

/**
 * Parses `<topic>-<partition>` (the partition is after the last '-'). Returns undefined for names
 * that are not partition directories (including -delete, -future and -stray ones).
 */
export function parseTopicPartitionName(name: string): TopicPartition | undefined {
  if (name.endsWith(DELETE_DIR_SUFFIX) || name.endsWith(FUTURE_DIR_SUFFIX) || name.endsWith(STRAY_DIR_SUFFIX)) return undefined;
  const i = name.lastIndexOf('-');
  if (i <= 0 || i === name.length - 1) return undefined;
  const topic = name.slice(0, i);
  const p = name.slice(i + 1);
  if (!/^\d+$/.test(p)) return undefined;
  const partition = Number(p);
  if (!Number.isSafeInteger(partition) || partition > 0x7fffffff) return undefined;
  return { topic, partition };
}

/**
 * Kafka's name for a future replica's directory (AlterReplicaLogDirs: the copy being built in
 * another log directory): `<topic>-<partition>.<32 hex>-future`.
 */
export function futureDirName(tp: TopicPartition): string {
  return `${tp.topic}-${tp.partition}.${randomBytes(16).toString('hex')}${FUTURE_DIR_SUFFIX}`;
}

/** The topic-partition of a future replica's directory (Kafka's FutureDirPattern), undefined for other names. */
export function parseFutureDirName(name: string): TopicPartition | undefined {
  const m = /^(.+)\.[0-9a-f]{32}-future$/.exec(name);
  return m ? parseTopicPartitionName(m[1]) : undefined;
}

export function isDeleteDirName(name: string): boolean {
  return /\.[0-9a-f]{32}-delete$/.test(name);
}

/** Swaps a trailing suffix (`x.log.deleted` -> `x.log`). */
export function replaceSuffix(file: string, oldSuffix: string, newSuffix: string): string {
  if (!file.endsWith(oldSuffix)) throw new Error(`${file} does not end with ${oldSuffix}`);
  return file.slice(0, file.length - oldSuffix.length) + newSuffix;
}
