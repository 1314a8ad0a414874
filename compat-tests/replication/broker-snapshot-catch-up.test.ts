/**
 * A broker that was down while the controller quorum snapshotted its image and trimmed the metadata
 * log below the snapshot catches up from the snapshot: its fetch at offset 0 is answered with a
 * SnapshotId, it downloads the snapshot with FetchSnapshot (metadata/metadata-observer.ts) and
 * applies it, then the log after it. Afterwards it has exactly the live brokers' topics (the ones
 * deleted meanwhile are gone, its stray log of one of them is removed), leads partitions and serves
 * them. Three controllers (startCluster({ controllers: 3 })) with a tiny
 * metadata.log.max.record.bytes.between.snapshots, metadata.max.retention.bytes=0 and small
 * metadata segments; waits are bounded polls.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { startCluster, type RunningCluster } from '../../broker/cluster';
import { connectTo, createTopic, partitionsOf, waitFor } from './helpers';

jest.setTimeout(60_000);

const CONFIG = {
  'controller.quorum.election.timeout.ms': '300',
  'controller.quorum.fetch.timeout.ms': '800',
  'controller.quorum.election.backoff.max.ms': '300',
  'controller.quorum.request.timeout.ms': '1000',
  'broker.heartbeat.interval.ms': '100',
  'broker.session.timeout.ms': '2000',
  'offsets.topic.num.partitions': '1',
  'metadata.log.max.record.bytes.between.snapshots': '2048',
  'metadata.max.retention.bytes': '0',
  'metadata.log.segment.bytes': String(16 * 1024),
};

let cluster: RunningCluster | undefined;
afterAll(async () => {
  await cluster?.close();
});

const topicNames = (c: RunningCluster, id: number) => [...c.brokers.get(id)!.server.metadata.topics()].map((t) => t.name).filter((n) => !n.startsWith('__')).sort();

async function deleteTopic(c: RunningCluster, name: string): Promise<void> {
  const conn = await connectTo(c.bootstrapServers[0]);
  try {
    const res = await conn.send('DeleteTopics', undefined, { topicNames: [name], topics: [{ name, topicId: undefined }], timeoutMs: 10_000 } as never);
    const r = (res as { responses: { errorCode: number }[] }).responses[0];
    if (r.errorCode !== 0) throw new Error(`DeleteTopics ${name}: error ${r.errorCode}`);
  } finally {
    await conn.close();
  }
}

test('a broker behind the metadata log start catches up from the quorum leader\'s snapshot', async () => {
  const c = (cluster = await startCluster({ brokers: 2, controllers: 3, config: CONFIG, logLevel: 'error' }));
  await createTopic(c, 'doomed', 1, 2);
  await createTopic(c, 'kept', 1, 2);
  await waitFor('doomed on broker 1', () => c.brokers.get(1)!.server.metadata.topic('doomed') !== undefined, 10_000, 10);
  const doomedDir = (await waitFor('doomed log on broker 1', () => {
    const dirs = c.brokers.get(1)!.server.config.logDirs();
    for (const d of dirs) if (fs.existsSync(path.join(d, 'doomed-0'))) return path.join(d, 'doomed-0');
    return null;
  }, 10_000, 10));

  await c.killBroker(1);
  // Enough metadata changes for several snapshots and a trimmed log: creates, deletes, configs.
  for (let i = 0; i < 30; i++) await createTopic(c, `t${i}`, 1, 1, { 'retention.ms': String(60_000 + i) });
  for (let i = 0; i < 30; i += 3) await deleteTopic(c, `t${i}`);
  await deleteTopic(c, 'doomed');
  await createTopic(c, 'last', 2, 1);

  const active = await waitFor('an active controller', () => c.activeController(), 10_000, 10);
  const metaDir = path.join(c.dataDir, `controller-${active.nodeId}`, '__cluster_metadata-0');
  await waitFor('the metadata log trimmed below a snapshot', () => {
    const files = fs.readdirSync(metaDir);
    return files.some((f) => f.endsWith('.checkpoint')) && !files.includes('00000000000000000000.log');
  }, 20_000, 20);

  const b1 = await c.startBroker(1);
  const observer = b1.server.clusterLink!.observer!;
  expect(observer.snapshotsLoaded).toBeGreaterThanOrEqual(1);
  const expected = topicNames(c, 0);
  expect(expected).toContain('last');
  expect(expected).not.toContain('doomed');
  await waitFor('broker 1 has the same topics as broker 0', () => JSON.stringify(topicNames(c, 1)) === JSON.stringify(topicNames(c, 0)), 10_000, 10);
  expect(b1.server.metadata.topicConfig('t1').get('retention.ms')).toBe('60001');
  // The stray log of the topic deleted while it was down is gone.
  await waitFor('the stray doomed-0 log removed', () => !fs.existsSync(doomedDir), 10_000, 20);
  // It takes part again: back in the ISR of `kept` (replication factor 2, created before it went down).
  await waitFor('broker 1 in the ISR of kept', async () => (await partitionsOf(c.bootstrapServers[0], 'kept')).every((p) => p.isr.includes(1)), 15_000, 50);
});
