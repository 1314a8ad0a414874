/**
 * A RemoteStorageManager over any S3-compatible object store (AWS S3, MinIO, s3rver, ...), through
 * @aws-sdk/client-s3, configured with the property names of Aiven's tiered-storage plugin
 * (`io.aiven.kafka.tieredstorage.RemoteStorageManager` with the S3Storage backend), so a Kafka
 * user's `rsm.config.*` lines work unchanged.
 *
 * Owns: the S3 client (created in configure(), destroyed in close()) and the objects under
 * `key.prefix` it writes. One object per file of a segment, under Aiven's key layout:
 *
 *     <key.prefix><topic>-<topic id>/<partition>/<20-digit start offset>-<segment id>.<suffix>
 *
 * with the suffixes log, index, timeindex, txnindex (when the segment has one), snapshot and
 * leader-epoch-checkpoint. Unlike Aiven's plugin, the `.log` object is the segment's bytes as they
 * are (no chunk manifest, no compression or encryption), so the two plugins do not read each
 * other's data; see docs/tiered-storage.md.
 *
 * Configuration (the `rsm.config.`-stripped keys): storage.backend.class (when given, must be
 * Aiven's S3Storage), storage.s3.bucket.name (required), storage.s3.region (required, as Aiven's),
 * storage.s3.endpoint.url, storage.s3.path.style.access.enabled, storage.aws.access.key.id and
 * storage.aws.secret.access.key (together or not at all), storage.aws.credentials.provider.class
 * (only the SDK's default chain), key.prefix (default ""), chunk.size (validated, unused: ranged
 * GETs need no chunks). Other keys are ignored, as Kafka's AbstractConfig ignores unknown ones.
 *
 * Invariants:
 * - The SDK is required on the first configure(), never at import, so a broker without tiered
 *   storage never loads it.
 * - Checksums only where S3 requires them (`WHEN_REQUIRED` both ways): S3-compatible stores such
 *   as s3rver reject the newer default checksums.
 * - Every request is retried a bounded number of times (maxAttempts) with exponential backoff and
 *   jitter, only on transient failures (5xx, 429/SlowDown, timeouts, network errors); each attempt
 *   has a deadline. A missing object (NoSuchKey / 404, but not NoSuchBucket) is
 *   RemoteResourceNotFoundError; anything else RemoteStorageError with the SDK's error as cause.
 * - A copy uploads every object (each PutObject is atomic) or, on failure, deletes what it may have
 *   written before throwing; deleteLogSegmentData deletes all of a segment's keys in one
 *   DeleteObjects, which succeeds for keys already gone (idempotent).
 */
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import type * as S3Sdk from '@aws-sdk/client-s3';
import type { Logger } from '../../common/logger';
import { filenamePrefixFromOffset } from '../log-file-utils';
import type { RemoteLogSegmentMetadata } from './remote-log-segment-metadata';
import {
  IndexType,
  LogSegmentData,
  RemoteResourceNotFoundError,
  RemoteStorageError,
  RemoteStorageManager,
} from './remote-storage-manager';
import { checkRange } from './local-tiered-storage';
import {
  InvalidConfigurationError,
  optionalInt,
  optionalString,
  PluginConfigs,
  requiredString,
  strictBoolean,
} from './remote-storage-config';

export const AIVEN_REMOTE_STORAGE_MANAGER_CLASS_NAME = 'io.aiven.kafka.tieredstorage.RemoteStorageManager';
export const AIVEN_S3_STORAGE_BACKEND_CLASS_NAME = 'io.aiven.kafka.tieredstorage.storage.s3.S3Storage';
export const AWS_DEFAULT_CREDENTIALS_PROVIDER_CLASS_NAME = 'software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider';

/** Aiven's property names, as the RSM's configure() receives them. */
export const S3_CONFIGS = {
  STORAGE_BACKEND_CLASS: 'storage.backend.class',
  BUCKET_NAME: 'storage.s3.bucket.name',
  REGION: 'storage.s3.region',
  ENDPOINT_URL: 'storage.s3.endpoint.url',
  PATH_STYLE_ACCESS_ENABLED: 'storage.s3.path.style.access.enabled',
  ACCESS_KEY_ID: 'storage.aws.access.key.id',
  SECRET_ACCESS_KEY: 'storage.aws.secret.access.key',
  CREDENTIALS_PROVIDER_CLASS: 'storage.aws.credentials.provider.class',
  KEY_PREFIX: 'key.prefix',
  CHUNK_SIZE: 'chunk.size',
} as const;

/** The object suffixes of a segment (Aiven's ObjectKeyFactory.Suffix). */
export const S3_OBJECT_SUFFIXES = {
  LOG: 'log',
  OFFSET_INDEX: 'index',
  TIME_INDEX: 'timeindex',
  PRODUCER_SNAPSHOT: 'snapshot',
  TXN_INDEX: 'txnindex',
  LEADER_EPOCH_CHECKPOINT: 'leader-epoch-checkpoint',
} as const;
type Suffix = keyof typeof S3_OBJECT_SUFFIXES;

const INDEX_SUFFIX: Readonly<Record<IndexType, Suffix>> = {
  [IndexType.OFFSET]: 'OFFSET_INDEX',
  [IndexType.TIMESTAMP]: 'TIME_INDEX',
  [IndexType.PRODUCER_SNAPSHOT]: 'PRODUCER_SNAPSHOT',
  [IndexType.TRANSACTION]: 'TXN_INDEX',
  [IndexType.LEADER_EPOCH]: 'LEADER_EPOCH_CHECKPOINT',
};

export interface S3RemoteStorageManagerOptions {
  logger?: Logger;
  /** Attempts per request, the first included (default 3). */
  maxAttempts?: number;
  /** Backoff before the first retry, doubled per retry up to retryBackoffMaxMs, +/-20% jitter (default 200). */
  retryBackoffMs?: number;
  retryBackoffMaxMs?: number;
  /** Deadline of one attempt, transfer included (default 120000: a 1 GiB segment at ~10 MB/s). */
  attemptTimeoutMs?: number;
  /** Deadline of the TCP connect (default 10000). */
  connectionTimeoutMs?: number;
}

let sdk: typeof S3Sdk | undefined;
function loadSdk(): typeof S3Sdk {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  sdk ??= require('@aws-sdk/client-s3') as typeof S3Sdk;
  return sdk;
}

const TRANSIENT_NAMES = new Set(['SlowDown', 'RequestTimeout', 'InternalError', 'ServiceUnavailable', 'Throttling', 'ThrottlingException', 'TimeoutError', 'RequestTimeoutException', 'AbortError']);
const TRANSIENT_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNABORTED', 'ENOTCONN', 'UND_ERR_SOCKET']);

interface SdkError {
  name?: string;
  code?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
  $retryable?: unknown;
}

function statusOf(e: unknown): number | undefined {
  return (e as SdkError | null)?.$metadata?.httpStatusCode;
}

/** A failure worth another attempt: the store or the network, not the request. */
export function isTransient(e: unknown): boolean {
  const err = e as SdkError | null;
  if (err === null || typeof err !== 'object') return false;
  const status = statusOf(e);
  if (status !== undefined && (status >= 500 || status === 429)) return true;
  if (err.name !== undefined && TRANSIENT_NAMES.has(err.name)) return true;
  if (err.code !== undefined && TRANSIENT_CODES.has(err.code)) return true;
  return Boolean(err.$retryable);
}

function isNotFound(e: unknown): boolean {
  const err = e as SdkError | null;
  if (err?.name === 'NoSuchBucket') return false;
  return err?.name === 'NoSuchKey' || err?.name === 'NotFound' || statusOf(e) === 404;
}

function describeError(e: unknown): string {
  const err = e as SdkError | null;
  const status = statusOf(e);
  return `${err?.name ?? 'Error'}${status !== undefined ? ` (HTTP ${status})` : ''}${err?.code !== undefined && err.code !== err.name ? ` ${err.code}` : ''}: ${err?.message ?? String(e)}`;
}

export class S3RemoteStorageManager implements RemoteStorageManager {
  private client: S3Sdk.S3Client | undefined;
  private bucket = '';
  private keyPrefix = '';
  private readonly logger: Logger | undefined;
  private readonly maxAttempts: number;
  private readonly backoffMs: number;
  private readonly backoffMaxMs: number;
  private readonly attemptTimeoutMs: number;
  private readonly connectionTimeoutMs: number;

  constructor(opts: S3RemoteStorageManagerOptions = {}) {
    this.logger = opts.logger;
    this.maxAttempts = Math.max(1, opts.maxAttempts ?? 3);
    this.backoffMs = opts.retryBackoffMs ?? 200;
    this.backoffMaxMs = opts.retryBackoffMaxMs ?? 5_000;
    this.attemptTimeoutMs = opts.attemptTimeoutMs ?? 120_000;
    this.connectionTimeoutMs = opts.connectionTimeoutMs ?? 10_000;
  }

  configure(configs: PluginConfigs): void {
    if (this.client !== undefined) throw new InvalidConfigurationError('S3RemoteStorageManager is already configured; configure() is called once.');
    const backend = optionalString(configs, S3_CONFIGS.STORAGE_BACKEND_CLASS);
    if (backend !== undefined && backend !== AIVEN_S3_STORAGE_BACKEND_CLASS_NAME) {
      throw InvalidConfigurationError.invalid(S3_CONFIGS.STORAGE_BACKEND_CLASS, backend, `krill's S3 remote storage manager is the ${AIVEN_S3_STORAGE_BACKEND_CLASS_NAME} backend only`);
    }
    const bucket = requiredString(configs, S3_CONFIGS.BUCKET_NAME);
    const region = requiredString(configs, S3_CONFIGS.REGION);
    const endpoint = optionalString(configs, S3_CONFIGS.ENDPOINT_URL);
    if (endpoint !== undefined && endpoint !== '') {
      try {
        new URL(endpoint);
      } catch {
        throw InvalidConfigurationError.invalid(S3_CONFIGS.ENDPOINT_URL, endpoint, 'Must be a valid URI');
      }
    }
    const pathStyle = strictBoolean(configs, S3_CONFIGS.PATH_STYLE_ACCESS_ENABLED);
    const accessKeyId = optionalString(configs, S3_CONFIGS.ACCESS_KEY_ID);
    const secretAccessKey = optionalString(configs, S3_CONFIGS.SECRET_ACCESS_KEY);
    for (const [k, v] of [[S3_CONFIGS.ACCESS_KEY_ID, accessKeyId], [S3_CONFIGS.SECRET_ACCESS_KEY, secretAccessKey]] as const) {
      if (v === '') throw InvalidConfigurationError.invalid(k, '[hidden]', 'Password must be non-empty');
    }
    if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
      throw new InvalidConfigurationError(`${S3_CONFIGS.ACCESS_KEY_ID} and ${S3_CONFIGS.SECRET_ACCESS_KEY} must be defined together`, S3_CONFIGS.ACCESS_KEY_ID);
    }
    const provider = optionalString(configs, S3_CONFIGS.CREDENTIALS_PROVIDER_CLASS);
    if (provider !== undefined && provider !== '') {
      if (accessKeyId !== undefined) {
        throw new InvalidConfigurationError(`Either static credential pair ${S3_CONFIGS.ACCESS_KEY_ID} and ${S3_CONFIGS.SECRET_ACCESS_KEY} must be set together, or a custom provider class ${S3_CONFIGS.CREDENTIALS_PROVIDER_CLASS}. If both are null, default S3 credentials provider is used.`, S3_CONFIGS.CREDENTIALS_PROVIDER_CLASS);
      }
      if (provider !== AWS_DEFAULT_CREDENTIALS_PROVIDER_CLASS_NAME) {
        throw InvalidConfigurationError.invalid(S3_CONFIGS.CREDENTIALS_PROVIDER_CLASS, provider, `krill uses the AWS SDK's default credential chain (${AWS_DEFAULT_CREDENTIALS_PROVIDER_CLASS_NAME}) or static keys; leave it unset or name that class`);
      }
    }
    this.keyPrefix = optionalString(configs, S3_CONFIGS.KEY_PREFIX) ?? ''; // trimmed, as Kafka's ConfigDef reads a STRING
    optionalInt(configs, S3_CONFIGS.CHUNK_SIZE, 1, Math.floor(2147483647 / 2));
    this.bucket = bucket;

    const { S3Client } = loadSdk();
    this.client = new S3Client({
      region,
      ...(endpoint !== undefined && endpoint !== '' ? { endpoint } : {}),
      ...(pathStyle !== undefined ? { forcePathStyle: pathStyle } : {}),
      ...(accessKeyId !== undefined && secretAccessKey !== undefined ? { credentials: { accessKeyId, secretAccessKey } } : {}),
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      // Retries are ours (bounded, and a file body is reopened for each attempt).
      maxAttempts: 1,
      // The SDK's own warnings (e.g. on a failed streaming upload, which is retried here) go to debug.
      logger: sdkLogger(this.logger),
      requestHandler: { connectionTimeout: this.connectionTimeoutMs },
    });
    this.logger?.info(`S3 remote storage manager: bucket ${bucket}, region ${region}${endpoint ? `, endpoint ${endpoint}` : ''}, key prefix ${JSON.stringify(this.keyPrefix)}`);
  }

  /** The key of one object of the segment (Aiven's ObjectKeyFactory.key). */
  objectKey(m: RemoteLogSegmentMetadata, suffix: Suffix): string {
    const tp = m.remoteLogSegmentId.topicIdPartition;
    return `${this.keyPrefix}${tp.topic}-${tp.topicId}/${tp.partition}/${filenamePrefixFromOffset(m.startOffset)}-${m.remoteLogSegmentId.id}.${S3_OBJECT_SUFFIXES[suffix]}`;
  }

  async copyLogSegmentData(metadata: RemoteLogSegmentMetadata, data: LogSegmentData): Promise<Buffer | null> {
    const s3 = this.s3();
    const uploads: [Suffix, string | Buffer][] = [
      ['LOG', data.logSegment],
      ['OFFSET_INDEX', data.offsetIndex],
      ['TIME_INDEX', data.timeIndex],
      ...(data.transactionIndex !== null ? [['TXN_INDEX', data.transactionIndex] as [Suffix, string]] : []),
      ['PRODUCER_SNAPSHOT', data.producerSnapshotIndex],
      ['LEADER_EPOCH_CHECKPOINT', data.leaderEpochIndex],
    ];
    const results = await Promise.allSettled(uploads.map(([suffix, from]) => this.put(s3, this.objectKey(metadata, suffix), from)));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed !== undefined) {
      try {
        await this.deleteLogSegmentData(metadata);
      } catch (e) {
        this.logger?.warn(`could not remove the partial copy of remote log segment ${metadata.remoteLogSegmentId.id}`, { err: e });
      }
      const e = failed.reason as unknown;
      if (e instanceof RemoteStorageError) throw e;
      throw new RemoteStorageError(`copying remote log segment ${metadata.remoteLogSegmentId.id}: ${describeError(e)}`, { cause: e });
    }
    return null;
  }

  async fetchLogSegment(metadata: RemoteLogSegmentMetadata, startPosition: number, endPosition?: number): Promise<Buffer> {
    checkRange(startPosition, endPosition);
    const s3 = this.s3();
    const { GetObjectCommand } = loadSdk();
    const key = this.objectKey(metadata, 'LOG');
    const range = `bytes=${startPosition}-${endPosition ?? ''}`;
    return this.request(`fetching ${key} ${range}`, async (signal) => {
      try {
        const res = await s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: key, Range: range }), { abortSignal: signal });
        const body = await bodyBuffer(res.Body);
        // HTTP lets a server answer more than the range (the whole object without Content-Range,
        // or a wider range: s3rver reads bytes=0-0 as 0-): keep exactly what was asked for.
        const cr = res.ContentRange !== undefined ? /^bytes (\d+)-\d+\/(?:\d+|\*)$/.exec(res.ContentRange) : null;
        const bodyStart = cr !== null ? Number(cr[1]) : 0;
        const from = startPosition - bodyStart;
        if (from < 0) throw new RemoteStorageError(`fetching ${key} ${range}: the store answered ${res.ContentRange}`);
        return body.subarray(from, endPosition === undefined ? body.length : from + (endPosition - startPosition + 1));
      } catch (e) {
        // A start past the end of the object: nothing there (the contract clamps to the size).
        if (statusOf(e) === 416 || (e as SdkError | null)?.name === 'InvalidRange') return Buffer.alloc(0);
        throw e;
      }
    });
  }

  async fetchIndex(metadata: RemoteLogSegmentMetadata, indexType: IndexType): Promise<Buffer> {
    const suffix = INDEX_SUFFIX[indexType];
    if (suffix === undefined) throw new RemoteStorageError(`unknown index type ${String(indexType)}`);
    const s3 = this.s3();
    const { GetObjectCommand } = loadSdk();
    const key = this.objectKey(metadata, suffix);
    return this.request(`fetching the ${indexType} index ${key}`, async (signal) => {
      const res = await s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }), { abortSignal: signal });
      return bodyBuffer(res.Body);
    });
  }

  async deleteLogSegmentData(metadata: RemoteLogSegmentMetadata): Promise<void> {
    const s3 = this.s3();
    const { DeleteObjectsCommand } = loadSdk();
    const keys = (Object.keys(S3_OBJECT_SUFFIXES) as Suffix[]).map((s) => this.objectKey(metadata, s));
    const res = await this.request(`deleting remote log segment ${metadata.remoteLogSegmentId.id}`, (signal) =>
      s3.send(new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: keys.map((Key) => ({ Key })), Quiet: true } }), { abortSignal: signal }),
    );
    const errors = (res.Errors ?? []).filter((e) => e.Code !== 'NoSuchKey');
    if (errors.length > 0) {
      throw new RemoteStorageError(`deleting remote log segment ${metadata.remoteLogSegmentId.id}: ${errors.map((e) => `${e.Key}: ${e.Code} ${e.Message ?? ''}`.trim()).join('; ')}`);
    }
  }

  async close(): Promise<void> {
    this.client?.destroy();
  }

  private s3(): S3Sdk.S3Client {
    if (this.client === undefined) throw new RemoteStorageError('S3RemoteStorageManager is not configured: configure() must be called first');
    return this.client;
  }

  private async put(s3: S3Sdk.S3Client, key: string, from: string | Buffer): Promise<void> {
    const { PutObjectCommand } = loadSdk();
    const size = typeof from === 'string' ? (await statOrThrow(from)).size : from.length;
    await this.request(`uploading ${key}`, async (signal) => {
      // A file is streamed, and reopened for every attempt (a consumed stream cannot be resent).
      // The file can disappear meanwhile (retention deleted the local segment during the copy):
      // the stream's error is kept and reported as this upload's failure, never left unhandled.
      const stream = typeof from === 'string' ? fs.createReadStream(from) : undefined;
      let streamError: Error | undefined;
      // The upload stops as soon as its file fails (the SDK would otherwise wait for the body until the attempt's deadline).
      const upload = new AbortController();
      const onAbort = (): void => upload.abort();
      signal.addEventListener('abort', onAbort, { once: true });
      stream?.on('error', (err) => {
        streamError = err;
        upload.abort();
      });
      try {
        await s3.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: stream ?? from, ContentLength: size }), { abortSignal: upload.signal });
      } catch (e) {
        if (streamError !== undefined) throw new RemoteStorageError(`reading ${from as string} for ${key}: ${streamError.message}`, { cause: streamError });
        throw e;
      } finally {
        signal.removeEventListener('abort', onAbort);
        stream?.destroy();
      }
      if (streamError !== undefined) throw new RemoteStorageError(`reading ${from as string} for ${key}: ${streamError.message}`, { cause: streamError });
    });
  }

  /** Runs one S3 call with a deadline per attempt and bounded retries of transient failures; maps the final error. */
  private async request<T>(what: string, call: (signal: AbortSignal) => Promise<T>): Promise<T> {
    let delay = this.backoffMs;
    for (let attempt = 1; ; attempt++) {
      const ac = new AbortController();
      const timer = setTimeout(() => ac.abort(), this.attemptTimeoutMs);
      try {
        return await call(ac.signal);
      } catch (e) {
        if (e instanceof RemoteStorageError) throw e;
        if (isNotFound(e)) throw new RemoteResourceNotFoundError(`${what}: ${describeError(e)}`, { cause: e });
        const transient = isTransient(e) || ac.signal.aborted;
        if (!transient || attempt >= this.maxAttempts) {
          throw new RemoteStorageError(`${what} failed${attempt > 1 ? ` after ${attempt} attempts` : ''}: ${ac.signal.aborted ? `no answer within ${this.attemptTimeoutMs} ms` : describeError(e)}`, { cause: e });
        }
        this.logger?.debug(`${what}: attempt ${attempt} failed (${describeError(e)}), retrying in ~${delay} ms`);
        const jittered = Math.round(delay * (0.8 + Math.random() * 0.4));
        await new Promise<void>((resolve) => setTimeout(resolve, jittered));
        delay = Math.min(delay * 2, this.backoffMaxMs);
      } finally {
        clearTimeout(timer);
      }
    }
  }
}

function sdkLogger(logger: Logger | undefined): { debug(...a: unknown[]): void; info(...a: unknown[]): void; warn(...a: unknown[]): void; error(...a: unknown[]): void } {
  const line = (a: unknown[]) => a.map((x) => (typeof x === 'string' ? x : x instanceof Error ? x.message : JSON.stringify(x))).join(' ');
  const debug = (...a: unknown[]) => {
    if (logger?.enabled('debug')) logger.debug(`aws-sdk: ${line(a)}`);
  };
  return { debug, info: debug, warn: debug, error: debug };
}

async function statOrThrow(file: string): Promise<fs.Stats> {
  try {
    return await fsp.stat(file);
  } catch (e) {
    throw new RemoteStorageError(`cannot read ${file}: ${(e as Error).message}`, { cause: e });
  }
}

async function bodyBuffer(body: unknown): Promise<Buffer> {
  const b = body as { transformToByteArray?: () => Promise<Uint8Array> } | undefined;
  if (b?.transformToByteArray === undefined) return Buffer.alloc(0);
  const u8 = await b.transformToByteArray();
  return Buffer.from(u8.buffer, u8.byteOffset, u8.byteLength);
}
