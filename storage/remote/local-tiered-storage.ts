/**
 * A RemoteStorageManager over a local directory: what Kafka's test plugin
 * `org.apache.kafka.server.log.remote.storage.LocalTieredStorage` is, with its configuration and
 * its layout, so an operator who knows that plugin recognises the files.
 *
 * Owns: the storage directory and every file under it. Layout (Kafka's RemoteTopicPartitionDirectory
 * and RemoteLogSegmentFileset):
 *
 *     <dir>/kafka-tiered-storage/<topic>-<partition>-<topic id>/<20-digit start offset>-<segment id>.log
 *                                                            .../...-<segment id>.index
 *                                                            .../...-<segment id>.timeindex
 *                                                            .../...-<segment id>.txnindex        (when the segment has one)
 *                                                            .../...-<segment id>.leader_epoch_checkpoint
 *                                                            .../...-<segment id>.snapshot
 *
 * Configuration (the `rsm.config.`-stripped keys, Kafka's names): `dir` (without it, a fresh
 * temporary `kafka-tiered-storage-*` directory, as Kafka's), `delete.on.close` (remove the whole
 * storage at close), `delete.enable` (false: deleteLogSegmentData does nothing, Kafka's simulation
 * of an eventually consistent store), `broker.id` (required, as Kafka's; the RemoteLogManager
 * adds it). `transferer.class` names a Java class and is refused; tests inject a Transferer.
 *
 * Invariants:
 * - A file appears under its final name only complete and fsynced: each is written to a temporary
 *   `<final name>.<random>.tmp` in the same directory, fsynced, then renamed (and the directory
 *   fsynced once the copy ends), so a crash mid-copy never leaves a file that looks complete. A
 *   failed copy removes what it wrote; deleteLogSegmentData also removes temporaries of its segment.
 * - Errors: a missing file is RemoteResourceNotFoundError, any other failure RemoteStorageError
 *   with the cause; InvalidConfigurationError only from configure().
 * - Path components come from validated ids and topic names only, never escape the storage root.
 */
import * as fsp from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Logger } from '../../common/logger';
import { filenamePrefixFromOffset } from '../log-file-utils';
import type { RemoteLogSegmentMetadata, TopicIdPartition } from './remote-log-segment-metadata';
import {
  IndexType,
  LogSegmentData,
  RemoteResourceNotFoundError,
  RemoteStorageError,
  RemoteStorageManager,
} from './remote-storage-manager';
import { InvalidConfigurationError, lenientBoolean, optionalString, PluginConfigs } from './remote-storage-config';

export const LOCAL_TIERED_STORAGE_CLASS_NAME = 'org.apache.kafka.server.log.remote.storage.LocalTieredStorage';

/** LocalTieredStorage's config keys. */
export const STORAGE_DIR_CONFIG = 'dir';
export const DELETE_ON_CLOSE_CONFIG = 'delete.on.close';
export const TRANSFERER_CLASS_CONFIG = 'transferer.class';
export const ENABLE_DELETE_API_CONFIG = 'delete.enable';
export const BROKER_ID_CONFIG = 'broker.id';
/** The directory created under `dir` (Kafka's ROOT_STORAGE_DIR_NAME). */
export const ROOT_STORAGE_DIR_NAME = 'kafka-tiered-storage';

/** The file types of a fileset and their suffixes (Kafka's RemoteLogSegmentFileType). */
export const REMOTE_LOG_SEGMENT_FILE_SUFFIXES = {
  SEGMENT: '.log',
  OFFSET_INDEX: '.index',
  TIME_INDEX: '.timeindex',
  TRANSACTION_INDEX: '.txnindex',
  LEADER_EPOCH_CHECKPOINT: '.leader_epoch_checkpoint',
  PRODUCER_SNAPSHOT: '.snapshot',
} as const;
type FileType = keyof typeof REMOTE_LOG_SEGMENT_FILE_SUFFIXES;

const INDEX_FILE_TYPE: Readonly<Record<IndexType, FileType>> = {
  [IndexType.OFFSET]: 'OFFSET_INDEX',
  [IndexType.TIMESTAMP]: 'TIME_INDEX',
  [IndexType.PRODUCER_SNAPSHOT]: 'PRODUCER_SNAPSHOT',
  [IndexType.TRANSACTION]: 'TRANSACTION_INDEX',
  [IndexType.LEADER_EPOCH]: 'LEADER_EPOCH_CHECKPOINT',
};

/**
 * How bytes reach a (temporary) file of the storage: Kafka's Transferer, which exists so tests can
 * make a copy fail part-way. The storage renames the file into place only after transfer resolves.
 */
export interface Transferer {
  transferFile(from: string, to: string): Promise<void>;
  transferBuffer(from: Buffer, to: string): Promise<void>;
}

const defaultTransferer: Transferer = {
  async transferFile(from, to) {
    await fsp.copyFile(from, to, fsp.constants.COPYFILE_EXCL);
  },
  async transferBuffer(from, to) {
    await fsp.writeFile(to, from, { flag: 'wx' });
  },
};

export interface LocalTieredStorageOptions {
  transferer?: Transferer;
  logger?: Logger;
}

const UUID_RE = /^[A-Za-z0-9_-]{22}$/;
const TOPIC_RE = /^[A-Za-z0-9._-]+$/;

/** `<topic>-<partition>-<topic id>` (Kafka's RemoteTopicPartitionDirectory name). */
export function remoteTopicPartitionDirName(tp: TopicIdPartition): string {
  if (!TOPIC_RE.test(tp.topic) || tp.topic === '.' || tp.topic === '..') throw new RemoteStorageError(`not a legal topic name: ${JSON.stringify(tp.topic)}`);
  if (!Number.isInteger(tp.partition) || tp.partition < 0) throw new RemoteStorageError(`not a partition: ${tp.partition}`);
  if (!UUID_RE.test(tp.topicId)) throw new RemoteStorageError(`not a topic id: ${JSON.stringify(tp.topicId)}`);
  return `${tp.topic}-${tp.partition}-${tp.topicId}`;
}

/** `<20-digit start offset>-<segment id>`, the stem every file of the segment's fileset shares. */
function filesetStem(m: RemoteLogSegmentMetadata): string {
  const id = m.remoteLogSegmentId.id;
  if (!UUID_RE.test(id)) throw new RemoteStorageError(`not a remote segment id: ${JSON.stringify(id)}`);
  return `${filenamePrefixFromOffset(m.startOffset)}-${id}`;
}

function isNotFound(e: unknown): boolean {
  return (e as NodeJS.ErrnoException | null)?.code === 'ENOENT';
}

async function fsyncPath(p: string): Promise<void> {
  const h = await fsp.open(p, 'r');
  try {
    await h.sync();
  } finally {
    await h.close();
  }
}

export class LocalTieredStorage implements RemoteStorageManager {
  private storageDirectory: string | undefined;
  private deleteOnClose = false;
  private deleteEnabled = true;
  private brokerId = -1;
  private readonly transferer: Transferer;
  private readonly logger: Logger | undefined;

  constructor(opts: LocalTieredStorageOptions = {}) {
    this.transferer = opts.transferer ?? defaultTransferer;
    this.logger = opts.logger;
  }

  /** The storage's root (`<dir>/kafka-tiered-storage`), once configured. */
  get storageRoot(): string | undefined {
    return this.storageDirectory;
  }

  async configure(configs: PluginConfigs): Promise<void> {
    if (this.storageDirectory !== undefined) {
      throw new InvalidConfigurationError(`This instance of local remote storage is already configured. The existing storage directory is ${this.storageDirectory}. Ensure the method configure() is only called once.`);
    }
    const brokerId = optionalString(configs, BROKER_ID_CONFIG);
    if (brokerId === undefined) throw new InvalidConfigurationError('Broker ID is required to configure the LocalTieredStorage manager.', BROKER_ID_CONFIG);
    if (!/^-?\d+$/.test(brokerId)) throw InvalidConfigurationError.invalid(BROKER_ID_CONFIG, brokerId, 'Not a number of type INT');
    if (optionalString(configs, TRANSFERER_CLASS_CONFIG) !== undefined) {
      throw InvalidConfigurationError.invalid(TRANSFERER_CLASS_CONFIG, configs[TRANSFERER_CLASS_CONFIG], 'a Java test hook; krill\'s LocalTieredStorage takes a Transferer in its constructor instead');
    }
    this.brokerId = Number(brokerId);
    this.deleteOnClose = lenientBoolean(configs, DELETE_ON_CLOSE_CONFIG, false);
    this.deleteEnabled = lenientBoolean(configs, ENABLE_DELETE_API_CONFIG, true);
    const dir = optionalString(configs, STORAGE_DIR_CONFIG);
    let root: string;
    if (dir === undefined || dir === '') {
      root = await fsp.mkdtemp(path.join(os.tmpdir(), `${ROOT_STORAGE_DIR_NAME}-`));
      this.logger?.debug(`No storage directory specified, created temporary directory: ${root}`);
    } else {
      root = path.resolve(dir, ROOT_STORAGE_DIR_NAME);
      let existed = true;
      try {
        await fsp.stat(root);
      } catch (e) {
        if (!isNotFound(e)) throw new InvalidConfigurationError(`Not able to use the storage directory '${root}': ${(e as Error).message}`, STORAGE_DIR_CONFIG);
        existed = false;
      }
      if (existed) {
        this.logger?.warn(`Remote storage with ID [${dir}] already exists on the file system. Any data already in the remote storage will not be deleted and may result in an inconsistent state and/or provide stale data.`);
      } else {
        try {
          await fsp.mkdir(root, { recursive: true });
        } catch (e) {
          throw new InvalidConfigurationError(`Not able to create the storage directory '${root}': ${(e as Error).message}`, STORAGE_DIR_CONFIG);
        }
      }
    }
    this.storageDirectory = root;
    this.logger?.info(`Created local tiered storage manager [${this.brokerId}]:[${path.basename(root)}] at ${root}`);
  }

  async copyLogSegmentData(metadata: RemoteLogSegmentMetadata, data: LogSegmentData): Promise<Buffer | null> {
    return this.wrap('copying', metadata, async () => {
      const files = this.fileset(metadata);
      await fsp.mkdir(path.dirname(files.SEGMENT), { recursive: true });
      const written: string[] = [];
      const temps: string[] = [];
      const put = async (type: FileType, from: string | Buffer): Promise<void> => {
        const to = files[type];
        const tmp = `${to}.${randomBytes(6).toString('hex')}.tmp`;
        temps.push(tmp);
        if (typeof from === 'string') await this.transferer.transferFile(from, tmp);
        else await this.transferer.transferBuffer(from, tmp);
        await fsyncPath(tmp);
        await fsp.rename(tmp, to);
        written.push(to);
      };
      try {
        await put('OFFSET_INDEX', data.offsetIndex);
        await put('TIME_INDEX', data.timeIndex);
        if (data.transactionIndex !== null) await put('TRANSACTION_INDEX', data.transactionIndex);
        await put('LEADER_EPOCH_CHECKPOINT', data.leaderEpochIndex);
        await put('PRODUCER_SNAPSHOT', data.producerSnapshotIndex);
        await put('SEGMENT', data.logSegment);
        await fsyncPath(path.dirname(files.SEGMENT));
      } catch (e) {
        // A segment stored always has all its files: remove whatever this copy left behind.
        await Promise.all([...written, ...temps].map((f) => fsp.rm(f, { force: true }).catch(() => undefined)));
        // A source file gone (say, deleted by local retention) fails the copy; it is not a missing remote resource.
        if (e instanceof RemoteStorageError) throw e;
        throw new RemoteStorageError(`Failed to copy remote log segment ${metadata.remoteLogSegmentId.id}: ${(e as Error)?.message ?? String(e)}`, { cause: e });
      }
      this.logger?.info(`Offloaded log segment for ${metadata.remoteLogSegmentId.topicIdPartition.topic}-${metadata.remoteLogSegmentId.topicIdPartition.partition} from segment=${data.logSegment}`);
      return null;
    });
  }

  async fetchLogSegment(metadata: RemoteLogSegmentMetadata, startPosition: number, endPosition?: number): Promise<Buffer> {
    return this.wrap('fetching', metadata, async () => {
      checkRange(startPosition, endPosition);
      const h = await fsp.open(this.fileset(metadata).SEGMENT, 'r');
      try {
        const size = (await h.stat()).size;
        const last = Math.min(endPosition ?? size - 1, size - 1);
        if (startPosition > last) return Buffer.alloc(0);
        const out = Buffer.allocUnsafe(last - startPosition + 1);
        let done = 0;
        while (done < out.length) {
          const { bytesRead } = await h.read(out, done, out.length - done, startPosition + done);
          if (bytesRead === 0) break;
          done += bytesRead;
        }
        return done === out.length ? out : out.subarray(0, done);
      } finally {
        await h.close();
      }
    });
  }

  async fetchIndex(metadata: RemoteLogSegmentMetadata, indexType: IndexType): Promise<Buffer> {
    return this.wrap(`fetching the ${indexType} index of`, metadata, async () => {
      const type = INDEX_FILE_TYPE[indexType];
      if (type === undefined) throw new RemoteStorageError(`unknown index type ${String(indexType)}`);
      try {
        return await fsp.readFile(this.fileset(metadata)[type]);
      } catch (e) {
        if (isNotFound(e)) throw new RemoteResourceNotFoundError(`Index file for type: ${indexType} not found for segment ${metadata.remoteLogSegmentId.id}`, { cause: e });
        throw e;
      }
    });
  }

  async deleteLogSegmentData(metadata: RemoteLogSegmentMetadata): Promise<void> {
    return this.wrap('deleting', metadata, async () => {
      if (!this.deleteEnabled) return;
      const dir = path.join(this.root(), remoteTopicPartitionDirName(metadata.remoteLogSegmentId.topicIdPartition));
      const stem = filesetStem(metadata) + '.';
      let names: string[];
      try {
        names = await fsp.readdir(dir);
      } catch (e) {
        if (isNotFound(e)) return;
        throw e;
      }
      // The fileset and any temporary an interrupted copy of it left.
      const mine = names.filter((n) => n.startsWith(stem));
      for (const n of mine) {
        const p = path.join(dir, n);
        const st = await fsp.lstat(p).catch((e) => (isNotFound(e) ? null : Promise.reject(e)));
        if (st !== null && !st.isFile()) throw new RemoteStorageError(`Failed to delete remote log segment with id:${metadata.remoteLogSegmentId.id}: ${p} is not a file`);
      }
      await Promise.all(mine.map((n) => fsp.rm(path.join(dir, n), { force: true })));
    });
  }

  async close(): Promise<void> {
    const root = this.storageDirectory;
    if (!this.deleteOnClose || root === undefined) return;
    try {
      const entries = await fsp.readdir(root, { withFileTypes: true });
      const stray = entries.find((e) => !e.isDirectory());
      if (stray !== undefined) {
        // Kafka keeps an unexpected storage for post-mortem analysis, and stays quiet.
        this.logger?.warn(`Found file [${path.join(root, stray.name)}] which is not a remote topic-partition directory. Stopping the deletion process.`);
        return;
      }
      await fsp.rm(root, { recursive: true, force: true });
    } catch (e) {
      this.logger?.error('Error while deleting remote storage. Stopping the deletion process.', { err: e });
    }
  }

  private root(): string {
    if (this.storageDirectory === undefined) {
      throw new RemoteStorageError('No storage directory was defined for the local remote storage. Make sure the instance was configured correctly via the configure() method.');
    }
    return this.storageDirectory;
  }

  private fileset(m: RemoteLogSegmentMetadata): Record<FileType, string> {
    const dir = path.join(this.root(), remoteTopicPartitionDirName(m.remoteLogSegmentId.topicIdPartition));
    const stem = filesetStem(m);
    const out = {} as Record<FileType, string>;
    for (const [type, suffix] of Object.entries(REMOTE_LOG_SEGMENT_FILE_SUFFIXES) as [FileType, string][]) out[type] = path.join(dir, stem + suffix);
    return out;
  }

  /** Kafka's wrap(): not-found stays not-found, everything else becomes a RemoteStorageError. */
  private async wrap<T>(what: string, m: RemoteLogSegmentMetadata, f: () => Promise<T>): Promise<T> {
    try {
      return await f();
    } catch (e) {
      if (e instanceof RemoteStorageError) throw e;
      const id = m.remoteLogSegmentId.id;
      if (isNotFound(e)) throw new RemoteResourceNotFoundError(`remote log segment ${id}: ${(e as Error).message}`, { cause: e });
      throw new RemoteStorageError(`Internal error in local remote storage ${what} remote log segment ${id}: ${(e as Error)?.message ?? String(e)}`, { cause: e });
    }
  }
}

/** Kafka's argument checks of fetchLogSegment, as RemoteStorageErrors (the contract lets nothing else escape). */
export function checkRange(startPosition: number, endPosition: number | undefined): void {
  if (!Number.isSafeInteger(startPosition) || startPosition < 0) throw new RemoteStorageError(`Start position must be positive: ${startPosition}`);
  if (endPosition !== undefined && (!Number.isSafeInteger(endPosition) || endPosition < startPosition)) {
    throw new RemoteStorageError(`End position cannot be less than startPosition: ${startPosition}, ${endPosition}`);
  }
}
