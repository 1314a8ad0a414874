/**
 * Authorization on the controller listener (Kafka's ControllerApis) through the controller node's
 * real dispatcher, with a scripted authorizer: the broker-to-controller requests (BrokerRegistration,
 * BrokerHeartbeat, AlterPartition, AllocateProducerIds, Fetch of __cluster_metadata) need
 * CLUSTER_ACTION on the cluster, the admin requests the operations a broker checks, DescribeCluster
 * ALTER on the cluster; each denial with Kafka's error response at every advertised version.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { ControllerServer } from '../controller-server';
import { ErrorCode } from '../../../protocol/errors';
import { METADATA_TOPIC_ID, ZERO_UUID } from '../../../protocol/primitives/uuid';
import { AclOperation, ResourceType } from '../../../metadata/authorizer/authorizer';
import { CLUSTER_NAME, scriptedAuthorization } from '../../testing/scripted-authorization';
import { brokerHeartbeat, brokerRegistration, controllerVersions as versions, startTestController } from '../../testing/controller-node';
import { AUTHORIZED_OPERATIONS_OMITTED, to32BitField } from '../../security/authorize';

const { CREATE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS } = AclOperation;
const { TOPIC, CLUSTER } = ResourceType;
const { NONE, TOPIC_AUTHORIZATION_FAILED: TAF, CLUSTER_AUTHORIZATION_FAILED: CAF } = ErrorCode;

let controller: ControllerServer;
let dir: string;
const { authz, call, allowingEverything } = scriptedAuthorization(() => controller, 'controller-authz-test', 'CONTROLLER');
beforeEach(() => authz.reset());

const registration = (brokerId: number) => brokerRegistration(controller, brokerId, 9100 + brokerId);

let brokerEpoch = -1n;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'krill-ctl-authz-'));
  controller = await startTestController(dir, { props: { 'broker.session.timeout.ms': '60000' }, authorizer: authz });
  // One registered, unfenced broker and a topic on it.
  await allowingEverything(async () => {
    const reg = await call(62, 4, registration(1));
    expect(reg.errorCode).toBe(NONE);
    brokerEpoch = reg.brokerEpoch;
    const hb = await call(63, 1, brokerHeartbeat(controller, 1, brokerEpoch));
    expect(hb.isFenced).toBe(false);
    const created = await call(19, 7, { topics: ['ct-open', 'ct-secret'].map((name) => ({ name, numPartitions: 1, replicationFactor: 1 })), timeoutMs: 1000 });
    expect(created.topics.map((t: any) => t.errorCode)).toEqual([NONE, NONE]);
  });
});

afterAll(async () => {
  await controller?.shutdown();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('broker-to-controller requests need CLUSTER_ACTION on the cluster', () => {
  test('BrokerRegistration and BrokerHeartbeat', async () => {
    for (const v of versions(62)) {
      expect(await call(62, v, registration(2))).toMatchObject({ errorCode: CAF, brokerEpoch: -1n });
    }
    expect(controller.controller.image.broker(2)).toBeUndefined();
    for (const v of versions(63)) {
      const hb = await call(63, v, brokerHeartbeat(controller, 1, brokerEpoch, 0n));
      expect(hb).toMatchObject({ errorCode: CAF, isCaughtUp: false, isFenced: true, shouldShutDown: false });
    }
    authz.clearAsked();
    authz.allow(CLUSTER_ACTION, CLUSTER, CLUSTER_NAME);
    const hb = await call(63, 1, brokerHeartbeat(controller, 1, brokerEpoch));
    expect(hb).toMatchObject({ errorCode: NONE, isFenced: false });
    expect(authz.askedLines()).toEqual(['CLUSTER_ACTION CLUSTER kafka-cluster']);
  });

  test('AlterPartition and AllocateProducerIds', async () => {
    for (const v of versions(56)) {
      const res = await call(56, v, { brokerId: 1, brokerEpoch, topics: [] });
      expect(res).toMatchObject({ errorCode: CAF, topics: [] });
    }
    for (const v of versions(67)) {
      const res = await call(67, v, { brokerId: 1, brokerEpoch });
      expect(res).toMatchObject({ errorCode: CAF, producerIdStart: 0n, producerIdLen: 0 });
    }
    authz.allow(CLUSTER_ACTION, CLUSTER, CLUSTER_NAME);
    const ok = await call(67, 0, { brokerId: 1, brokerEpoch });
    expect(ok).toMatchObject({ errorCode: NONE, producerIdLen: 1000 });
  });

  test('Fetch of the metadata log', async () => {
    for (const v of versions(1)) {
      const res = await call(1, v, {
        replicaId: v >= 15 ? undefined : 1,
        replicaState: v >= 15 ? { replicaId: 1, replicaEpoch: brokerEpoch } : undefined,
        maxWaitMs: 0,
        minBytes: 0,
        maxBytes: 1 << 20,
        isolationLevel: 0,
        sessionId: 0,
        sessionEpoch: -1,
        topics: [{ topic: '__cluster_metadata', topicId: v >= 13 ? METADATA_TOPIC_ID : ZERO_UUID, partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1 << 20, logStartOffset: -1n }] }],
      });
      // The top-level error_code exists from v7.
      expect(res.errorCode).toBe(v >= 7 ? CAF : NONE);
      if (v >= 13) expect(res.responses).toEqual([]);
      else expect(res.responses[0].partitions.map((p: any) => [p.partitionIndex, p.errorCode, p.records.length])).toEqual([[0, CAF, 0]]);
    }
    authz.allow(CLUSTER_ACTION, CLUSTER, CLUSTER_NAME);
    const ok = await call(1, 12, {
      replicaId: 1,
      maxWaitMs: 0,
      minBytes: 0,
      maxBytes: 1 << 20,
      isolationLevel: 0,
      sessionId: 0,
      sessionEpoch: -1,
      topics: [{ topic: '__cluster_metadata', partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1 << 20, logStartOffset: -1n }] }],
    });
    expect(ok.errorCode).toBe(NONE);
    expect(ok.responses[0].partitions[0].records.length).toBeGreaterThan(0);
  });
});

describe('admin requests check what a broker checks', () => {
  test('CreateTopics: CREATE on the cluster or topic; configs with DESCRIBE_CONFIGS', async () => {
    authz.allow(CREATE, TOPIC, 'ctl-ok');
    for (const v of versions(19)) {
      const res = await call(19, v, {
        topics: [
          { name: 'ctl-denied', numPartitions: 1, replicationFactor: 1 },
          { name: 'ctl-ok', numPartitions: 1, replicationFactor: 1 },
        ],
        timeoutMs: 1000,
        validateOnly: true,
      });
      expect(res.topics.map((t: any) => [t.name, t.errorCode, t.errorMessage])).toEqual([
        ['ctl-denied', TAF, 'Authorization failed.'],
        ['ctl-ok', NONE, null],
      ]);
      if (v >= 5) expect(res.topics[1]).toMatchObject({ numPartitions: -1, replicationFactor: -1, topicConfigErrorCode: TAF });
    }
    authz.allow(DESCRIBE_CONFIGS, TOPIC, 'ctl-ok');
    const visible = await call(19, 7, { topics: [{ name: 'ctl-ok', numPartitions: 1, replicationFactor: 1 }], timeoutMs: 1000, validateOnly: true });
    expect(visible.topics[0]).toMatchObject({ numPartitions: 1, replicationFactor: 1, topicConfigErrorCode: NONE });
  });

  test('DeleteTopics: DESCRIBE and DELETE on the topic, or DELETE on the cluster', async () => {
    const secretId = controller.controller.image.topic('ct-secret')!.topicId;
    for (const v of versions(20)) {
      const res = await call(20, v, v >= 6 ? { topics: [{ name: 'ct-secret', topicId: ZERO_UUID }, { name: null, topicId: secretId }], timeoutMs: 1000 } : { topicNames: ['ct-secret'], timeoutMs: 1000 });
      // Neither describable nor deletable: by name TOPIC_AUTHORIZATION_FAILED, by id the same without the name.
      expect(res.responses.map((r: any) => [r.name, r.errorCode])).toEqual(v >= 6 ? [['ct-secret', TAF], [null, TAF]] : [['ct-secret', TAF]]);
      if (v >= 6) {
        const byId = await call(20, v, { topics: [{ name: null, topicId: secretId }], timeoutMs: 1000 });
        expect(byId.responses.map((r: any) => [r.name, r.topicId, r.errorCode])).toEqual([[null, secretId, TAF]]);
      }
    }
    expect(controller.controller.image.topic('ct-secret')).toBeDefined();
    authz.allow(AclOperation.DELETE, CLUSTER, CLUSTER_NAME);
    const ok = await call(20, 6, { topics: [{ name: 'ct-secret', topicId: ZERO_UUID }], timeoutMs: 1000 });
    expect(ok.responses[0]).toMatchObject({ name: 'ct-secret', errorCode: NONE });
  });

  test('CreatePartitions: ALTER on the topic', async () => {
    for (const v of versions(37)) {
      const res = await call(37, v, { topics: [{ name: 'ct-open', count: 4, assignments: null }], timeoutMs: 1000, validateOnly: true });
      expect(res.results).toEqual([{ name: 'ct-open', errorCode: TAF, errorMessage: null }]);
    }
    authz.allow(ALTER, TOPIC, 'ct-open');
    const ok = await call(37, 3, { topics: [{ name: 'ct-open', count: 4, assignments: null }], timeoutMs: 1000, validateOnly: true });
    expect(ok.results[0].errorCode).toBe(NONE);
  });

  test('AlterConfigs and IncrementalAlterConfigs: ALTER_CONFIGS; broker loggers need CLUSTER_ACTION here', async () => {
    for (const v of versions(33)) {
      const res = await call(33, v, {
        resources: [
          { resourceType: 2, resourceName: 'ct-open', configs: [{ name: 'retention.ms', value: '1000' }] },
          { resourceType: 4, resourceName: '', configs: [{ name: 'log.retention.hours', value: '1' }] },
        ],
        validateOnly: true,
      });
      expect(res.responses.map((r: any) => [r.resourceName, r.errorCode, r.errorMessage])).toEqual([
        ['ct-open', TAF, 'Topic authorization failed.'],
        ['', CAF, 'Cluster authorization failed.'],
      ]);
    }
    for (const v of versions(44)) {
      const res = await call(44, v, {
        resources: [
          { resourceType: 2, resourceName: 'ct-open', configs: [{ name: 'retention.ms', configOperation: 0, value: '1000' }] },
          { resourceType: 8, resourceName: '3000', configs: [{ name: 'root', configOperation: 0, value: 'DEBUG' }] },
        ],
        validateOnly: true,
      });
      expect(res.responses.map((r: any) => [r.resourceName, r.errorCode, r.errorMessage])).toEqual([
        ['ct-open', TAF, 'Topic authorization failed.'],
        ['3000', CAF, 'Cluster authorization failed.'],
      ]);
    }
    expect(authz.askedLines()).toContain('CLUSTER_ACTION CLUSTER kafka-cluster');
    authz.allow(ALTER_CONFIGS, TOPIC, 'ct-open');
    const ok = await call(44, 1, { resources: [{ resourceType: 2, resourceName: 'ct-open', configs: [{ name: 'retention.ms', configOperation: 0, value: '1000' }] }], validateOnly: true });
    expect(ok.responses[0].errorCode).toBe(NONE);
  });

  test('ElectLeaders: ALTER on the cluster', async () => {
    for (const v of versions(43)) {
      const res = await call(43, v, { electionType: 0, topicPartitions: [{ topic: 'ct-open', partitions: [0] }], timeoutMs: 1000 });
      if (v >= 1) expect(res.errorCode).toBe(CAF);
      expect(res.replicaElectionResults[0].partitionResult[0]).toMatchObject({ partitionId: 0, errorCode: CAF });
    }
    authz.allow(ALTER, CLUSTER, CLUSTER_NAME);
    const ok = await call(43, 2, { electionType: 0, topicPartitions: [{ topic: 'ct-open', partitions: [0] }], timeoutMs: 1000 });
    expect(ok.errorCode).toBe(NONE);
  });

  test('AlterClientQuotas: ALTER_CONFIGS on the cluster', async () => {
    const entity = [{ entityType: 'client-id', entityName: 'c1' }];
    for (const v of versions(49)) {
      const res = await call(49, v, { entries: [{ entity, ops: [{ key: 'request_percentage', value: 10, remove: false }] }], validateOnly: true });
      expect(res.entries).toEqual([{ errorCode: CAF, errorMessage: 'Cluster authorization failed.', entity }]);
    }
    authz.allow(ALTER_CONFIGS, CLUSTER, CLUSTER_NAME);
    const ok = await call(49, 1, { entries: [{ entity, ops: [{ key: 'request_percentage', value: 10, remove: false }] }], validateOnly: true });
    expect(ok.entries[0].errorCode).toBe(NONE);
  });

  test('DescribeCluster on a controller needs ALTER on the cluster; ApiVersions needs nothing', async () => {
    for (const v of versions(60)) {
      const res = await call(60, v, { includeClusterAuthorizedOperations: true, endpointType: 2 });
      expect(res).toMatchObject({ errorCode: CAF, clusterId: '', brokers: [] });
      expect(res.errorMessage).toMatch(/is not authorized\.$/);
    }
    authz.allow(ALTER, CLUSTER, CLUSTER_NAME);
    const noDescribe = await call(60, 1, { includeClusterAuthorizedOperations: true, endpointType: 2 });
    expect(noDescribe).toMatchObject({ errorCode: NONE, clusterId: controller.clusterId, clusterAuthorizedOperations: 0 });
    authz.allow(DESCRIBE, CLUSTER, CLUSTER_NAME);
    const ops = await call(60, 1, { includeClusterAuthorizedOperations: true, endpointType: 2 });
    expect(ops.clusterAuthorizedOperations).toBe(to32BitField([ALTER, DESCRIBE]));
    expect((await call(60, 1, { includeClusterAuthorizedOperations: false, endpointType: 2 })).clusterAuthorizedOperations).toBe(AUTHORIZED_OPERATIONS_OMITTED);
    authz.reset();
    for (const v of versions(18)) expect((await call(18, v, { clientSoftwareName: 'krill-test', clientSoftwareVersion: '1.0' })).errorCode).toBe(NONE);
    expect(authz.asked).toEqual([]);
  });
});
