/**
 * Client telemetry (KIP-714) over the wire with krill's own client, for what no installable
 * client sends on purpose: client-metrics subscriptions set with IncrementalAlterConfigs and
 * AlterConfigs (CLIENT_METRICS resources) with Kafka's validation errors, read back with
 * DescribeConfigs and ListClientMetricsResources; GetTelemetrySubscriptions and PushTelemetry
 * with every error Kafka's ClientMetricsManager gives (throttling, unknown subscription id,
 * unsupported compression, too large, an undecodable payload, pushes after a terminating one),
 * and the broker keeping the last accepted payload, decompressed, with who sent it.
 */
import * as zlib from 'node:zlib';
import { startBroker, type RunningBroker } from '../../broker';
import { Logger } from '../../common/logger';
import { ErrorCode } from '../../protocol/errors';
import { ZERO_UUID } from '../../protocol/primitives/uuid';
import { connect, type BrokerConnection } from '../../client/network-client';

jest.setTimeout(30_000);

const CLIENT_METRICS = 16;
const SET = 0;
const DELETE = 1;
const APPEND = 2;

describe('client telemetry (KIP-714) against a krill broker', () => {
  let broker: RunningBroker;
  let conn: BrokerConnection;

  const alter = async (name: string, configs: { name: string; op: number; value: string | null }[], validateOnly = false) => {
    const res = await conn.send('IncrementalAlterConfigs', undefined, {
      resources: [{ resourceType: CLIENT_METRICS, resourceName: name, configs: configs.map((c) => ({ name: c.name, configOperation: c.op, value: c.value })) }],
      validateOnly,
    });
    return res.responses[0];
  };
  const describe_ = async (name: string) => {
    const res = await conn.send('DescribeConfigs', undefined, { resources: [{ resourceType: CLIENT_METRICS, resourceName: name, configurationKeys: null }], includeSynonyms: false, includeDocumentation: false });
    return res.results[0];
  };
  const list = async () => (await conn.send('ListClientMetricsResources', 0, {})).clientMetricsResources.map((r) => r.name).sort();

  beforeAll(async () => {
    broker = await startBroker({ logger: new Logger('krill', 'warn'), config: { 'telemetry.max.bytes': 1000 } });
    conn = await connect(broker.host, broker.port, { clientId: 'telemetry-wire' });
  });
  afterAll(async () => {
    await conn?.close();
    await broker?.close();
  });

  test('GetTelemetrySubscriptions (71), PushTelemetry (72) and ListClientMetricsResources (74) are advertised at v0', () => {
    expect(conn.apiVersions.get(71)).toEqual({ minVersion: 0, maxVersion: 0 });
    expect(conn.apiVersions.get(72)).toEqual({ minVersion: 0, maxVersion: 0 });
    expect(conn.apiVersions.get(74)).toEqual({ minVersion: 0, maxVersion: 0 });
  });

  test('subscriptions: set, described, listed, validated as Kafka does, replaced by AlterConfigs, deleted', async () => {
    expect(await alter('wire-sub', [{ name: 'metrics', op: SET, value: 'org.apache.kafka.producer.' }, { name: 'interval.ms', op: SET, value: '1000' }])).toMatchObject({ errorCode: ErrorCode.NONE });
    expect(await alter('wire-validate-only', [{ name: 'metrics', op: SET, value: '*' }], true)).toMatchObject({ errorCode: ErrorCode.NONE });
    expect(await list()).toEqual(['wire-sub']);
    const d = await describe_('wire-sub');
    expect(d.errorCode).toBe(ErrorCode.NONE);
    expect(d.configs.map((c) => [c.name, c.value, c.configSource, c.readOnly, c.isSensitive]).sort()).toEqual([
      ['interval.ms', '1000', 7, false, false],
      ['metrics', 'org.apache.kafka.producer.', 7, false, false],
    ]);
    for (let v = 0; v <= 4; v++) {
      const res = await conn.send('DescribeConfigs', v, { resources: [{ resourceType: CLIENT_METRICS, resourceName: 'wire-sub', configurationKeys: ['metrics'] }], includeSynonyms: v >= 1, includeDocumentation: v >= 3 });
      // Every stored key, whatever configuration_keys asks for (Kafka's ConfigHelper).
      expect(res.results[0].configs.map((c) => c.name).sort()).toEqual(['interval.ms', 'metrics']);
    }
    expect((await describe_('no-such-sub')).configs).toEqual([]);
    expect(await describe_('')).toMatchObject({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Client metrics subscription name must not be empty' });

    expect(await alter('wire-sub', [{ name: 'colour', op: SET, value: 'blue' }])).toMatchObject({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Unknown client metrics configuration: colour' });
    expect(await alter('wire-sub', [{ name: 'interval.ms', op: SET, value: '50' }])).toMatchObject({ errorCode: ErrorCode.INVALID_REQUEST });
    expect(await alter('wire-sub', [{ name: 'interval.ms', op: SET, value: 'often' }])).toMatchObject({ errorCode: ErrorCode.INVALID_CONFIG });
    expect(await alter('wire-sub', [{ name: 'match', op: SET, value: 'user=bob' }])).toMatchObject({ errorCode: ErrorCode.INVALID_CONFIG, errorMessage: 'Illegal client matching pattern: user=bob' });
    expect(await alter('wire-sub', [{ name: 'metrics', op: APPEND, value: 'x' }])).toMatchObject({ errorCode: ErrorCode.INVALID_CONFIG });
    expect(await alter('', [{ name: 'metrics', op: SET, value: '*' }])).toMatchObject({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: "Subscription name can't be empty" });

    const legacy = await conn.send('AlterConfigs', undefined, {
      resources: [{ resourceType: CLIENT_METRICS, resourceName: 'wire-legacy', configs: [{ name: 'metrics', value: '*' }, { name: 'match', value: 'client_id=nobody' }] }],
      validateOnly: false,
    });
    expect(legacy.responses[0]).toMatchObject({ errorCode: ErrorCode.NONE });
    expect(await list()).toEqual(['wire-legacy', 'wire-sub']);
    const replaced = await conn.send('AlterConfigs', undefined, { resources: [{ resourceType: CLIENT_METRICS, resourceName: 'wire-legacy', configs: [{ name: 'interval.ms', value: '2000' }] }], validateOnly: false });
    expect(replaced.responses[0].errorCode).toBe(ErrorCode.NONE);
    expect((await describe_('wire-legacy')).configs.map((c) => [c.name, c.value])).toEqual([['interval.ms', '2000']]);
    expect(await alter('wire-legacy', [{ name: 'interval.ms', op: DELETE, value: null }])).toMatchObject({ errorCode: ErrorCode.NONE });
    expect(await list()).toEqual(['wire-sub']);
  });

  test('a subscription reaches the client; pushes are validated as Kafka does and the last one is kept', async () => {
    expect(await alter('wire-push', [{ name: 'metrics', op: SET, value: '*' }, { name: 'interval.ms', op: SET, value: '100' }, { name: 'match', op: SET, value: 'client_id=telemetry-pusher,client_software_name=krill' }])).toMatchObject({ errorCode: 0 });
    const c = await connect(broker.host, broker.port, { clientId: 'telemetry-pusher' });
    try {
      const sub = await c.send('GetTelemetrySubscriptions', 0, { clientInstanceId: ZERO_UUID });
      expect(sub).toMatchObject({ errorCode: ErrorCode.NONE, requestedMetrics: ['*'], pushIntervalMs: 100, telemetryMaxBytes: 1000, deltaTemporality: true, acceptedCompressionTypes: [4, 3, 1, 2] });
      const id = sub.clientInstanceId;
      expect(id).not.toBe(ZERO_UUID);
      expect((await c.send('GetTelemetrySubscriptions', 0, { clientInstanceId: id })).errorCode).toBe(ErrorCode.THROTTLING_QUOTA_EXCEEDED);

      const payload = Buffer.from('an OTLP ExportMetricsServiceRequest, in a real client'.repeat(4));
      const push = (over: Partial<{ clientInstanceId: string; subscriptionId: number; terminating: boolean; compressionType: number; metrics: Buffer }>) =>
        c.send('PushTelemetry', 0, { clientInstanceId: id, subscriptionId: sub.subscriptionId, terminating: false, compressionType: 1, metrics: zlib.gzipSync(payload), ...over });
      expect((await push({ clientInstanceId: ZERO_UUID })).errorCode).toBe(ErrorCode.INVALID_REQUEST);
      expect((await push({})).errorCode).toBe(ErrorCode.NONE);
      const kept = broker.server.clientMetrics.lastPush(id)!;
      expect(kept).toMatchObject({ clientId: 'telemetry-pusher', clientSoftwareName: 'krill', clientSourceAddress: '127.0.0.1', subscriptionId: sub.subscriptionId, compressionType: 1 });
      expect(kept.payload.equals(payload)).toBe(true);
      // Right after an accepted push: too early.
      expect((await push({})).errorCode).toBe(ErrorCode.THROTTLING_QUOTA_EXCEEDED);
      // The other refusals come after the interval check (which each attempt resets), so each
      // waits out the 100 ms push interval: the passing of time is what is awaited here.
      const due = () => new Promise((r) => setTimeout(r, 110));
      await due();
      expect((await push({ subscriptionId: sub.subscriptionId ^ 1 })).errorCode).toBe(ErrorCode.UNKNOWN_SUBSCRIPTION_ID);
      await due();
      expect((await push({ compressionType: 6 })).errorCode).toBe(ErrorCode.UNSUPPORTED_COMPRESSION_TYPE);
      await due();
      expect((await push({ compressionType: 0, metrics: Buffer.alloc(1001) })).errorCode).toBe(ErrorCode.TELEMETRY_TOO_LARGE);
      await due();
      expect((await push({ compressionType: 4, metrics: Buffer.from('not zstd at all') })).errorCode).toBe(ErrorCode.INVALID_RECORD);
      expect(broker.server.clientMetrics.lastPush(id)!.payload.equals(payload)).toBe(true);
      // terminating: accepted at once, and nothing after it.
      expect((await push({ terminating: true, compressionType: 0, metrics: Buffer.from('final') })).errorCode).toBe(ErrorCode.NONE);
      expect(broker.server.clientMetrics.lastPush(id)).toMatchObject({ terminating: true });
      expect(broker.server.clientMetrics.lastPush(id)!.payload.toString()).toBe('final');
      await due();
      expect((await push({})).errorCode).toBe(ErrorCode.INVALID_REQUEST);
    } finally {
      await c.close();
    }
  });
});
