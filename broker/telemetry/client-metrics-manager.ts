/**
 * The broker's client telemetry (KIP-714), Kafka's ClientMetricsManager: answers
 * GetTelemetrySubscriptions and PushTelemetry with Kafka's rules, and keeps the last metrics each
 * client instance pushed.
 *
 * Subscriptions are the CLIENT_METRICS config resources of this broker's metadata image; they are
 * re-read whenever the image's clientMetricsConfigVersion moves, and every change bumps the
 * subscription version, so each instance is re-evaluated on its next request.
 *
 * Per-instance state (ClientMetricsInstance) lives in a cache that is bounded and expires:
 * - at most `cacheMaxSize` instances (Kafka's CACHE_MAX_SIZE, 16384), least recently used evicted
 *   first, with a warning at most every 5 minutes;
 * - an instance is forgotten max(`cacheExpiryMs` (60 s), 3 push intervals) after its last request,
 *   or when the connection that created it closes (Kafka's disconnect listener);
 * - a pushed payload is at most telemetry.max.bytes compressed (else TELEMETRY_TOO_LARGE) and at
 *   most DECOMPRESSED_SIZE_MULTIPLE times that decompressed (else INVALID_RECORD);
 * - the kept payloads together are at most maxRetainedBytes (64 MiB, or one largest payload if
 *   that is more): past it, the least recently used instances' last pushes are dropped (their
 *   instances stay), with a warning at most every 5 minutes.
 * Kafka hands the (compressed) payload to a receiver plugin; krill's receiver is this cache: it
 * decompresses the payload with the named codec and keeps it; a payload that does not decompress
 * is INVALID_RECORD, as Kafka answers a plugin failure.
 *
 * Reading what clients pushed (for the broker's metrics work): `lastPush(clientInstanceId)` and
 * `lastPushes()`, copies of the current, unexpired state; `instanceCount`.
 */
import { ErrorCode, KafkaError } from '../../protocol/errors';
import { randomUuid, ZERO_UUID, METADATA_TOPIC_ID } from '../../protocol/primitives/uuid';
import { CompressionType } from '../../protocol/records/record-batch';
import { DECOMPRESSED_SIZE_MULTIPLE, decompress } from '../../protocol/records/compression';
import type { Logger } from '../../common/logger';
import type { Time } from '../../common/time';
import { ALL_SUBSCRIBED_METRICS, DEFAULT_INTERVAL_MS, parseSubscription, type ClientMetricsSubscription } from '../../config/client-metrics-configs';
import { ClientMetricsInstance, matchesClient, type ClientInstanceMetadata, type ClientTelemetryPush } from './client-metrics-instance';
import { computeSubscriptionId } from './subscription-id';

/** Kafka's order of preference: zstd, lz4, gzip, snappy. */
export const SUPPORTED_COMPRESSION_TYPES: readonly number[] = [CompressionType.ZSTD, CompressionType.LZ4, CompressionType.GZIP, CompressionType.SNAPPY];
export const CACHE_MAX_SIZE = 16384;
export const DEFAULT_CACHE_EXPIRY_MS = 60 * 1000;
/** The most decompressed payload bytes kept over all client instances, unless 32 x telemetry.max.bytes is more. */
export const DEFAULT_MAX_RETAINED_BYTES = 64 * 1024 * 1024;
const CACHE_ERROR_LOG_INTERVAL_MS = 5 * 60 * 1000;
const SWEEP_INTERVAL_MS = 1000;
/** Kafka's Uuid.RESERVED: never a client instance id. */
const RESERVED_UUIDS = new Set([ZERO_UUID, METADATA_TOPIC_ID]);

/** Who is asking: the request's client id and connection. */
export interface TelemetryRequester {
  clientId: string | null;
  connectionId: number;
  softwareName: string | null;
  softwareVersion: string | null;
  address: string;
  port: number;
}

export interface ClientMetricsSource {
  clientMetricsConfigs(): Map<string, Map<string, string>>;
  readonly clientMetricsConfigVersion: number;
}

export interface ClientMetricsManagerOptions {
  source: ClientMetricsSource;
  /** telemetry.max.bytes */
  telemetryMaxBytes: number;
  time: Time;
  logger: Logger;
  cacheMaxSize?: number;
  cacheExpiryMs?: number;
  /** Most payload bytes kept over all instances (krill's; Kafka keeps none): DEFAULT_MAX_RETAINED_BYTES. */
  maxRetainedBytes?: number;
}

export interface GetTelemetrySubscriptionsResult {
  errorCode: number;
  errorMessage: string | null;
  clientInstanceId: string;
  subscriptionId: number;
  acceptedCompressionTypes: number[];
  pushIntervalMs: number;
  telemetryMaxBytes: number;
  deltaTemporality: boolean;
  requestedMetrics: string[];
}

export class ClientMetricsManager {
  private readonly cache = new Map<string, ClientMetricsInstance>();
  private readonly connectionIds = new Map<number, string>();
  /** Which instance each cached instance's creating connection is, for the disconnect cleanup. */
  private readonly instanceConnection = new Map<string, number>();
  private nextSweepMs = Number.NEGATIVE_INFINITY;
  private subscriptionMap = new Map<string, ClientMetricsSubscription>();
  private seenConfigVersion = -1;
  private subscriptionUpdateVersion = 0;
  private lastCacheErrorLogMs = Number.NEGATIVE_INFINITY;
  private readonly cacheMaxSize: number;
  private readonly maxRetainedBytes: number;
  /** Bytes of every instance's lastPush.payload. */
  private retainedBytes = 0;
  private lastRetainedLogMs = Number.NEGATIVE_INFINITY;
  private readonly cacheExpiryMs: number;

  constructor(private readonly opts: ClientMetricsManagerOptions) {
    this.cacheMaxSize = opts.cacheMaxSize ?? CACHE_MAX_SIZE;
    this.cacheExpiryMs = opts.cacheExpiryMs ?? DEFAULT_CACHE_EXPIRY_MS;
    // Always room for one push of the largest size accepted.
    this.maxRetainedBytes = Math.max(opts.maxRetainedBytes ?? DEFAULT_MAX_RETAINED_BYTES, opts.telemetryMaxBytes * DECOMPRESSED_SIZE_MULTIPLE);
  }

  get telemetryMaxBytes(): number {
    return this.opts.telemetryMaxBytes;
  }

  /** The names of the current subscriptions (ListClientMetricsResources). */
  listClientMetricsResources(): string[] {
    return [...this.subscriptions().keys()];
  }

  /** GetTelemetrySubscriptions: a zero (or absent) id gets a fresh one. */
  getTelemetrySubscriptions(requestedId: string, who: TelemetryRequester): GetTelemetrySubscriptionsResult {
    const now = this.opts.time.milliseconds();
    const clientInstanceId = requestedId === ZERO_UUID ? this.newClientInstanceId() : requestedId;
    const instance = this.clientInstance(clientInstanceId, who, now);
    const base = {
      clientInstanceId: ZERO_UUID,
      subscriptionId: 0,
      acceptedCompressionTypes: [] as number[],
      pushIntervalMs: 0,
      telemetryMaxBytes: 0,
      deltaTemporality: false,
      requestedMetrics: [] as string[],
    };
    // Kafka's condition (lastKnownError != A || != B) is always true: every early request is throttled.
    if (!instance.maybeUpdateGetRequestTimestamp(now)) {
      return {
        ...base,
        errorCode: ErrorCode.THROTTLING_QUOTA_EXCEEDED,
        errorMessage: `Request from the client [${requestedId}] arrived before the next push interval time`,
      };
    }
    instance.lastKnownError = ErrorCode.NONE;
    return {
      errorCode: ErrorCode.NONE,
      errorMessage: null,
      clientInstanceId,
      subscriptionId: instance.subscriptionId,
      acceptedCompressionTypes: [...SUPPORTED_COMPRESSION_TYPES],
      pushIntervalMs: instance.pushIntervalMs,
      telemetryMaxBytes: this.opts.telemetryMaxBytes,
      deltaTemporality: true,
      requestedMetrics: [...instance.metrics],
    };
  }

  /** PushTelemetry: validated in Kafka's order; an accepted payload becomes the instance's last push. */
  pushTelemetry(
    req: { clientInstanceId: string; subscriptionId: number; terminating: boolean; compressionType: number; metrics: Buffer | null },
    who: TelemetryRequester,
  ): { errorCode: number; errorMessage: string | null } {
    const id = req.clientInstanceId;
    if (RESERVED_UUIDS.has(id)) {
      const errorMessage = `Invalid request from the client [${id}], invalid client instance id`;
      this.opts.logger.info(`refused a telemetry push (client id ${who.clientId ?? 'null'}, ${who.address}:${who.port}): ${errorMessage}`);
      return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage };
    }
    const now = this.opts.time.milliseconds();
    const instance = this.clientInstance(id, who, now);
    try {
      this.validatePush(req, instance, now);
    } catch (err) {
      const e = err as KafkaError;
      // Throttling and a stale subscription id are the protocol's normal flow; the rest is bad input.
      const routine = e.code === ErrorCode.THROTTLING_QUOTA_EXCEEDED || e.code === ErrorCode.UNKNOWN_SUBSCRIPTION_ID;
      const line = `refused a telemetry push from client instance ${id} (client id ${who.clientId ?? 'null'}, ${who.address}:${who.port}): ${e.message}`;
      if (routine) this.opts.logger.debug(line);
      else this.opts.logger.info(line);
      instance.lastKnownError = e.code;
      instance.terminating = req.terminating;
      return { errorCode: e.code, errorMessage: e.message };
    }
    instance.terminating = req.terminating;
    const metrics = req.metrics;
    if (metrics && metrics.length > 0) {
      let payload: Buffer;
      try {
        // Copied: the request buffer is not ours to keep.
        payload = Buffer.from(decompress(req.compressionType, metrics, { maxOutputLength: this.opts.telemetryMaxBytes * DECOMPRESSED_SIZE_MULTIPLE }));
      } catch (err) {
        instance.lastKnownError = ErrorCode.INVALID_RECORD;
        this.opts.logger.warn(`telemetry push from client instance ${id} (client id ${who.clientId ?? 'null'}) could not be read: ${(err as Error).message}`);
        return { errorCode: ErrorCode.INVALID_RECORD, errorMessage: null };
      }
      const m = instance.metadata;
      this.retainedBytes += payload.length - (instance.lastPush?.payload.length ?? 0);
      instance.lastPush = {
        clientInstanceId: id,
        clientId: m.clientId,
        clientSoftwareName: m.clientSoftwareName,
        clientSoftwareVersion: m.clientSoftwareVersion,
        clientSourceAddress: m.clientSourceAddress,
        clientSourcePort: m.clientSourcePort,
        subscriptionId: req.subscriptionId,
        receivedAtMs: now,
        compressionType: req.compressionType,
        terminating: req.terminating,
        payload,
      };
      this.enforceRetainedBytes(instance);
    }
    instance.lastKnownError = ErrorCode.NONE;
    return { errorCode: ErrorCode.NONE, errorMessage: null };
  }

  /** The last metrics this client instance pushed, while the broker still knows the instance. */
  lastPush(clientInstanceId: string): ClientTelemetryPush | undefined {
    const now = this.opts.time.milliseconds();
    this.expire(now);
    const instance = this.cache.get(clientInstanceId);
    return instance && instance.expiresAtMs > now && instance.lastPush ? { ...instance.lastPush } : undefined;
  }

  /** The last push of every client instance the broker knows that has pushed metrics. */
  lastPushes(): ClientTelemetryPush[] {
    const now = this.opts.time.milliseconds();
    this.expire(now);
    const out: ClientTelemetryPush[] = [];
    for (const i of this.cache.values()) if (i.expiresAtMs > now && i.lastPush) out.push({ ...i.lastPush });
    return out;
  }

  /** Client instances currently known (Kafka's client-metrics instance-count). */
  get instanceCount(): number {
    const now = this.opts.time.milliseconds();
    let n = 0;
    for (const i of this.cache.values()) if (i.expiresAtMs > now) n++;
    return n;
  }

  close(): void {
    this.retainedBytes = 0;
    this.cache.clear();
    this.connectionIds.clear();
    this.instanceConnection.clear();
  }

  private validatePush(
    req: { clientInstanceId: string; subscriptionId: number; terminating: boolean; compressionType: number; metrics: Buffer | null },
    instance: ClientMetricsInstance,
    now: number,
  ): void {
    const id = req.clientInstanceId;
    if (instance.terminating) {
      throw new KafkaError(ErrorCode.INVALID_REQUEST, `Client [${id}] sent the previous request with state terminating to TRUE, can not accept any requests after that`);
    }
    if (!instance.maybeUpdatePushRequestTimestamp(now) && !req.terminating) {
      throw new KafkaError(ErrorCode.THROTTLING_QUOTA_EXCEEDED, `Request from the client [${id}] arrived before the next push interval time`);
    }
    if (req.subscriptionId !== instance.subscriptionId) {
      throw new KafkaError(ErrorCode.UNKNOWN_SUBSCRIPTION_ID, `Unknown client subscription id for the client [${id}]`);
    }
    if (!Number.isInteger(req.compressionType) || req.compressionType < CompressionType.NONE || req.compressionType > CompressionType.ZSTD) {
      throw new KafkaError(ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, `Unknown compression type [${req.compressionType}] is received in telemetry request from [${id}]`);
    }
    if (req.metrics && req.metrics.length > this.opts.telemetryMaxBytes) {
      throw new KafkaError(ErrorCode.TELEMETRY_TOO_LARGE, `Telemetry request from [${id}] is larger than the maximum allowed size [${this.opts.telemetryMaxBytes}]`);
    }
  }

  /** The subscriptions of the current image (rebuilt when its CLIENT_METRICS configs changed). */
  private subscriptions(): Map<string, ClientMetricsSubscription> {
    const version = this.opts.source.clientMetricsConfigVersion;
    if (version === this.seenConfigVersion) return this.subscriptionMap;
    this.seenConfigVersion = version;
    const next = new Map<string, ClientMetricsSubscription>();
    for (const [name, configs] of this.opts.source.clientMetricsConfigs()) {
      try {
        next.set(name, parseSubscription(name, configs));
      } catch (err) {
        this.opts.logger.warn(`ignoring client metrics subscription ${name}: ${(err as Error).message}`);
      }
    }
    this.subscriptionMap = next;
    this.subscriptionUpdateVersion++;
    this.opts.logger.info(`client metrics subscriptions: ${next.size === 0 ? 'none' : [...next.keys()].join(', ')}`);
    return next;
  }

  private newClientInstanceId(): string {
    let id = randomUuid();
    while (this.cache.has(id) || RESERVED_UUIDS.has(id) || id.startsWith('-')) id = randomUuid();
    return id;
  }

  /** The cached instance (re-evaluated if the subscriptions changed since), or a new one; its expiry is pushed back. */
  private clientInstance(id: string, who: TelemetryRequester, now: number): ClientMetricsInstance {
    this.expire(now);
    this.subscriptions();
    let instance = this.cache.get(id);
    if (instance && instance.expiresAtMs <= now) {
      this.remove(id);
      instance = undefined;
    }
    if (!instance) {
      instance = this.evaluate({
        clientInstanceId: id,
        clientId: who.clientId,
        clientSoftwareName: who.softwareName,
        clientSoftwareVersion: who.softwareVersion,
        clientSourceAddress: who.address,
        clientSourcePort: who.port,
      });
      this.put(id, instance, who);
    } else if (instance.subscriptionVersion < this.subscriptionUpdateVersion) {
      instance = this.evaluate(instance.metadata, instance);
      this.put(id, instance, who);
    } else {
      // Most recently used last.
      this.cache.delete(id);
      this.cache.set(id, instance);
    }
    instance.expiresAtMs = now + Math.max(this.cacheExpiryMs, instance.pushIntervalMs * 3);
    return instance;
  }

  /** ClientMetricsManager.createClientInstance: the union of the matching subscriptions. */
  private evaluate(metadata: ClientInstanceMetadata, previous?: ClientMetricsInstance): ClientMetricsInstance {
    let pushIntervalMs = DEFAULT_INTERVAL_MS;
    const metrics: string[] = [];
    let all = false;
    for (const s of [...this.subscriptionMap.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      if (!matchesClient(metadata, s.match)) continue;
      if (s.metrics.has(ALL_SUBSCRIBED_METRICS)) all = true;
      for (const m of s.metrics) if (!metrics.includes(m)) metrics.push(m);
      pushIntervalMs = Math.min(pushIntervalMs, s.intervalMs);
    }
    const subscribed = all ? [ALL_SUBSCRIBED_METRICS] : metrics;
    const subscriptionId = computeSubscriptionId(subscribed, pushIntervalMs, metadata.clientInstanceId);
    const instance = new ClientMetricsInstance(metadata, subscriptionId, this.subscriptionUpdateVersion, subscribed, pushIntervalMs);
    // A re-evaluated instance keeps what the client pushed last.
    if (previous) instance.lastPush = previous.lastPush;
    return instance;
  }

  private put(id: string, instance: ClientMetricsInstance, who: TelemetryRequester): void {
    if (this.cache.has(id)) this.cache.delete(id);
    else if (this.cache.size >= this.cacheMaxSize) {
      const oldest = this.cache.keys().next().value as string;
      this.remove(oldest);
      const now = this.opts.time.milliseconds();
      if (now - this.lastCacheErrorLogMs > CACHE_ERROR_LOG_INTERVAL_MS) {
        this.lastCacheErrorLogMs = now;
        this.opts.logger.warn(`the client metrics instance cache is full (${this.cacheMaxSize} instances): evicting the least recently used ones`);
      }
    }
    this.cache.set(id, instance);
    const previousConnection = this.instanceConnection.get(id);
    if (previousConnection !== undefined && this.connectionIds.get(previousConnection) === id) this.connectionIds.delete(previousConnection);
    this.connectionIds.set(who.connectionId, id);
    this.instanceConnection.set(id, who.connectionId);
  }

  /** Kafka's ConnectionDisconnectListener: the instance the connection created is forgotten. */
  connectionClosed(connectionId: number): void {
    const id = this.connectionIds.get(connectionId);
    if (id !== undefined) this.remove(id);
  }

  private remove(id: string): void {
    this.retainedBytes -= this.cache.get(id)?.lastPush?.payload.length ?? 0;
    this.cache.delete(id);
    const conn = this.instanceConnection.get(id);
    this.instanceConnection.delete(id);
    if (conn !== undefined && this.connectionIds.get(conn) === id) this.connectionIds.delete(conn);
  }

  /**
   * Keeps the payloads held under maxRetainedBytes: the least recently used instances' last
   * pushes are dropped first (never `keep`'s, which the budget always has room for).
   */
  private enforceRetainedBytes(keep: ClientMetricsInstance): void {
    if (this.retainedBytes <= this.maxRetainedBytes) return;
    for (const instance of this.cache.values()) {
      if (this.retainedBytes <= this.maxRetainedBytes) break;
      if (instance === keep || !instance.lastPush) continue;
      this.retainedBytes -= instance.lastPush.payload.length;
      instance.lastPush = null;
    }
    const now = this.opts.time.milliseconds();
    if (now - this.lastRetainedLogMs > CACHE_ERROR_LOG_INTERVAL_MS) {
      this.lastRetainedLogMs = now;
      this.opts.logger.warn(`client telemetry payloads reached ${this.maxRetainedBytes} bytes: dropping the least recently used clients' last pushes`);
    }
  }

  /** Drops expired instances; a full sweep at most every SWEEP_INTERVAL_MS (readers also check each expiry). */
  private expire(now: number): void {
    if (now < this.nextSweepMs) return;
    this.nextSweepMs = now + SWEEP_INTERVAL_MS;
    for (const [id, instance] of this.cache) if (instance.expiresAtMs <= now) this.remove(id);
  }
}
