/**
 * Client-metrics subscriptions (KIP-714) in a 3-broker cluster with a separate controller: set
 * through one broker (forwarded to the controller as IncrementalAlterConfigs / AlterConfigs on
 * CLIENT_METRICS resources), stored as ConfigRecords in the metadata log and applied by every
 * broker from its image: each one lists and describes it and hands it to a client that asks for
 * telemetry; a refused change is refused with Kafka's error through any broker; a deletion reaches
 * every broker too.
 */
import { ErrorCode } from '../../protocol/errors';
import { ZERO_UUID } from '../../protocol/primitives/uuid';
import type { RunningCluster } from '../../broker/cluster';
import { connectTo, fastCluster, waitFor } from './helpers';

jest.setTimeout(60_000);

let cluster: RunningCluster;

beforeAll(async () => {
  cluster = await fastCluster();
});

afterAll(async () => {
  await cluster?.close();
});

async function onEachBroker<T>(fn: (conn: Awaited<ReturnType<typeof connectTo>>) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (const hostPort of cluster.bootstrapServers) {
    const conn = await connectTo(hostPort);
    try {
      out.push(await fn(conn));
    } finally {
      await conn.close();
    }
  }
  return out;
}

test('a subscription set through one broker is applied by every broker', async () => {
  const first = await connectTo(cluster.bootstrapServers[0]);
  try {
    const set = await first.send('IncrementalAlterConfigs', undefined, {
      resources: [{ resourceType: 16, resourceName: 'cluster-sub', configs: [{ name: 'metrics', configOperation: 0, value: 'org.apache.kafka.consumer.' }, { name: 'interval.ms', configOperation: 0, value: '2500' }] }],
      validateOnly: false,
    });
    expect(set.responses[0]).toMatchObject({ errorCode: ErrorCode.NONE });
    const bad = await first.send('AlterConfigs', undefined, { resources: [{ resourceType: 16, resourceName: 'cluster-sub', configs: [{ name: 'match', value: 'client_id=(' }] }], validateOnly: false });
    expect(bad.responses[0]).toMatchObject({ errorCode: ErrorCode.INVALID_CONFIG, errorMessage: 'Illegal client matching pattern: client_id=(' });
  } finally {
    await first.close();
  }
  await waitFor('every broker to apply the subscription', async () =>
    (await onEachBroker(async (c) => (await c.send('ListClientMetricsResources', 0, {})).clientMetricsResources.map((r) => r.name))).every((names) => names.join() === 'cluster-sub'),
  );
  const described = await onEachBroker(async (c) => {
    const res = await c.send('DescribeConfigs', undefined, { resources: [{ resourceType: 16, resourceName: 'cluster-sub', configurationKeys: null }], includeSynonyms: false, includeDocumentation: false });
    return res.results[0].configs.map((e) => `${e.name}=${e.value}`).sort();
  });
  expect(described).toEqual(Array(3).fill(['interval.ms=2500', 'metrics=org.apache.kafka.consumer.']));
  const subscriptions = await onEachBroker((c) => c.send('GetTelemetrySubscriptions', 0, { clientInstanceId: ZERO_UUID }));
  for (const s of subscriptions) expect(s).toMatchObject({ errorCode: ErrorCode.NONE, requestedMetrics: ['org.apache.kafka.consumer.'], pushIntervalMs: 2500 });

  const last = await connectTo(cluster.bootstrapServers[2]);
  try {
    const removed = await last.send('IncrementalAlterConfigs', undefined, {
      resources: [{ resourceType: 16, resourceName: 'cluster-sub', configs: [{ name: 'metrics', configOperation: 1, value: null }, { name: 'interval.ms', configOperation: 1, value: null }] }],
      validateOnly: false,
    });
    expect(removed.responses[0].errorCode).toBe(ErrorCode.NONE);
  } finally {
    await last.close();
  }
  await waitFor('every broker to drop the subscription', async () =>
    (await onEachBroker(async (c) => (await c.send('ListClientMetricsResources', 0, {})).clientMetricsResources.length)).every((n) => n === 0),
  );
});
