import * as zlib from 'node:zlib';
import { ErrorCode } from '../../protocol/errors';
import { ZERO_UUID, isUuid, randomUuid } from '../../protocol/primitives/uuid';
import { CapturingLogger, MockTime } from '../../common/testing/mock-time';
import { ClientMetricsManager, SUPPORTED_COMPRESSION_TYPES, type TelemetryRequester } from './client-metrics-manager';
import { computeSubscriptionId } from './subscription-id';

class Source {
  private configs = new Map<string, Map<string, string>>();
  clientMetricsConfigVersion = 0;
  set(name: string, o: Record<string, string> | null): void {
    if (o === null) this.configs.delete(name);
    else this.configs.set(name, new Map(Object.entries(o)));
    this.clientMetricsConfigVersion++;
  }
  clientMetricsConfigs(): Map<string, Map<string, string>> {
    return new Map(this.configs);
  }
}

const who = (over: Partial<TelemetryRequester> = {}): TelemetryRequester => ({
  clientId: 'app-1',
  connectionId: 1,
  softwareName: 'librdkafka',
  softwareVersion: '2.12.0',
  address: '127.0.0.1',
  port: 50000,
  ...over,
});

function setup(opts: { maxBytes?: number; cacheMaxSize?: number; maxRetainedBytes?: number } = {}) {
  const time = new MockTime();
  const source = new Source();
  const logger = new CapturingLogger();
  const manager = new ClientMetricsManager({ source, telemetryMaxBytes: opts.maxBytes ?? 1024, time, logger, cacheMaxSize: opts.cacheMaxSize, maxRetainedBytes: opts.maxRetainedBytes });
  return { time, source, logger, manager };
}

describe('ClientMetricsManager (KIP-714)', () => {
  test('a zero id gets a new one; no subscription: nothing requested at the default interval', () => {
    const { manager } = setup();
    const r = manager.getTelemetrySubscriptions(ZERO_UUID, who());
    expect(r.errorCode).toBe(ErrorCode.NONE);
    expect(isUuid(r.clientInstanceId)).toBe(true);
    expect(r.clientInstanceId).not.toBe(ZERO_UUID);
    expect(r).toMatchObject({ requestedMetrics: [], pushIntervalMs: 300_000, telemetryMaxBytes: 1024, deltaTemporality: true, acceptedCompressionTypes: [...SUPPORTED_COMPRESSION_TYPES] });
    expect(r.subscriptionId).toBe(computeSubscriptionId([], 300_000, r.clientInstanceId));
  });

  test('matching subscriptions: union of metrics, smallest interval; "*" stands alone; non-matching ignored', () => {
    const { manager, source } = setup();
    source.set('producers', { metrics: 'org.apache.kafka.producer.', 'interval.ms': '2000', match: 'client_id=app-.*' });
    source.set('librdkafka', { metrics: 'org.apache.kafka.client.', 'interval.ms': '1000', match: 'client_software_name=librdkafka,client_source_address=127\\.0\\.0\\.1' });
    source.set('others', { metrics: '*', match: 'client_id=other' });
    const r = manager.getTelemetrySubscriptions(ZERO_UUID, who());
    expect(r.requestedMetrics.sort()).toEqual(['org.apache.kafka.client.', 'org.apache.kafka.producer.']);
    expect(r.pushIntervalMs).toBe(1000);
    const o = manager.getTelemetrySubscriptions(ZERO_UUID, who({ clientId: 'other', softwareName: 'apache-kafka-java', connectionId: 2 }));
    expect(o.requestedMetrics).toEqual(['*']);
    expect(o.pushIntervalMs).toBe(300_000);
    expect(manager.listClientMetricsResources().sort()).toEqual(['librdkafka', 'others', 'producers']);
  });

  test('a get before the push interval is throttled; a subscription change is re-evaluated on the next due get', () => {
    const { manager, source, time } = setup();
    source.set('s', { metrics: '*', 'interval.ms': '1000' });
    const first = manager.getTelemetrySubscriptions(ZERO_UUID, who());
    const id = first.clientInstanceId;
    const early = manager.getTelemetrySubscriptions(id, who());
    expect(early.errorCode).toBe(ErrorCode.THROTTLING_QUOTA_EXCEEDED);
    expect(early.clientInstanceId).toBe(ZERO_UUID);
    time.sleep(1000);
    source.set('s', { metrics: 'org.apache.kafka.', 'interval.ms': '500' });
    const later = manager.getTelemetrySubscriptions(id, who());
    expect(later).toMatchObject({ errorCode: ErrorCode.NONE, clientInstanceId: id, requestedMetrics: ['org.apache.kafka.'], pushIntervalMs: 500 });
    expect(later.subscriptionId).not.toBe(first.subscriptionId);
  });

  test('pushes: accepted right after a get, throttled before the interval, then kept decompressed with who sent them', () => {
    const { manager, source, time } = setup();
    source.set('s', { metrics: '*', 'interval.ms': '1000' });
    const sub = manager.getTelemetrySubscriptions(ZERO_UUID, who());
    const id = sub.clientInstanceId;
    const payload = Buffer.from('otlp-bytes'.repeat(10));
    const push = (over: Partial<{ subscriptionId: number; terminating: boolean; compressionType: number; metrics: Buffer }> = {}) =>
      manager.pushTelemetry({ clientInstanceId: id, subscriptionId: sub.subscriptionId, terminating: false, compressionType: 1, metrics: zlib.gzipSync(payload), ...over }, who());
    expect(push()).toEqual({ errorCode: ErrorCode.NONE, errorMessage: null });
    const kept = manager.lastPush(id)!;
    expect(kept).toMatchObject({ clientInstanceId: id, clientId: 'app-1', clientSoftwareName: 'librdkafka', clientSoftwareVersion: '2.12.0', clientSourceAddress: '127.0.0.1', subscriptionId: sub.subscriptionId, compressionType: 1, terminating: false, receivedAtMs: time.now });
    expect(kept.payload.equals(payload)).toBe(true);
    expect(push().errorCode).toBe(ErrorCode.THROTTLING_QUOTA_EXCEEDED);
    time.sleep(1000);
    expect(push({ metrics: Buffer.from('plain'), compressionType: 0 }).errorCode).toBe(ErrorCode.NONE);
    expect(manager.lastPush(id)!.payload.toString()).toBe('plain');
    expect(manager.lastPushes().map((p) => p.clientInstanceId)).toEqual([id]);
  });

  test("refusals in Kafka's order: reserved id, unknown subscription, compression, size, undecodable payload", () => {
    const { manager, source, time, logger } = setup({ maxBytes: 64 });
    source.set('s', { metrics: '*', 'interval.ms': '100' });
    const sub = manager.getTelemetrySubscriptions(ZERO_UUID, who());
    const id = sub.clientInstanceId;
    const base = { clientInstanceId: id, subscriptionId: sub.subscriptionId, terminating: false, compressionType: 0, metrics: Buffer.from('x') };
    expect(manager.pushTelemetry({ ...base, clientInstanceId: ZERO_UUID }, who()).errorCode).toBe(ErrorCode.INVALID_REQUEST);
    const step = () => time.sleep(100);
    expect(manager.pushTelemetry({ ...base, subscriptionId: sub.subscriptionId + 1 }, who()).errorCode).toBe(ErrorCode.UNKNOWN_SUBSCRIPTION_ID);
    step();
    expect(manager.pushTelemetry({ ...base, compressionType: 5 }, who()).errorCode).toBe(ErrorCode.UNSUPPORTED_COMPRESSION_TYPE);
    step();
    expect(manager.pushTelemetry({ ...base, metrics: Buffer.alloc(65) }, who()).errorCode).toBe(ErrorCode.TELEMETRY_TOO_LARGE);
    step();
    expect(manager.pushTelemetry({ ...base, compressionType: 1, metrics: Buffer.from('not gzip') }, who()).errorCode).toBe(ErrorCode.INVALID_RECORD);
    expect(manager.lastPush(id)).toBeUndefined();
    // Bad input leaves a line saying what and who; the undecodable payload a warning.
    expect(logger.lines.filter((l) => l.level === 'info' && /refused a telemetry push/.test(l.msg)).map((l) => l.msg.replace(/.*: /, ''))).toEqual([
      `Invalid request from the client [${ZERO_UUID}], invalid client instance id`,
      `Unknown compression type [5] is received in telemetry request from [${id}]`,
      `Telemetry request from [${id}] is larger than the maximum allowed size [64]`,
    ]);
    expect(logger.lines.filter((l) => l.level === 'warn').map((l) => l.msg)).toEqual([expect.stringMatching(/could not be read: gzip/)]);
  });

  test('a decompression bomb within telemetry.max.bytes is INVALID_RECORD', () => {
    const { manager, source } = setup({ maxBytes: 4096 });
    source.set('s', { metrics: '*', 'interval.ms': '100' });
    const sub = manager.getTelemetrySubscriptions(ZERO_UUID, who());
    const bomb = zlib.gzipSync(Buffer.alloc(1 << 20), { level: 9 });
    expect(bomb.length).toBeLessThanOrEqual(4096);
    const r = manager.pushTelemetry({ clientInstanceId: sub.clientInstanceId, subscriptionId: sub.subscriptionId, terminating: false, compressionType: 1, metrics: bomb }, who());
    expect(r.errorCode).toBe(ErrorCode.INVALID_RECORD);
  });

  test('a terminating push is accepted before the interval; nothing is accepted after it', () => {
    const { manager, source, time } = setup();
    source.set('s', { metrics: '*', 'interval.ms': '1000' });
    const sub = manager.getTelemetrySubscriptions(ZERO_UUID, who());
    const req = { clientInstanceId: sub.clientInstanceId, subscriptionId: sub.subscriptionId, terminating: false, compressionType: 0, metrics: Buffer.from('a') };
    expect(manager.pushTelemetry(req, who()).errorCode).toBe(ErrorCode.NONE);
    expect(manager.pushTelemetry({ ...req, terminating: true, metrics: Buffer.from('last') }, who()).errorCode).toBe(ErrorCode.NONE);
    expect(manager.lastPush(sub.clientInstanceId)).toMatchObject({ terminating: true });
    time.sleep(5000);
    expect(manager.pushTelemetry(req, who()).errorCode).toBe(ErrorCode.INVALID_REQUEST);
  });

  test('instances expire after max(60 s, 3 intervals), are dropped with their connection, and the cache is bounded', () => {
    const { manager, source, time, logger } = setup({ cacheMaxSize: 3 });
    source.set('s', { metrics: '*', 'interval.ms': '30000' });
    const sub = manager.getTelemetrySubscriptions(ZERO_UUID, who({ connectionId: 1 }));
    const a = sub.clientInstanceId;
    expect(manager.pushTelemetry({ clientInstanceId: a, subscriptionId: sub.subscriptionId, terminating: false, compressionType: 0, metrics: Buffer.from('m') }, who()).errorCode).toBe(ErrorCode.NONE);
    expect(manager.instanceCount).toBe(1);
    time.sleep(89_999);
    expect(manager.lastPush(a)).toBeDefined();
    time.sleep(1);
    expect(manager.lastPush(a)).toBeUndefined();
    expect(manager.instanceCount).toBe(0);

    const b = manager.getTelemetrySubscriptions(ZERO_UUID, who({ connectionId: 7 })).clientInstanceId;
    expect(manager.instanceCount).toBe(1);
    manager.connectionClosed(7);
    expect(manager.instanceCount).toBe(0);
    void b;

    for (let i = 0; i < 5; i++) manager.getTelemetrySubscriptions(randomUuid(), who({ connectionId: 100 + i }));
    expect(manager.instanceCount).toBe(3);
    expect(logger.matching(/cache is full/)).toHaveLength(1);
  });

  test('the kept payloads are bounded together: the least recently used last pushes go first', () => {
    // A budget below one largest push is raised to it: 32 x 64 = 2048 bytes.
    const { manager, source, logger } = setup({ maxBytes: 64, maxRetainedBytes: 1 });
    source.set('s', { metrics: '*', 'interval.ms': '100' });
    const clients = [1, 2, 3].map((connectionId) => manager.getTelemetrySubscriptions(ZERO_UUID, who({ connectionId })));
    const push = (i: number) =>
      manager.pushTelemetry({ clientInstanceId: clients[i].clientInstanceId, subscriptionId: clients[i].subscriptionId, terminating: false, compressionType: 1, metrics: zlib.gzipSync(Buffer.alloc(1000)) }, who({ connectionId: i + 1 }));
    expect(push(0).errorCode).toBe(ErrorCode.NONE);
    expect(push(1).errorCode).toBe(ErrorCode.NONE);
    expect(manager.lastPushes()).toHaveLength(2);
    expect(logger.matching(/payloads reached/)).toEqual([]);
    expect(push(2).errorCode).toBe(ErrorCode.NONE);
    expect(manager.lastPush(clients[0].clientInstanceId)).toBeUndefined();
    expect(manager.lastPushes().map((p) => p.clientInstanceId).sort()).toEqual([clients[1].clientInstanceId, clients[2].clientInstanceId].sort());
    // The instance itself stays: only its payload went.
    expect(manager.instanceCount).toBe(3);
    expect(logger.matching(/payloads reached 2048 bytes/)).toHaveLength(1);
  });
});
