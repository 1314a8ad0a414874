/**
 * Every controller-listener handler at every version it advertises, through the controller's real
 * dispatcher: requests encoded with the generated codecs, responses that must encode at the
 * request's version and decode with the expected results.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { ControllerServer } from '../controller-server';
import { ErrorCode } from '../../../protocol/errors';
import { decodeMetadataBatches } from '../../../metadata/metadata-log-store';
import { DispatchClient } from '../../testing/dispatch-client';
import { brokerHeartbeat, brokerRegistration, controllerVersions as versions, startTestController } from '../../testing/controller-node';
import { CONTROLLER_HANDLERS } from './';
import { METADATA_TOPIC_ID } from '../../../protocol/primitives/uuid';

let controller: ControllerServer;
let dir: string;

const client = new DispatchClient(() => controller, 'controller-handlers-test', 'CONTROLLER');
const call = (apiKey: number, version: number, body: object): Promise<any> => client.call(apiKey, version, body);

const epochs = new Map<number, bigint>();

/** Registers broker `id` at a given BrokerRegistration version and unfences it. */
async function registerAndUnfence(id: number, regVersion: number, hbVersion: number): Promise<void> {
  const reg = await call(62, regVersion, brokerRegistration(controller, id, 9000 + id));
  expect(reg.errorCode).toBe(ErrorCode.NONE);
  epochs.set(id, reg.brokerEpoch);
  const hb = await call(63, hbVersion, brokerHeartbeat(controller, id, reg.brokerEpoch));
  expect(hb).toMatchObject({ errorCode: 0, isFenced: false, isCaughtUp: true, shouldShutDown: false });
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'krill-ctl-'));
  controller = await startTestController(dir, { props: { 'broker.session.timeout.ms': '60000' } });
});

afterAll(async () => {
  await controller?.shutdown();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('controller handlers at every advertised version', () => {
  test('ApiVersions lists the controller API set', async () => {
    for (const v of versions(18)) {
      const res = await call(18, v, { clientSoftwareName: 'krill-test', clientSoftwareVersion: '1.0' });
      expect(res.errorCode).toBe(ErrorCode.NONE);
      expect(res.apiKeys.map((k: any) => k.apiKey).sort((a: number, b: number) => a - b)).toEqual(CONTROLLER_HANDLERS.map((h) => h.apiKey).sort((a, b) => a - b));
    }
  });

  test('DescribeCluster names the controller and the cluster id; broker endpoints are MISMATCHED_ENDPOINT_TYPE', async () => {
    const ok = await call(60, 1, { includeClusterAuthorizedOperations: false, endpointType: 2 });
    expect(ok).toMatchObject({ errorCode: 0, clusterId: controller.clusterId, controllerId: 3000, endpointType: 2 });
    expect(ok.brokers[0].port).toBe(controller.endpoint.port);
    expect((await call(60, 1, { includeClusterAuthorizedOperations: false, endpointType: 1 })).errorCode).toBe(ErrorCode.MISMATCHED_ENDPOINT_TYPE);
  });

  test('BrokerRegistration and BrokerHeartbeat at every version', async () => {
    let id = 0;
    for (const v of versions(62)) await registerAndUnfence(id++, v, versions(63)[id % versions(63).length]);
    for (const v of versions(63)) {
      const hb = await call(63, v, brokerHeartbeat(controller, 0, epochs.get(0)!));
      expect(hb.errorCode).toBe(0);
      expect((await call(63, v, { brokerId: 0, brokerEpoch: 999n, currentMetadataOffset: 0n, wantFence: false, wantShutDown: false })).errorCode).toBe(ErrorCode.STALE_BROKER_EPOCH);
      expect((await call(63, v, { brokerId: 77, brokerEpoch: 1n, currentMetadataOffset: 0n, wantFence: false, wantShutDown: false })).errorCode).toBe(ErrorCode.BROKER_ID_NOT_REGISTERED);
    }
    for (const v of versions(62)) {
      const other = await call(62, v, { brokerId: 40, clusterId: 'another-cluster-id-xxx', incarnationId: 'AAAAAAAAAAAAAAAAAAAAAQ', listeners: [], features: [], rack: null });
      expect(other.errorCode).toBe(ErrorCode.INCONSISTENT_CLUSTER_ID);
      // Broker 0 is alive: a new incarnation is refused.
      const dup = await call(62, v, { brokerId: 0, clusterId: controller.clusterId, incarnationId: 'BBBBBBBBBBBBBBBBBBBBBQ', listeners: [], features: [], rack: null });
      expect(dup.errorCode).toBe(ErrorCode.DUPLICATE_BROKER_REGISTRATION);
      // A broker that cannot run at the finalized levels is refused (no metadata.version range = level 1 only).
      const old = await call(62, v, { ...brokerRegistration(controller, 41, 1), features: [] });
      expect(old.errorCode).toBe(ErrorCode.UNSUPPORTED_VERSION);
      const noTv = await call(62, v, { ...brokerRegistration(controller, 42, 1), features: [{ name: 'metadata.version', minSupportedVersion: 25, maxSupportedVersion: 25 }] });
      expect(noTv.errorCode).toBe(ErrorCode.UNSUPPORTED_VERSION);
    }
    expect(controller.controller.image.broker(41)).toBeUndefined();
    expect(controller.controller.image.broker(0)?.supportedFeatures.get('metadata.version')).toEqual({ min: 25, max: 25 });
  });

  test('CreateTopics, CreatePartitions, AlterConfigs, IncrementalAlterConfigs, DeleteTopics', async () => {
    for (const v of versions(19)) {
      const res = await call(19, v, { topics: [{ name: `ct-${v}`, numPartitions: 2, replicationFactor: 3, assignments: [], configs: [{ name: 'retention.ms', value: '1000' }] }], timeoutMs: 1000, validateOnly: false });
      expect(res.topics[0]).toMatchObject({ name: `ct-${v}`, errorCode: 0 });
      if (v >= 5) expect(res.topics[0]).toMatchObject({ numPartitions: 2, replicationFactor: 3 });
      const dup = await call(19, v, { topics: [{ name: `ct-${v}`, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 1000, validateOnly: false });
      expect(dup.topics[0].errorCode).toBe(ErrorCode.TOPIC_ALREADY_EXISTS);
    }
    for (const v of versions(37)) {
      const res = await call(37, v, { topics: [{ name: 'ct-7', count: 3 + v, assignments: null }], timeoutMs: 1000, validateOnly: false });
      expect(res.results[0].errorCode).toBe(0);
    }
    expect(controller.controller.image.topic('ct-7')!.partitions.size).toBe(3 + versions(37).at(-1)!);
    for (const v of versions(33)) {
      const res = await call(33, v, { resources: [{ resourceType: 2, resourceName: 'ct-7', configs: [{ name: 'retention.ms', value: String(2000 + v) }] }, { resourceType: 4, resourceName: 'x', configs: [] }], validateOnly: false });
      expect(res.responses.map((r: any) => [r.errorCode, r.errorMessage])).toEqual([[0, null], [ErrorCode.INVALID_REQUEST, 'Unable to parse broker name as a base 10 number.']]);
    }
    for (const v of versions(44)) {
      const res = await call(44, v, { resources: [{ resourceType: 2, resourceName: 'ct-7', configs: [{ name: 'cleanup.policy', configOperation: 0, value: 'compact' }] }], validateOnly: false });
      expect(res.responses[0].errorCode).toBe(0);
    }
    expect(controller.controller.image.topicConfig('ct-7').get('cleanup.policy')).toBe('compact');
    for (const v of versions(20)) {
      const name = `ct-${v + 1}`; // CreateTopics made ct-2..ct-7
      const res = await call(20, v, v >= 6 ? { topics: [{ name, topicId: 'AAAAAAAAAAAAAAAAAAAAAA' }], timeoutMs: 1000 } : { topicNames: [name], timeoutMs: 1000 });
      expect(res.responses[0].errorCode).toBe(0);
    }
  });

  test('AlterPartition: a valid change commits with a new partition epoch; a stale one is rejected', async () => {
    const t = 'ap';
    await call(19, 7, { topics: [{ name: t, numPartitions: 1, replicationFactor: 3, assignments: [], configs: [] }], timeoutMs: 1000, validateOnly: false });
    for (const v of versions(56)) {
      const p = controller.controller.image.partition(t, 0)!;
      const isr = p.isr.length === 3 ? p.isr.filter((r) => r !== p.replicas[2]) : p.replicas;
      const body = (partitionEpoch: number) => ({
        brokerId: p.leader,
        brokerEpoch: epochs.get(p.leader)!,
        topics: [
          {
            topicName: v < 2 ? t : undefined,
            topicId: v >= 2 ? p.topicId : undefined,
            partitions: [
              {
                partitionIndex: 0,
                leaderEpoch: p.leaderEpoch,
                partitionEpoch,
                newIsr: v < 3 ? isr : undefined,
                newIsrWithEpochs: v >= 3 ? isr.map((b) => ({ brokerId: b, brokerEpoch: epochs.get(b)! })) : undefined,
              },
            ],
          },
        ],
      });
      const ok = await call(56, v, body(p.partitionEpoch));
      expect(ok.errorCode).toBe(0);
      expect(ok.topics[0].partitions[0]).toMatchObject({ errorCode: 0, leaderId: p.leader, leaderEpoch: p.leaderEpoch, isr, partitionEpoch: p.partitionEpoch + 1 });
      const stale = await call(56, v, body(p.partitionEpoch));
      expect(stale.topics[0].partitions[0].errorCode).toBe(ErrorCode.INVALID_UPDATE_VERSION);
    }
  });

  test('ElectLeaders and AllocateProducerIds', async () => {
    for (const v of versions(43)) {
      const res = await call(43, v, { electionType: 0, topicPartitions: [{ topic: 'ap', partitions: [0, 5] }], timeoutMs: 1000 });
      expect(res.replicaElectionResults[0].partitionResult.map((r: any) => r.errorCode)).toEqual([ErrorCode.ELECTION_NOT_NEEDED, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]);
    }
    for (const v of versions(67)) {
      const a = await call(67, v, { brokerId: 0, brokerEpoch: epochs.get(0)! });
      const b = await call(67, v, { brokerId: 0, brokerEpoch: epochs.get(0)! });
      expect(a.errorCode).toBe(0);
      expect(b.producerIdStart).toBe(a.producerIdStart + BigInt(a.producerIdLen));
      expect((await call(67, v, { brokerId: 0, brokerEpoch: 12345n })).errorCode).toBe(ErrorCode.STALE_BROKER_EPOCH);
    }
  });

  test('Fetch serves the metadata log to brokers at every version, from any offset, with the log end as HWM', async () => {
    const end = controller.metadataLog.logEndOffset;
    for (const v of versions(1)) {
      const res = await call(1, v, {
        replicaId: v < 15 ? 0 : undefined,
        replicaState: v >= 15 ? { replicaId: 0, replicaEpoch: -1n } : undefined,
        maxWaitMs: 0,
        minBytes: 1,
        maxBytes: 1 << 20,
        isolationLevel: 0,
        sessionId: 0,
        sessionEpoch: -1,
        topics: [
          {
            topic: v < 13 ? '__cluster_metadata' : undefined,
            topicId: v >= 13 ? METADATA_TOPIC_ID : undefined,
            partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: 3n, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1 << 20 }],
          },
        ],
      });
      const p = res.responses[0].partitions[0];
      expect(p).toMatchObject({ errorCode: 0, highWatermark: end });
      const batches = decodeMetadataBatches(p.records);
      expect(batches.length).toBeGreaterThan(0);
      expect(batches.at(-1)!.lastOffset).toBe(end - 1n);
      expect(batches.flatMap((b) => b.records).some((r) => r.type === 'TopicRecord')).toBe(true);
    }
    const other = await call(1, 12, { replicaId: 0, maxWaitMs: 0, minBytes: 1, maxBytes: 1000, sessionId: 0, sessionEpoch: -1, topics: [{ topic: 'nope', partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 100 }] }] });
    expect(other.responses[0].partitions[0].errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    const past = await call(1, 12, { replicaId: 0, maxWaitMs: 0, minBytes: 1, maxBytes: 1000, sessionId: 0, sessionEpoch: -1, topics: [{ topic: '__cluster_metadata', partitions: [{ partition: 0, fetchOffset: end + 5n, partitionMaxBytes: 100 }] }] });
    expect(past.responses[0].partitions[0].errorCode).toBe(ErrorCode.OFFSET_OUT_OF_RANGE);
    // At the end: a long poll that a commit wakes.
    const waiting = call(1, 12, { replicaId: 0, maxWaitMs: 5000, minBytes: 1, maxBytes: 1 << 20, sessionId: 0, sessionEpoch: -1, topics: [{ topic: '__cluster_metadata', partitions: [{ partition: 0, fetchOffset: end, partitionMaxBytes: 1 << 20 }] }] });
    const t0 = Date.now();
    await call(19, 7, { topics: [{ name: 'wakes', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 1000, validateOnly: false });
    const woke = await waiting;
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(woke.responses[0].partitions[0].highWatermark).toBeGreaterThan(end);
  });
});
